"""Copying an attempt's final workspace out of its jail: bounded in files, bytes per file and
bytes in all, regular files and folders only. A link is never followed (nor recreated: a link
in the harness's copy would point into the harness's own file system), a FIFO is never opened.
The tree is read after everything in the jail is dead, so nothing changes it under the copy.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Caps:
    """At most `files` regular files, each at most `file_bytes`, `total_bytes` in all."""

    files: int = 10_000
    file_bytes: int = 256 * 1024 * 1024
    total_bytes: int = 1024 * 1024 * 1024


@dataclass(frozen=True)
class Copied:
    """What was copied, and what was left out: links and special files (by path), and
    whether a cap stopped the copy (`over`, a sentence naming the cap)."""

    files: int
    size: int
    links: tuple[str, ...] = ()
    special: tuple[str, ...] = ()
    over: str | None = None


def copy_out(source: Path, into: Path, caps: Caps) -> Copied:
    """Make `into` a copy of the tree at `source` (it is emptied first), within `caps`."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(mode=0o700, parents=True)
    files = total = 0
    links: list[str] = []
    special: list[str] = []
    pending = [Path()]
    while pending:
        relative = pending.pop()
        with os.scandir(source / relative) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = relative / entry.name
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    (into / path).mkdir(mode=0o700)
                    pending.append(path)
                elif stat.S_ISLNK(info.st_mode):
                    links.append(path.as_posix())
                elif not stat.S_ISREG(info.st_mode):
                    special.append(path.as_posix())
                elif files >= caps.files:
                    return Copied(
                        files,
                        total,
                        tuple(links),
                        tuple(special),
                        f"the workspace holds more than {caps.files} files",
                    )
                elif info.st_size > caps.file_bytes or total + info.st_size > caps.total_bytes:
                    return Copied(
                        files,
                        total,
                        tuple(links),
                        tuple(special),
                        f"{path.as_posix()} ({info.st_size} bytes) is over the "
                        f"copy's size caps ({caps.file_bytes} bytes per file, "
                        f"{caps.total_bytes} in all)",
                    )
                else:
                    total += _copy_file(source / path, into / path, caps.file_bytes)
                    files += 1
    return Copied(files, total, tuple(links), tuple(special))


def _copy_file(source: Path, target: Path, limit: int) -> int:
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(source, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return 0
        copied = 0
        with os.fdopen(os.dup(fd), "rb") as handle, target.open("wb") as out:
            while copied < limit and (chunk := handle.read(min(1 << 20, limit - copied))):
                out.write(chunk)
                copied += len(chunk)
        return copied
    finally:
        os.close(fd)
