"""How the harness reaches a started jail's files, and ends it: a provider's `Launch` says
(its `workspace`). Seeded before the command runs, copied back (bounded: copyout.py's caps)
after everything in the jail is dead, killed on a cancel or a timeout.

`LocalRoot` is the local one, for a jail on this machine (bubblewrap, Podman): its first
process's root through /proc, killed through a pidfd (and, for --no-jail, the host's own
folders). A jail on another machine (Docker Desktop's VM) brings its own (docker_files.py:
the tree as a stream over the link).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from .copyout import Caps, Copied, chown_tree, copy_out
from .pipes import close_fd, pidfd_kill


class WorkspaceChannel(Protocol):
    """A started jail's files and its end. Paths are as the jail's command sees them."""

    def seed(self, source: Path, target: str) -> None:
        """Copy the harness-made tree `source` into the folder `target` (links kept)."""

    def put(self, path: str, data: bytes, mode: int) -> None:
        """Write one file (its folders made as needed)."""

    def collect(self, source: str, into: Path, caps: Caps) -> Copied:
        """Copy the tree `source` into `into` (emptied first) within `caps`, links never
        followed nor made; only once everything in the jail is dead."""

    def kill(self) -> None:
        """End the jail and everything in it now (a cancel, a holder that does not answer)."""

    def close(self) -> None:
        """Release what the harness holds of it (the jail itself ends on its own)."""


class LocalRoot:
    """Files on this machine under `root`: a jail's, /proc/PID/root of its first process,
    killed through `pidfd` (the whole jail ends with its first process); or, with no jail,
    "/" and nothing to kill. Files the harness puts inside get `owner` (a rootful
    container's uid 1000; bubblewrap maps the harness's own uid: None)."""

    def __init__(
        self, root: Path, pidfd: int | None = None, owner: tuple[int, int] | None = None
    ) -> None:
        self._root, self._pidfd, self._owner = root, pidfd, owner

    def _on_host(self, inside: str) -> Path:
        return self._root / inside.lstrip("/")

    def seed(self, source: Path, target: str) -> None:
        shutil.copytree(source, self._on_host(target), symlinks=True, dirs_exist_ok=True)
        if self._owner is not None:
            chown_tree(self._on_host(target), self._owner)

    def put(self, path: str, data: bytes, mode: int) -> None:
        target = self._on_host(path)
        made, folder = [], target.parent
        while not folder.exists():
            made.append(folder)
            folder = folder.parent
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if self._owner is not None:
            for each in (*made, target):
                os.lchown(each, *self._owner)

    def collect(self, source: str, into: Path, caps: Caps) -> Copied:
        return copy_out(self._on_host(source), into, caps)

    def kill(self) -> None:
        if self._pidfd is not None:
            pidfd_kill(self._pidfd)

    def close(self) -> None:
        if self._pidfd is not None:
            pidfd_kill(self._pidfd)  # no-op when it ended with the jail, as it should
            close_fd(self._pidfd)
            self._pidfd = None


def through_proc(
    first_process: Callable[[int], int | None], owner: tuple[int, int] | None = None
) -> Callable[[int], WorkspaceChannel | None]:
    """A Launch's `workspace` for a jail on this machine: `first_process(started pid)` finds
    its first process (None: it shows none, the jail is broken)."""

    def reach(started: int) -> WorkspaceChannel | None:
        pid = first_process(started)
        return (
            None if pid is None else LocalRoot(Path(f"/proc/{pid}/root"), os.pidfd_open(pid), owner)
        )

    return reach


__all__ = ["LocalRoot", "WorkspaceChannel", "through_proc"]
