"""Caps on a whole jail that hold whoever runs the harness: a cgroup per jailed command, its
process count (`pids`) and its memory capped by the kernel. RLIMIT_NPROC cannot do this for
a harness running as root: the jail's user maps to root, which the kernel exempts from it.

cgroup v2 where its `pids` and `memory` controllers can be used below the harness's own
cgroup, else v1's `pids` and `memory` hierarchies (as root on most CI machines). Where
neither can be written, `problem()` says so in one line when it matters (a root harness,
whose jails then have no process cap); a harness that is not root keeps RLIMIT_NPROC.

    group = Cgroup.make(limits)          # None: no cgroup here (problem() says why)
    Popen(..., preexec_fn=...)           # the child writes itself into group.procs_files()
    group.close()                        # kill what is left in it, remove it
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import Limits

_PREFIX = "skill-eval-"
_names = itertools.count()


@dataclass(frozen=True)
class _Place:
    """Where new cgroups go: one folder per hierarchy (v2: one; v1: the pids and the memory
    hierarchy's), and which of the two controllers they hold."""

    version: int
    parents: tuple[Path, ...]
    controllers: tuple[str, ...]


def _own_paths() -> dict[str, str]:
    """The harness's own cgroup per controller ("" for v2's unified one)."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            own[name] = path
    return own


def _mounts() -> dict[str, Path]:
    """Mount point per controller ("" for the cgroup2 mount)."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        if fields[2] == "cgroup2":
            found.setdefault("", Path(fields[1]))
        elif fields[2] == "cgroup":
            for option in fields[3].split(","):
                if option in ("pids", "memory"):
                    found.setdefault(option, Path(fields[1]))
    return found


def _writable(folder: Path) -> bool:
    probe = folder / f"{_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return (probe / "cgroup.procs").exists()
    finally:
        _remove(probe)


def _v2(mount: Path, own: str) -> Path | None:
    parent = mount / own.lstrip("/")
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if {"pids", "memory"} <= set(enabled) and _writable(parent):
        return parent
    return None


@functools.cache
def place() -> _Place | None:
    """Where this harness can make its jails' cgroups (None: nowhere). Probed once."""
    own, mounts = _own_paths(), _mounts()
    if "" in mounts and "" in own and (parent := _v2(mounts[""], own[""])) is not None:
        return _Place(2, (parent,), ("pids", "memory"))
    usable: dict[str, Path] = {}
    for name in ("pids", "memory"):
        folder = mounts[name] / own.get(name, "/").lstrip("/") if name in mounts else None
        if folder is not None and _writable(folder):
            usable[name] = folder
    if not usable:
        return None
    return _Place(1, tuple(usable.values()), tuple(usable))


def problem() -> str | None:
    """One line when a jail here has no process cap the kernel enforces (a root harness
    without a usable cgroup), or no memory cap on the whole jail; None when both hold."""
    found = place()
    controllers = found.controllers if found else ()
    if "pids" not in controllers and os.geteuid() == 0:
        return (
            "no cgroup can be made here for the jail's caps, and as root RLIMIT_NPROC does not "
            "hold: a fork bomb in an attempt or a judged test can exhaust this machine "
            "(make /sys/fs/cgroup's pids and memory controllers writable, or run as a user)"
        )
    return None


class Cgroup:
    """One jail's cgroup (a folder per v1 hierarchy, or one v2 folder), capped at creation."""

    def __init__(self, folders: tuple[Path, ...], version: int) -> None:
        self.folders, self.version = folders, version

    @classmethod
    def make(cls, limits: Limits) -> Cgroup | None:
        """A new capped cgroup for one jail; None where none can be made (see problem())."""
        found = place()
        if found is None:
            return None
        _sweep(found)
        name = f"{_PREFIX}{os.getpid()}-{next(_names)}"
        made: list[Path] = []
        try:
            for parent in found.parents:
                folder = parent / name
                folder.mkdir()
                made.append(folder)
                _cap(folder, limits, found.version)
        except OSError:
            for folder in made:
                _remove(folder)
            return None
        return cls(tuple(made), found.version)

    def adopt(self, pids: Sequence[int]) -> None:
        """Move the running processes `pids` in (each with its threads); what they start from
        then on is born here. OSError when one cannot be moved."""
        for folder in self.folders:
            for pid in pids:
                (folder / "cgroup.procs").write_text(str(pid))

    def procs_files(self) -> tuple[bytes, ...]:
        """The files a process writes "0" to, to join (what the jail's first process does)."""
        return tuple(os.fsencode(folder / "cgroup.procs") for folder in self.folders)

    def peak_processes(self) -> int | None:
        """The most processes the jail had at once (None: the kernel does not say)."""
        for folder in self.folders:
            try:
                return int((folder / "pids.peak").read_text())
            except (OSError, ValueError):
                continue
        return None

    def close(self) -> None:
        """Kill whatever is still in it (nothing, normally: the jail ended) and remove it."""
        for folder in self.folders:
            _remove(folder)


def _cap(folder: Path, limits: Limits, version: int) -> None:
    names = os.listdir(folder)
    if "pids.max" in names:
        (folder / "pids.max").write_text(str(limits.processes))
    if limits.total_memory_mb is not None:
        size = str(limits.total_memory_mb * 1024 * 1024)
        memory = "memory.max" if version == 2 else "memory.limit_in_bytes"
        if memory in names:
            (folder / memory).write_text(size)
            if version == 2 and "memory.swap.max" in names:
                (folder / "memory.swap.max").write_text("0")


def _remove(folder: Path) -> None:
    """rmdir `folder` after killing what is in it; tries while the dying are reaped (off the
    attempt's path: teardown.py), for as long as a busy machine takes to reap a fork bomb's
    hundreds (2 s left a jail's cgroup behind under load)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
        try:
            (folder / "cgroup.kill").write_text("1")  # v2, 5.14 and up
        except OSError:
            try:
                pids = (folder / "cgroup.procs").read_text().split()
            except OSError:
                pids = []
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        time.sleep(0.005)


@functools.cache
def _sweep(found: _Place) -> None:
    """Once per process: remove the empty cgroups of harnesses that were killed (-9)."""
    for parent in found.parents:
        for folder in parent.glob(f"{_PREFIX}*-*"):
            pid = folder.name[len(_PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                try:
                    folder.rmdir()
                except OSError:
                    pass


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (one of another user's counts: it cannot be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
