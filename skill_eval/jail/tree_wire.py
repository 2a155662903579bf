"""Folder trees as a byte stream, for a jail whose files the harness cannot reach through
/proc (a container on another machine: Docker Desktop's VM). `serve(sock)` runs inside the
jail (link_ends.py starts it on the link's files channel, as the command's uid, so what it
writes is the command's); the harness's end is docker_files.py.

Requests, one at a time: `W` + path, then records, then `E`: make the tree under path (its
folders made as needed), answered `K`, or `O` + why. `R` + path + caps (entries, bytes per
file, bytes in all: 8 bytes each): the tree under path as records, walked as copyout.py
walks it (each folder's entries sorted by name, folders depth first) and ended with `E`, or
cut short by `O` + `n` (more entries than the cap), `s` + path + size (a file over a size
cap) or `e` + why (unreadable). Records: `D` path mode, `F` path mode size bytes, `L` path
target (copied in as a link; read out as a name only, its target empty), `S` path (a FIFO, a
socket, a device: named, never opened). A path is 2 bytes of length and the bytes, relative;
modes 4 bytes, sizes 8. Standard library only (it runs under `python -I -S`).
"""

from __future__ import annotations

import _socket
import os
import stat

TYPE_CHECKING = False  # (typing is not imported: this runs in a jail's first process)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CHUNK = 1 << 20


class Stream:
    """Exact reads and whole writes on a blocking socket."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock, self.buffer = sock, bytearray()

    def take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(max(CHUNK, size - len(self.buffer)))
            if not chunk:
                raise EOFError("the stream ended")
            self.buffer += chunk
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def number(self, size: int) -> int:
        return int.from_bytes(self.take(size), "big")

    def path(self) -> bytes:
        return self.take(self.number(2))

    def put(self, *parts: bytes) -> None:
        self.sock.sendall(b"".join(parts))


def path_field(path: bytes) -> bytes:
    return len(path).to_bytes(2, "big") + path


def number(value: int, size: int) -> bytes:
    return value.to_bytes(size, "big")


def relative(path: bytes) -> bool:
    """A path that stays below its top: not empty, not absolute, no `.`, `..` or NUL."""
    parts = path.split(b"/")
    return bool(path) and b"\0" not in path and all(p not in (b"", b".", b"..") for p in parts)


def serve(sock: _socket.socket) -> None:
    """Answer requests on `sock` until it ends."""
    stream = Stream(sock)
    try:
        while True:
            kind = stream.take(1)
            top = stream.path()
            if kind == b"W":
                _write(stream, top)
            elif kind == b"R":
                caps = (stream.number(8), stream.number(8), stream.number(8))
                _read(stream, top, caps)
            else:
                return
    except (EOFError, OSError):
        return
    finally:
        sock.close()


def _write(stream: Stream, top: bytes) -> None:
    """Make the records' tree under `top`; the first error is the answer (every record is
    read all the same: the stream stays in step)."""
    why = _made(_folder, top, None)
    while (kind := stream.take(1)) != b"E":
        path = stream.path()
        if not relative(path) or kind not in (b"D", b"F", b"L"):
            raise EOFError("a malformed tree")  # the harness's own stream: it is broken
        target = os.path.join(top, path)
        if kind == b"F":
            mode, size = stream.number(4), stream.number(8)
            why = _file(stream, target, mode, size, why)
        elif kind == b"D":
            mode = stream.number(4)
            why = why or _made(_folder, target, mode)
        else:
            link = stream.path()
            why = why or _made(_link, target, link)
    stream.put(b"K" if why is None else b"O" + path_field(why.encode()[:60000]))


def _made(make: Callable[[bytes, Any], None], target: bytes, detail: Any) -> str | None:
    try:
        make(target, detail)
    except OSError as exc:
        return f"{os.fsdecode(target)}: {exc.strerror or exc}"
    return None


def _folder(target: bytes, mode: int | None) -> None:
    os.makedirs(target, exist_ok=True)
    if mode is not None:
        os.chmod(target, mode & 0o7777)


def _link(target: bytes, link: bytes) -> None:
    if os.path.lexists(target):
        os.unlink(target)
    os.symlink(link, target)


def _file(stream: Stream, target: bytes, mode: int, size: int, why: str | None) -> str | None:
    """One file's bytes from the stream, written to `target` unless an error came before."""
    fd = None
    if why is None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        try:
            fd = os.open(target, flags, 0o600)
        except OSError as exc:
            why = f"{os.fsdecode(target)}: {exc.strerror or exc}"
    try:
        left = size
        while left:
            chunk = stream.take(min(CHUNK, left))
            left -= len(chunk)
            view = memoryview(chunk)
            while fd is not None and view:
                view = view[os.write(fd, view) :]
        if fd is not None:
            os.fchmod(fd, mode & 0o7777)
    except OSError as exc:
        why = f"{os.fsdecode(target)}: {exc.strerror or exc}"
        while left > 0:  # (the rest of its bytes are still on their way)
            left -= len(stream.take(min(CHUNK, left)))
    finally:
        if fd is not None:
            os.close(fd)
    return why


def _read(stream: Stream, top: bytes, caps: tuple[int, int, int]) -> None:
    files, file_bytes, total_bytes = caps
    entries, total, pending = 0, 0, [b""]
    try:
        while pending:
            here = pending.pop()
            with os.scandir(os.path.join(top, here) if here else top) as found:
                listed = sorted(found, key=lambda e: e.name)
            for entry in listed:
                entries += 1
                if entries > files:
                    stream.put(b"On")
                    return
                path = os.path.join(here, entry.name) if here else entry.name
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    stream.put(b"D", path_field(path), number(info.st_mode & 0o7777, 4))
                    pending.append(path)
                elif stat.S_ISLNK(info.st_mode):
                    stream.put(b"L", path_field(path), path_field(b""))
                elif not stat.S_ISREG(info.st_mode):
                    stream.put(b"S", path_field(path))
                elif info.st_size > file_bytes or total + info.st_size > total_bytes:
                    stream.put(b"Os", path_field(path), number(info.st_size, 8))
                    return
                else:
                    total += _send_file(stream, os.path.join(top, path), path, file_bytes)
    except OSError as exc:
        stream.put(b"Oe", path_field((exc.strerror or str(exc)).encode()[:60000]))
        return
    stream.put(b"E")


def _send_file(stream: Stream, source: bytes, path: bytes, limit: int) -> int:
    """One regular file as an `F` record, streamed: opened without following a link or
    blocking on a FIFO, at most `limit` bytes (nothing runs in the jail by now: its size
    holds; a file that shrank anyway is padded to the size announced)."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        size = min(info.st_size, limit) if stat.S_ISREG(info.st_mode) else 0
        stream.put(b"F", path_field(path), number(info.st_mode & 0o7777, 4), number(size, 8))
        left = size
        while left:
            try:
                chunk = os.read(fd, min(CHUNK, left)) or bytes(min(CHUNK, left))
            except OSError:  # (the record is announced: its bytes must follow)
                chunk = bytes(min(CHUNK, left))
            stream.put(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    return size
