"""The docker provider's workspace channel (workspace_channel.py): a jail's files reached
through tree_wire.py's service inside the container, over the link's files channel, so
seeding and copying back need no /proc of the jail (Docker Desktop runs it in a VM).

What comes back is the candidate's and is read as copyout.py reads a local tree: the same
caps on entries, bytes per file and bytes in all, with the same sentences; links and special
files named, never made; every path relative and made below `into` one folder at a time, a
folder before what it holds; a stream that breaks these rules, stalls or ends early is an
unreadable workspace, said so.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from .copyout import Caps, Copied, Walk, too_big, too_many, unreadable
from .ended import JailBroken
from .tree_wire import CHUNK, Stream, number, path_field, relative

IDLE = 60.0  # seconds without a byte from the jail before a copy is given up


class DockerFiles:
    """A started container's files over `sock` (the link's files channel); `kill` ends the
    container (the runtime's own command, not waited for)."""

    def __init__(self, sock: socket.socket, kill: Callable[[], None]) -> None:
        sock.settimeout(IDLE)
        self._sock, self._stream, self._kill = sock, Stream(sock), kill

    def seed(self, source: Path, target: str) -> None:
        self._write(target, _records(source))

    def put(self, path: str, data: bytes, mode: int) -> None:
        folder, _, name = path.rpartition("/")
        header = b"F" + path_field(os.fsencode(name)) + number(mode, 4) + number(len(data), 8)
        self._write(folder or "/", iter((header, data)))

    def _write(self, target: str, records: Iterator[bytes]) -> None:
        try:
            self._stream.put(b"W", path_field(os.fsencode(target)))
            for record in records:
                self._stream.put(record)
            self._stream.put(b"E")
            answer = self._stream.take(1)
            why = "" if answer == b"K" else self._stream.path().decode("utf-8", "replace")
        except (OSError, EOFError) as exc:
            raise JailBroken(f"the jail's files cannot be written ({exc})") from exc
        if answer != b"K":
            raise JailBroken(f"the jail's files cannot be written ({why})")

    def collect(self, source: str, into: Path, caps: Caps) -> Copied:
        if into.exists():
            shutil.rmtree(into)
        into.mkdir(mode=0o700, parents=True)
        walk = Walk(caps)
        try:
            self._stream.put(b"R", path_field(os.fsencode(source)))
            self._stream.put(
                *(number(n, 8) for n in (caps.files, caps.file_bytes, caps.total_bytes))
            )
            return _receive(self._stream, into, walk)
        except TimeoutError:
            return walk.result(unreadable(f"no answer from the jail for {IDLE:g} s"))
        except (OSError, EOFError, ValueError) as exc:
            return walk.result(unreadable(str(getattr(exc, "strerror", None) or exc)))

    def kill(self) -> None:
        self._kill()

    def close(self) -> None:
        self._sock.close()


def _receive(stream: Stream, into: Path, walk: Walk) -> Copied:
    caps = walk.caps
    while (kind := stream.take(1)) != b"E":
        if kind == b"O":
            return walk.result(_stopped(stream, caps))
        if kind not in (b"D", b"F", b"L", b"S"):
            raise ValueError(f"a malformed copy stream (record {kind!r})")
        raw = stream.path()
        if not relative(raw):
            raise ValueError(f"a path out of the workspace: {raw[:200]!r}")
        walk.entries += 1
        if walk.entries > caps.files:
            return walk.result(too_many(caps))
        path = Path(os.fsdecode(raw))
        if kind == b"D":
            stream.number(4)
            (into / path).mkdir(mode=0o700)  # its parent must be there: made before
        elif kind == b"L":
            stream.path()  # (the target: a link is named, never made)
            walk.note(walk.links, path)
        elif kind == b"S":
            walk.note(walk.special, path)
        elif kind == b"F":
            stream.number(4)
            size = stream.number(8)
            if size > caps.file_bytes or walk.size + size > caps.total_bytes:
                return walk.result(too_big(path.as_posix(), size, caps))
            _take_file(stream, into / path, size)
            walk.size += size
            walk.files += 1
    return walk.result()


def _stopped(stream: Stream, caps: Caps) -> str:
    """Why the jail's side stopped the copy: `n` entries, `s` a file's size, `e` an error."""
    why = stream.take(1)
    if why == b"n":
        return too_many(caps)
    if why == b"s":
        path = stream.path().decode("utf-8", "replace")
        return too_big(path, stream.number(8), caps)
    return unreadable(stream.path().decode("utf-8", "replace"))


def _take_file(stream: Stream, target: Path, size: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(target, flags, 0o666)
    with os.fdopen(fd, "wb") as out:
        left = size
        while left:
            chunk = stream.take(min(CHUNK, left))
            out.write(chunk)
            left -= len(chunk)


def _records(source: Path) -> Iterator[bytes]:
    """The harness-made tree `source` as records, a folder before what it holds; links kept
    as links (copytree's symlinks=True), their targets as they are."""
    for folder, dirs, files in os.walk(source):
        here = Path(folder).relative_to(source)
        for name in sorted(dirs + files):
            full = Path(folder) / name
            path = path_field(os.fsencode((here / name).as_posix()))
            info = full.lstat()
            if stat.S_ISLNK(info.st_mode):
                yield b"L" + path + path_field(os.fsencode(os.readlink(full)))
            elif stat.S_ISDIR(info.st_mode):
                yield b"D" + path + number(info.st_mode & 0o7777, 4)
            elif stat.S_ISREG(info.st_mode):
                yield b"F" + path + number(info.st_mode & 0o7777, 4) + number(info.st_size, 8)
                yield from _chunks(full, info.st_size)


def _chunks(path: Path, size: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        left = size
        while left:
            chunk = handle.read(min(CHUNK, left)) or bytes(min(CHUNK, left))
            yield chunk
            left -= len(chunk)
