"""The harness's ends of a jailed command's pipes: its stdout read line by line (bounded), its
stderr's tail, its stdin fed from a thread, the model API connections the jail passes out, and
the jail's first process (bwrap's child).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .api_proxy import MAX_CONNECTIONS, Forward

# A stream line longer than this is cut (a message is a few KB; a tool result a few MB).
MAX_LINE = 8 * 1024 * 1024
STDERR_TAIL = 16 * 1024
# How long the harness waits for the holder's `done`: the holder's own kill of what is left
# takes up to 5 s, and longer on a busy machine (a fork bomb's hundreds to reap), so load
# delays the answer, never loses it (the attempt errored with the holder "not answering").
ANSWER = 60.0


@dataclass(frozen=True)
class Read:
    """How reading a stream ended: `on_line` said enough (`stopped`), the time ran out
    (`timed_out`), or the stream went past its byte cap (`overflow`); `printed`: bytes read."""

    stopped: bool = False
    timed_out: bool = False
    overflow: bool = False
    printed: int = 0

    @property
    def ended_early(self) -> bool:
        """The harness ended it: the command's own exit code, if any, says nothing."""
        return self.stopped or self.timed_out or self.overflow


def read_lines(
    stream: socket.socket,
    timeout: float,
    on_line: Callable[[bytes], bool],
    limit: int | None = None,
) -> Read:
    """Give each line of `stream` to `on_line` until it ends, `on_line` says False, `timeout`
    seconds pass or more than `limit` bytes came (what the stream holds is the candidate's:
    nothing past the cap is read)."""
    deadline = time.monotonic() + timeout
    buffer, printed = bytearray(), 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return Read(timed_out=True, printed=printed)
        stream.settimeout(left)
        try:
            chunk = stream.recv(65536)
        except TimeoutError:
            return Read(timed_out=True, printed=printed)
        if not chunk:
            if buffer and not on_line(bytes(buffer)):
                return Read(stopped=True, printed=printed)
            return Read(printed=printed)
        printed += len(chunk)
        if limit is not None and printed > limit:
            return Read(overflow=True, printed=printed)
        buffer.extend(chunk)
        while (end := buffer.find(b"\n")) >= 0 or len(buffer) > MAX_LINE:
            line = bytes(buffer[: end if end >= 0 else MAX_LINE])
            del buffer[: end + 1 if end >= 0 else len(buffer)]
            if not on_line(line):
                return Read(stopped=True, printed=printed)


class Tail:
    """Reads a pipe to its end in a thread, keeping the last STDERR_TAIL bytes."""

    def __init__(self, fd: int) -> None:
        self._fd, self._tail = fd, bytearray()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                self._tail.extend(chunk)
                del self._tail[:-STDERR_TAIL]
        except OSError:
            pass
        finally:
            close_fd(self._fd)

    def text(self) -> str:
        self._thread.join(1.0)
        return self._tail.decode("utf-8", "replace")


def feed(fd: int, data: bytes) -> None:
    """Write `data` to a pipe and close it, in a thread (the reader may be slow to start)."""

    def write() -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            pass
        finally:
            close_fd(fd)

    threading.Thread(target=write, daemon=True).start()


def close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def relay_api(channel: socket.socket, proxy: Forward, cap: int = MAX_CONNECTIONS) -> None:
    """Serve each connection the holder passes out, each in a thread, until the jail ends; at
    most `cap` at once (the rest are turned away: a jail cannot hold the harness's threads)."""
    slots = threading.BoundedSemaphore(cap)

    def serve(connection: socket.socket) -> None:
        try:
            proxy.serve(connection)
        finally:
            slots.release()

    while True:
        try:
            _, fds, _, _ = socket.recv_fds(channel, 1, 4)
        except OSError:
            return
        if not fds:
            return
        for fd in fds:
            connection = socket.socket(fileno=fd)
            if not slots.acquire(blocking=False):
                proxy.turn_away(connection, f"over the jail's {cap} open API connections")
                continue
            threading.Thread(target=serve, args=(connection,), daemon=True).start()


def first_child(bwrap_pid: int) -> int | None:
    """The host pid of the jail's first process: bwrap's one child (None: it has none)."""
    try:
        children = Path(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if len(children) == 1 else None


def process_tree(pid: int) -> list[int]:
    """`pid` and every process it started, as they are now (the ones that ended are gone)."""
    tree, index = [pid], 0
    while index < len(tree):
        here = tree[index]
        try:
            tree += map(int, Path(f"/proc/{here}/task/{here}/children").read_text().split())
        except OSError:
            pass
        index += 1
    return tree


def pidfd_kill(pidfd: int) -> None:
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:  # it has ended (ESRCH) or the fd is already closed
        pass
