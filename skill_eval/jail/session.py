"""One agent attempt's jail: a command held in a jail by `holder.py`, its workspace a
size-capped tmpfs inside, seeded before the command starts and copied out after everything
the command started is dead.

    with JailedCommand("bubblewrap", limits) as jail:
        argv, env = build(jail.workspace, jail.home)     # paths as the command sees them
        jail.start(argv, env)
        jail.seed(host_workspace)                        # the task files, the skill
        ended = jail.run(prompt, timeout, on_line)       # stdout lines as they come
        copied = jail.collect(host_workspace, caps)      # bounded; links never followed

With kind `none` (the user's --no-jail) the same steps run the command as it is, in host
temporary folders, so the executor has one path. The command's stdout is a socket: nothing
in the jail can reopen it through /proc and write into the stream the harness reads. The
jail's files are reached through the channel its provider's launch gives
(workspace_channel.py): /proc for a jail on this machine, a stream for one on another.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

from . import Confinement, JailKind, Limits, Mount, teardown
from .api_proxy import FORWARD_PORT, Forward
from .capping import Capping
from .cgroup import Cgroup
from .copyout import Caps, Copied
from .ended import Ended as Ended
from .ended import JailBroken as JailBroken
from .ended import ended_as, launcher_said
from .pipes import ANSWER, Read, Tail, close_fd, feed, read_lines, relay_api
from .process import preexec_for
from .providers import JailProvider, Launch, resolve
from .workspace_channel import LocalRoot, WorkspaceChannel

# This package's folder, read-only in the jail: holder.py, confine.py, agent_shell.sh
JAIL_FILES = Path(__file__).resolve().parent
RUN_DIR = "/run/skill-eval"
WORKSPACE, HOME = "/workspace", "/home/agent"
GRACE = 5.0  # seconds the holder gets to kill the rest and answer before the jail is killed

_live_lock = threading.Lock()
_live: set[JailedCommand] = set()


def cancel_all() -> None:
    """Kill every jail of this process (and what runs in it) and, without a jail, delete the
    host folders at once (a HOME may hold a login; os._exit may follow): Ctrl-C, SIGTERM."""
    with _live_lock:
        jails = list(_live)
    for jail in jails:
        jail._kill()
        if jail._host_dirs is not None:
            shutil.rmtree(jail._host_dirs, ignore_errors=True)


@dataclass
class _Pipes:
    """The harness's ends. stdin_w and stderr_r pass to a feeding or reading thread when the
    command starts (-1 from then on: that thread closes them, nobody else may)."""

    control: socket.socket
    stdin_w: int
    stream: socket.socket
    stderr_r: int
    inside: list[int] = field(default_factory=list)  # the jail's ends, closed once started
    api: socket.socket | None = None  # connections to the model API arrive here


class JailedCommand:
    """A command in a jail of its own, with a workspace and a HOME that only it can write."""

    def __init__(
        self,
        kind: JailKind,
        limits: Limits,
        *,
        mounts: Sequence[Mount] = (),
        forward: Forward | None = None,
        confine: bool = False,
    ) -> None:
        """`mounts`: more read-only host paths the command needs (its binary); `forward`: the
        model API, served inside the jail (which has no network) on 127.0.0.1:FORWARD_PORT;
        `confine`: the command runs in a Landlock domain of its own (holder.py), away from
        the holder, with no TCP but to the forward."""
        self.kind, self.limits, self.mounts, self.forward = kind, limits, tuple(mounts), forward
        self.provider: JailProvider = resolve(kind)
        self.confine = confine
        self._launch: Launch | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._pipes: _Pipes | None = None
        self._reach: WorkspaceChannel | None = None  # the jail's files, and its end
        self._launcher_err: IO[bytes] | None = None  # what bwrap or a runtime said (a file:
        # never a SIGPIPE)
        self._host_dirs: Path | None = None
        self._cgroup: Cgroup | None = None  # the jail's process and memory caps
        if not self.provider.isolated:
            self._host_dirs = Path(tempfile.mkdtemp(prefix="skill-eval-unjailed-"))
            for name in ("workspace", "home"):
                (self._host_dirs / name).mkdir(mode=0o700)
            self._reach = LocalRoot(Path("/"))
            with _live_lock:  # from now on: cancel_all deletes the folders
                _live.add(self)

    # -- where things are, as the command sees them ----------------------------------------

    @property
    def workspace(self) -> str:
        return str(self._host_dirs / "workspace") if self._host_dirs else WORKSPACE

    @property
    def home(self) -> str:
        return str(self._host_dirs / "home") if self._host_dirs else HOME

    @property
    def python(self) -> str:
        """The interpreter of the jail's own helpers (confine.py), as the command finds it."""
        return self.provider.python

    # -- life cycle --------------------------------------------------------------------------

    def start(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """Start the jail around `argv` (not yet running: `run` starts it)."""
        if not self.provider.isolated:
            self._argv, self._env = tuple(argv), dict(env)
            return
        control, control_inside = socket.socketpair()
        stream, stream_inside = socket.socketpair()
        stdin_r, stdin_w = os.pipe()
        stderr_r, stderr_w = (end.detach() for end in socket.socketpair())  # see holder.py
        inside = [control_inside.detach(), stdin_r, stream_inside.detach(), stderr_w]
        self._pipes = _Pipes(control, stdin_w, stream, stderr_r, inside)
        if self.forward is not None:
            api, api_inside = socket.socketpair()
            inside.append(api_inside.detach())
            self._pipes.api = api
            threading.Thread(target=relay_api, args=(api, self.forward), daemon=True).start()
        holder = self._holder(self.provider.inside_fds(inside))
        mounts = [
            Mount("tmpfs", WORKSPACE),
            Mount("tmpfs", HOME),
            Mount("ro", RUN_DIR, JAIL_FILES),
            *self.mounts,
        ]
        # Nothing may kill bwrap between its clone and its child's uid map (the child would
        # wait forever): no parent-death signal (the holder ends the jail when its control
        # socket closes), no --info-fd, no stderr pipe (a SIGPIPE once the harness died).
        confinement = Confinement(
            (*holder, "--", *argv),
            WORKSPACE,
            env,
            tuple(mounts),
            limits=self.limits,
            die_with_parent=False,
        )
        self._launcher_err = tempfile.TemporaryFile()
        launch = self._launch = self.provider.launch(confinement, inside)
        self._cgroup = Cgroup.make(self.limits) if launch.own_cgroup else None
        # Caps go on the jail's processes as they start (capping.py): no preexec function
        # (a fork of the harness) but to renumber fds (a container, capped by its runtime).
        preexec = preexec_for(
            self.limits, die_with_harness=False, move_fds=launch.move_fds, rlimits=False
        )
        self._proc = subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._launcher_err,
            pass_fds=tuple(launch.pass_fds),
            start_new_session=True,
            env=launch.env,
            cwd=launch.cwd,
            preexec_fn=preexec if launch.move_fds else None,
        )
        capping = Capping(self._proc.pid, self._cgroup, self.limits) if launch.own_cgroup else None
        with _live_lock:
            _live.add(self)
        for fd in inside:
            os.close(fd)
        try:
            if self._read_line(timeout=60) != "ready":
                raise JailBroken(
                    f"the jail did not start: {launcher_said(self._proc, self._launcher_err)}"
                )
            self._reach = launch.workspace(self._proc.pid)
            if self._reach is None:
                raise JailBroken(f"the {self.provider.name} jail started, but shows no process")
            if capping is not None:
                capping.finish()
        except BaseException:
            self.close()
            raise
        finally:
            if capping is not None:
                capping.stop()

    def _holder(self, seen: list[int]) -> list[str]:
        """holder.py's command line, given the numbers the jail knows the fds by."""
        fds = ",".join(map(str, seen[:4]))
        holder = [self.provider.python, "-I", "-S", f"{RUN_DIR}/holder.py", "--fds", fds]
        if self.forward is not None:
            holder += ["--forward", str(FORWARD_PORT), str(seen[4])]
        return holder + ["--confine"] if self.confine else holder

    def seed(self, source: Path) -> None:
        """Copy the harness-made tree `source` into the workspace before the command runs."""
        self._need_reach().seed(source, self.workspace)

    def put(self, path: str, data: bytes, mode: int = 0o600) -> None:
        """Write a file the command needs (a system prompt, a login) at `path` (a path as the
        command sees it, under its HOME or workspace) before the command runs."""
        self._need_reach().put(path, data, mode)

    def _need_reach(self) -> WorkspaceChannel:
        if self._reach is None:
            raise JailBroken("the jail is not started")
        return self._reach

    def run(
        self,
        stdin: bytes,
        timeout: float,
        on_line: Callable[[bytes], bool],
        limit: int | None = None,
    ) -> Ended:
        """Run the command; `on_line` sees each stdout line and returns False to stop it;
        past `limit` bytes of stdout it is stopped too (`overflow`)."""
        if not self.provider.isolated:
            return self._run_unjailed(stdin, timeout, on_line, limit)
        pipes = self._need_pipes()
        pipes.control.sendall(b"go\n")
        stderr = Tail(pipes.stderr_r)
        feed(pipes.stdin_w, stdin)
        pipes.stderr_r = pipes.stdin_w = -1  # the threads' now
        read = read_lines(pipes.stream, timeout, on_line, limit)
        if read.ended_early:
            self._send(b"stop\n")
        said = self._read_line(timeout=ANSWER)
        if not said.startswith("done "):
            self._kill()
            raise JailBroken(f"the jail's holder did not answer ({said or 'no reply'})")
        code = said.split(" ", 1)[1]
        return ended_as(None if code == "killed" else int(code), read, stderr)

    def collect(self, into: Path, caps: Caps) -> Copied:
        """Copy the final workspace into `into` (emptied first), within `caps`."""
        return self._need_reach().collect(self.workspace, into, caps)

    def close(self) -> None:
        """Release the jail (it and everything in it ends) and free what the harness held;
        a started jail's end is waited for on a thread (teardown.py)."""
        if self._pipes is not None:
            self._send(b"release\n")
            for sock in (self._pipes.control, self._pipes.stream, self._pipes.api):
                if sock is not None:
                    sock.close()
            for fd in (self._pipes.stdin_w, self._pipes.stderr_r):
                if fd >= 0:
                    close_fd(fd)
            self._pipes = None
        if self._proc is not None and self.provider.isolated:
            teardown.later(self._end)
        else:
            self._end()

    def _end(self) -> None:
        if self._proc is not None:
            try:
                self._proc.wait(timeout=GRACE)
            except subprocess.TimeoutExpired:
                self._kill()
            self._proc = None
        if self._reach is not None:
            self._reach.close()
            self._reach = None
        if self._cgroup is not None:
            self._cgroup.close()  # empty by now; what is not dies first
            self._cgroup = None
        if self._launcher_err is not None:
            self._launcher_err.close()
            self._launcher_err = None
        if self._launch is not None:
            self._launch.cleanup()  # whatever the runtime left (a container)
            self._launch = None
        with _live_lock:
            _live.discard(self)
        if self._host_dirs is not None:
            shutil.rmtree(self._host_dirs, ignore_errors=True)
            self._host_dirs = None

    def __enter__(self) -> JailedCommand:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- plumbing ----------------------------------------------------------------------------

    def _need_pipes(self) -> _Pipes:
        if self._pipes is None:
            raise JailBroken("the jail is not started")
        return self._pipes

    def _send(self, data: bytes) -> None:
        if self._pipes is not None:
            try:
                self._pipes.control.sendall(data)
            except OSError:
                pass

    def _read_line(self, timeout: float) -> str:
        control = self._need_pipes().control
        control.settimeout(timeout)
        data = b""
        try:
            while not data.endswith(b"\n") and len(data) < 256:
                chunk = control.recv(1)
                if not chunk:
                    break
                data += chunk
        except (TimeoutError, OSError):
            pass
        return data.decode("utf-8", "replace").strip()

    def _kill(self) -> None:
        proc, reach = self._proc, self._reach
        if reach is not None:
            reach.kill()
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()

    def _run_unjailed(
        self, stdin: bytes, timeout: float, on_line: Callable[[bytes], bool], limit: int | None
    ) -> Ended:
        stream, stream_child = socket.socketpair()
        (stdin_r, stdin_w), (stderr_r, stderr_w) = os.pipe(), os.pipe()
        self._cgroup = Cgroup.make(self.limits)
        proc = subprocess.Popen(
            self._argv,
            stdin=stdin_r,
            stdout=stream_child.fileno(),
            stderr=stderr_w,
            cwd=self.workspace,
            env=self._env,
            start_new_session=True,
            preexec_fn=preexec_for(self.limits, cgroup=self._cgroup),
        )
        self._proc = proc
        with _live_lock:
            _live.add(self)
        stream_child.close()
        for fd in (stdin_r, stderr_w):
            os.close(fd)
        stderr = Tail(stderr_r)
        feed(stdin_w, stdin)
        read = Read(stopped=True)
        try:
            read = read_lines(stream, timeout, on_line, limit)
            if not read.ended_early:
                proc.wait(timeout=GRACE)  # its stream ended: let it exit with its own code
        except subprocess.TimeoutExpired:
            pass
        finally:
            stream.close()
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the group: what it started goes too
            except (ProcessLookupError, PermissionError):
                pass
        return ended_as(proc.wait(), read, stderr)
