"""Where a pytest judgement runs: on Linux a fresh user, PID and mount namespace whose /tmp is
the judgement's own 0700 directory (no other judgement is visible), resource limits, and a
parent-death signal so no judgement outlives the harness. Probed once; degrades to a process
group in a private 0700 directory elsewhere."""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# Inside the outer namespace we are root there: bind the judgement's directory over the temp
# parent (hiding every other judgement), then drop to a non-root user in a nested namespace
# (no capabilities, so the bind and /proc cannot be undone), under sh as PID 1.
_SCRIPT = ('mount --bind "$1" "$2" && cd "$5" || exit 125; u=$3 g=$4; shift 5; '
           'unshare --user --map-user="$u" --map-group="$g" -- "$@"; exit $?')
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    """Per-judgement resource limits (RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC). The kernel does
    not apply RLIMIT_NPROC to root (see references/security.md)."""
    memory_mb: int = 4096
    file_size_mb: int = 512
    processes: int = 1024


def temp_parent() -> Path:
    return Path(tempfile.gettempdir()).resolve()


@functools.cache
def namespace_prefix() -> tuple[str, ...]:
    """argv prefix for `run_sandboxed`'s namespace, to be followed by the private directory,
    the directory it hides (`temp_parent()`), uid, gid, the working directory and the command.
    () when this system does not allow it (not Linux, no `unshare`/`mount`, unprivileged user
    namespaces disabled). Probed once."""
    unshare, sh = shutil.which("unshare"), "/bin/sh"
    if (not sys.platform.startswith("linux") or unshare is None or shutil.which("mount") is None
            or not os.path.exists(sh)):
        return ()
    prefix = (unshare, "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child",
              "--mount-proc", sh, "-c", _SCRIPT, "sh")
    check = ("import os, sys; sys.exit(0 if os.getppid() == 1 and os.getuid() != 0 "
             "and os.listdir(sys.argv[1]) == ['probe'] else 3)")
    private = Path(tempfile.mkdtemp(prefix="skill-eval-probe-"))
    try:
        (private / "probe").touch()
        argv = [*prefix, str(private), str(temp_parent()), *_ids(), str(temp_parent()),
                sys.executable, "-c", check, str(temp_parent())]
        done = subprocess.run(argv, timeout=10, stdin=subprocess.DEVNULL, capture_output=True,
                              env={"PATH": os.environ.get("PATH", os.defpath)})
    except (OSError, subprocess.SubprocessError):
        return ()
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return prefix if done.returncode == 0 else ()


def _ids() -> tuple[str, str]:
    return str(os.getuid() or 1000), str(os.getgid() or 1000)


def sandbox_argv(prefix: Sequence[str], private: Path, cwd: Path,
                 argv: Sequence[str]) -> list[str]:
    """argv under the namespace `prefix` (unchanged without one), started in `cwd` as the
    judgement sees it."""
    if not prefix:
        return list(argv)
    return [*prefix, str(private), str(temp_parent()), *_ids(), str(cwd), *argv]


def inside_path(private: Path, path: Path, isolated: bool) -> Path:
    """Where `path` under `private` appears to the judgement: under the temp parent when the
    namespace binds `private` there."""
    return temp_parent() / path.relative_to(private) if isolated else path


def _limit(limits: Limits) -> Callable[[], None]:
    harness = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: no locks, no allocation
        for kind, value in ((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024),
                            (resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024),
                            (resource.RLIMIT_NPROC, limits.processes)):
            try:
                resource.setrlimit(kind, (value, value))
            except (ValueError, OSError):
                pass
        if sys.platform.startswith("linux"):
            try:  # SIGKILL when the harness (the forking thread's process) dies
                ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            except (OSError, AttributeError):
                pass
        if os.getppid() != harness:
            os._exit(137)  # the harness died before the signal was armed

    return preexec


_PREFIX = "skill-eval-pytest-"
_live_lock = threading.Lock()
_live_dirs: set[Path] = set()
_live_procs: set[subprocess.Popen[bytes]] = set()


def judgement_dir() -> Path:
    """A fresh 0700 directory for one judgement, named after this process so that a later run
    removes it if this one is killed (-9) before it could (`sweep_orphans`)."""
    sweep_orphans()
    path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
    with _live_lock:
        _live_dirs.add(path)
    return path


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with _live_lock:
        _live_dirs.discard(path)


@functools.cache
def sweep_orphans() -> int:
    """Remove judgement directories left by harness processes that no longer exist (killed
    with -9: nothing in a process survives that). Once per process; how many it removed."""
    removed = 0
    for path in temp_parent().glob(f"{_PREFIX}*-*"):
        pid = path.name[len(_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def cancel_all() -> None:
    """Kill every running judgement and remove every judgement directory of this process:
    for a harness about to leave with os._exit (Ctrl-C, SIGTERM), whose threads never get to
    their own clean-up."""
    with _live_lock:
        procs, dirs = list(_live_procs), list(_live_dirs)
    for proc in procs:
        _kill_group(proc)
    for path in dirs:
        remove_dir(path)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_sandboxed(argv: list[str], cwd: Path, env: dict[str, str], log: Path, timeout: float,
                  limits: Limits, pass_fds: Sequence[int] = (),
                  started: Callable[[], None] = lambda: None) -> int | None:
    """Run argv in its own session with output to `log`; its exit code, or None when it was
    killed after `timeout` seconds. Its process group is killed either way."""
    with open(log, "wb") as sink:
        proc = subprocess.Popen(  # argv only: the output never meets a shell
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=sink,
            stderr=subprocess.STDOUT, start_new_session=True, pass_fds=tuple(pass_fds),
            preexec_fn=_limit(limits))
    with _live_lock:
        _live_procs.add(proc)
    started()
    timed_out = threading.Event()

    def expire() -> None:
        if proc.returncode is None:
            timed_out.set()
            _kill_group(proc)

    # A timer thread, not wait(timeout=...): that polls every 50 ms, a sixth of a judgement.
    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        code = proc.wait()
    finally:
        timer.cancel()
        _kill_group(proc)  # whatever the tests left running in their process group
        with _live_lock:
            _live_procs.discard(proc)
    return None if timed_out.is_set() else code


def tail_of(path: Path, lines: int = 8, max_bytes: int = 16384) -> str:
    """The last `lines` lines of a file, reading at most its last `max_bytes` bytes (a test
    can write a log of gigabytes)."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - max_bytes))
            data = handle.read(max_bytes)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace").strip()
    return "\n".join(text.splitlines()[-lines:])
