"""Running one jailed command: resource limits, a parent-death signal, a hard timeout that
kills the whole tree, output read through a pipe of which only the tail is kept (a command
can print gigabytes), and a registry of live commands so a harness leaving in a hurry
(Ctrl-C, SIGTERM) kills them all."""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import Confinement, JailKind, Limits
from .cgroup import Cgroup
from .providers import Launch, resolve

_PR_SET_PDEATHSIG = 1
TAIL_BYTES = 16 * 1024

_live_lock = threading.Lock()
_live: set[subprocess.Popen[bytes]] = set()


@dataclass(frozen=True)
class Finished:
    """How a jailed command ended: its exit code (None when killed at the timeout) and the
    last TAIL_BYTES of what it printed (stdout and stderr together)."""

    code: int | None
    tail: str
    printed_bytes: int


def preexec_for(
    limits: Limits,
    *,
    die_with_harness: bool = True,
    cgroup: Cgroup | None = None,
    move_fds: Sequence[tuple[int, int]] = (),
    rlimits: bool = True,
) -> Callable[[], None]:
    """What runs in the child before exec: it joins `cgroup` (what it starts is born there),
    the limits, and (`die_with_harness`) SIGKILL when the thread that started it ends (Linux's
    parent-death signal follows the thread); `move_fds` (fd -> number) are renumbered. No
    rlimits (`rlimits=False`) for a container runtime's client: the container has its own."""
    harness = os.getpid()
    joins = cgroup.procs_files() if cgroup is not None else ()
    caps = _rlimits(limits) if rlimits else []

    def preexec() -> None:  # in the child between fork and exec: no locks, no allocation
        if move_fds:  # out of the way first: a target may be another's source
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 1000) for fd, _ in move_fds]
            for fd, (_, to) in zip(high, move_fds, strict=True):
                os.dup2(fd, to)
        for path in joins:  # a jail without its caps never starts
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                os.write(2, b"skill-eval: cannot join the jail's cgroup\n")
                os._exit(125)
        for kind, value in caps:
            try:
                resource.setrlimit(kind, (value, value))
            except (ValueError, OSError):
                pass
        if die_with_harness and sys.platform.startswith("linux"):
            try:  # SIGKILL when the harness dies; bwrap's --die-with-parent carries it on
                ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            except (OSError, AttributeError):
                pass
        if os.getppid() != harness:
            os._exit(137)  # the harness died before the signal was armed

    return preexec


def _rlimits(limits: Limits) -> list[tuple[int, int]]:
    caps = [
        (resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024),
        (resource.RLIMIT_NPROC, limits.processes),
    ]
    if limits.memory_mb is not None:
        caps.append((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024))
    if limits.data_mb is not None:
        caps.append((resource.RLIMIT_DATA, limits.data_mb * 1024 * 1024))
    return caps


def limit_running(pids: Sequence[int], limits: Limits) -> None:
    """The limits of `preexec_for`, set on processes already running (prlimit: a jail's
    holder, before it starts the command, which inherits them). Lets the jail start without a
    preexec function: forking the harness to run one costs 10-20 ms, vfork well under 1."""
    for pid in pids:
        for kind, value in _rlimits(limits):
            hard = resource.prlimit(pid, kind)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)  # never raised: a lower hard limit stays
            resource.prlimit(pid, kind, (value, value))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def cancel_all() -> None:
    """Kill every jailed command of this process (their namespaces die with them)."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        _kill(proc)


def run(
    kind: JailKind,
    confinement: Confinement,
    timeout: float,
    pass_fds: Sequence[int] = (),
    started: Callable[[], None] = lambda: None,
) -> Finished:
    """Run `confinement` in the jail of `kind` and wait at most `timeout` seconds."""
    provider = resolve(kind)
    launch = provider.launch(confinement, pass_fds, timeout)
    group = Cgroup.make(confinement.limits) if launch.own_cgroup else None
    try:
        return _run(launch, confinement.limits, timeout, started, group)
    finally:
        launch.cleanup()
        if group is not None:
            group.close()


def _run(
    launch: Launch,
    limits: Limits,
    timeout: float,
    started: Callable[[], None],
    group: Cgroup | None,
) -> Finished:
    proc = subprocess.Popen(  # argv only: nothing the candidate wrote meets a shell of ours
        launch.argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=tuple(launch.pass_fds),
        env=launch.env,
        cwd=launch.cwd,
        preexec_fn=preexec_for(
            limits, cgroup=group, move_fds=launch.move_fds, rlimits=launch.own_cgroup
        ),
    )
    with _live_lock:
        _live.add(proc)
    started()
    tail = bytearray()
    printed = [0]
    timed_out = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        while chunk := os.read(proc.stdout.fileno(), 65536):
            printed[0] += len(chunk)
            tail.extend(chunk)
            del tail[:-TAIL_BYTES]

    def expire() -> None:
        if proc.returncode is None:
            timed_out.set()
            _kill(proc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        code = proc.wait()
    finally:
        timer.cancel()
        _kill(proc)
        with _live_lock:
            _live.discard(proc)
    # Without a jail a process that left the group may hold the pipe open: stop waiting.
    reader.join(1.0)
    if proc.stdout is not None and not reader.is_alive():
        proc.stdout.close()
    text = tail.decode("utf-8", errors="replace")
    return Finished(None if timed_out.is_set() else code, text, printed[0])
