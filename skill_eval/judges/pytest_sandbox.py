"""Where a pytest judgement keeps its files on the host: a fresh 0700 directory per judgement
(the jail shows it read-only), named after this process so that a later run removes what a
killed (-9) one left, and a registry so a harness leaving in a hurry removes them all."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
from pathlib import Path

from ..jail import process as jail_process
from ..jail.cgroup import pid_alive


def temp_parent() -> Path:
    return Path(tempfile.gettempdir()).resolve()


_PREFIX = "skill-eval-pytest-"
_live_lock = threading.Lock()
_live_dirs: set[Path] = set()


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
        pid = path.name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def cancel_all() -> None:
    """Kill every running judgement and remove every judgement directory of this process:
    for a harness about to leave with os._exit (Ctrl-C, SIGTERM), whose threads never get to
    their own clean-up."""
    jail_process.cancel_all()
    with _live_lock:
        dirs = list(_live_dirs)
    for path in dirs:
        remove_dir(path)
