"""Copying an attempt's final workspace out of its jail: bounded in entries (files, folders,
links: an agent can make 200,000 empty folders as easily as files), bytes per file and bytes in
all; regular files and folders only. A link is never followed (nor recreated: a link in the
harness's copy would point into the harness's own file system), a FIFO is never opened. The
tree is read after everything in the jail is dead, so nothing changes it under the copy; a
tree that cannot be read (a path too long, say) is the agent's doing too, and said so.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

NAMED = 100  # links and special files named in the result; the rest are counted


@dataclass(frozen=True)
class Caps:
    """At most `files` entries (regular files, folders, links, ...), each file at most
    `file_bytes`, `total_bytes` in all."""

    files: int = 10_000
    file_bytes: int = 256 * 1024 * 1024
    total_bytes: int = 1024 * 1024 * 1024


@dataclass(frozen=True)
class Copied:
    """What was copied, and what was left out: links and special files (the first NAMED by
    path), and whether a cap stopped the copy (`over`, a sentence naming the cap)."""

    files: int
    size: int
    links: tuple[str, ...] = ()
    special: tuple[str, ...] = ()
    over: str | None = None


def too_many(caps: Caps) -> str:
    return f"the workspace holds more than {caps.files} files (folders and links count)"


def too_big(path: str, size: int, caps: Caps) -> str:
    return (
        f"{path} ({size} bytes) is over the copy's size caps "
        f"({caps.file_bytes} bytes per file, {caps.total_bytes} in all)"
    )


def unreadable(why: str) -> str:
    return f"the workspace could not be read back ({why})"


@dataclass
class Walk:
    """A copy under way: what it counted and named so far (docker_files.py counts a copy
    that comes as a stream the same way)."""

    caps: Caps
    entries: int = 0
    files: int = 0
    size: int = 0
    links: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)

    def result(self, over: str | None = None) -> Copied:
        return Copied(self.files, self.size, tuple(self.links), tuple(self.special), over)

    def note(self, into: list[str], path: Path) -> None:
        if len(into) < NAMED:
            into.append(path.as_posix())


def copy_out(source: Path, into: Path, caps: Caps) -> Copied:
    """Make `into` a copy of the tree at `source` (it is emptied first), within `caps`."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(mode=0o700, parents=True)
    walk = Walk(caps)
    pending = [Path()]
    try:
        while pending:
            over = _copy_folder(source, into, pending.pop(), pending, walk)
            if over is not None:
                return walk.result(over)
    except OSError as exc:
        return walk.result(unreadable(str(exc.strerror or exc)))
    return walk.result()


def _copy_folder(
    source: Path, into: Path, relative: Path, pending: list[Path], walk: Walk
) -> str | None:
    """Copy one folder's entries (its subfolders go on `pending`); why the copy must stop."""
    caps = walk.caps
    with os.scandir(source / relative) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            walk.entries += 1
            if walk.entries > caps.files:
                return too_many(caps)
            path = relative / entry.name
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                (into / path).mkdir(mode=0o700)
                pending.append(path)
            elif stat.S_ISLNK(info.st_mode):
                walk.note(walk.links, path)
            elif not stat.S_ISREG(info.st_mode):
                walk.note(walk.special, path)
            elif info.st_size > caps.file_bytes or walk.size + info.st_size > caps.total_bytes:
                return too_big(path.as_posix(), info.st_size, caps)
            else:
                walk.size += _copy_file(source / path, into / path, caps.file_bytes)
                walk.files += 1
    return None


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


def chown_tree(top: Path, owner: tuple[int, int]) -> None:
    """Give `top` and everything under it (links themselves, never followed) to `owner`."""
    os.lchown(top, *owner)
    for folder, dirs, files in os.walk(top):
        for name in (*dirs, *files):
            os.lchown(os.path.join(folder, name), *owner)
