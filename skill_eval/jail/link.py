"""The docker provider's link: a jail's sockets carried as channels over one byte stream each
way (the container's stdin and stdout), for a runtime that passes no fd into a container
(Docker's CLI has no `--preserve-fds`; Docker Desktop shares no host socket) and a container
with no network. link_ends.py runs a `Mux` at each end: the harness's side, the container's.

Frames: kind (1 byte), channel (4), length (4), payload. DATA and EOF move a channel's bytes
and its end; each side may send WINDOW bytes on a channel before the other says it wrote them
out (CREDIT): a reader that stops never blocks the other channels, and neither side buffers
more than WINDOW per channel. A socket passed over a channel inside (the holder's model-API
connections, SCM_RIGHTS) becomes a channel of its own (OPEN), and comes out as a socket
passed over that channel's fd outside, as if it had been passed in. EXIT carries the
command's exit status. Standard library only: it runs under `python -I -S` at both ends.
"""

from __future__ import annotations

import _socket
import os
import select
import sys
import time

DATA, EOF, CREDIT, OPEN, EXIT = 0x44, 0x45, 0x43, 0x4F, 0x58
HEADER = 9
WINDOW = 256 * 1024  # bytes in flight per channel and direction
CHUNK = 64 * 1024
WIRE_HIGH = 1024 * 1024  # frames waiting for the wire past which no channel is read
FIRST_SUB, MAX_SUBS = 1 << 16, 256  # channels made for passed sockets, at most this many open


def frame(kind: int, channel: int, payload: bytes = b"") -> bytes:
    return bytes((kind,)) + channel.to_bytes(4, "big") + len(payload).to_bytes(4, "big") + payload


class Chan:
    """One channel's local end: `sock` (a socket) or a plain fd (a pipe's read end, or the
    outside end's own stdout and stderr: written as they are, blocking)."""

    def __init__(self, fd: int, sock: _socket.socket | None, reading: bool = True) -> None:
        self.fd, self.sock = fd, sock
        self.credit = WINDOW  # bytes this side may still send
        self.pending = bytearray()  # from the wire, not yet written locally
        self.taken = 0  # bytes written locally since the last CREDIT
        self.reading = reading  # the local end may still give data
        self.writing = fd >= 0  # the local end still takes data (False: it is dropped)
        self.ended = False  # the far side's EOF came

    def done(self) -> bool:
        return not self.reading and (not self.writing or (self.ended and not self.pending))

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        elif self.fd > 2:
            os.close(self.fd)
        self.reading = self.writing = False


class Mux:
    """The relay between local channels and the wire (frames in on `wire_in`, out on
    `wire_out`). `inside`: sockets passed on a channel become channels of their own."""

    def __init__(self, wire_in: int, wire_out: int, inside: bool) -> None:
        self.wire_in, self.wire_out, self.inside = wire_in, wire_out, inside
        self.chans: dict[int, Chan] = {}
        self.out = bytearray()
        self.inbuf = bytearray()
        self.wire_open = True
        self.exit_code: int | None = None
        self.next_sub = FIRST_SUB
        os.set_blocking(wire_in, False)
        os.set_blocking(wire_out, False)

    def add(self, channel: int, fd: int, reading: bool = True) -> None:
        try:
            sock: _socket.socket | None = _socket.socket(fileno=fd)
        except OSError:
            sock = None  # a pipe or a file: written as it is
        if sock is not None:
            sock.setblocking(False)
        elif reading:  # a pipe's read end (a command's stdin), ours alone
            os.set_blocking(fd, False)
        self.chans[channel] = Chan(fd, sock, reading)

    def send(self, kind: int, channel: int, payload: bytes = b"") -> None:
        self.out += frame(kind, channel, payload)

    def step(self, timeout: float | None, extra: tuple[int, ...] = ()) -> list[int]:
        """One round: wait at most `timeout` seconds, move what can move; the `extra` fds that
        became readable."""
        poll = select.poll()
        if self.wire_open:
            poll.register(self.wire_in, select.POLLIN)
        if self.out:
            poll.register(self.wire_out, select.POLLOUT)
        for chan in self.chans.values():
            mask = select.POLLIN if chan.reading and chan.credit > 0 else 0
            mask = 0 if len(self.out) > WIRE_HIGH else mask
            mask |= select.POLLOUT if chan.pending else 0
            if mask:
                poll.register(chan.fd, mask)
        for fd in extra:
            poll.register(fd, select.POLLIN)
        ready = dict(poll.poll(None if timeout is None else int(timeout * 1000)))
        if self.wire_in in ready and self.wire_open:
            self._from_wire()
        for channel, chan in list(self.chans.items()):
            events = ready.get(chan.fd, 0)
            if events & (select.POLLOUT | select.POLLERR | select.POLLHUP) and chan.pending:
                self._write_local(channel, chan)
            if events & (select.POLLIN | select.POLLERR | select.POLLHUP) and chan.reading:
                self._read_local(channel, chan)
            if chan.done():
                chan.close()
                del self.chans[channel]
        if self.out:  # (non-blocking: what the wire takes now; the rest at the next round)
            self._to_wire()
        return [fd for fd in extra if fd in ready]

    def flush(self, deadline: float) -> None:
        """Write out what waits for the wire, blocking until `deadline` (time.monotonic)."""
        while self.out and time.monotonic() < deadline:
            select.poll().poll(50) if not self._to_wire() else None

    def _to_wire(self) -> int:
        try:
            sent = os.write(self.wire_out, self.out[:CHUNK])
        except BlockingIOError:
            return 0
        except OSError:  # the far side is gone: nothing more can reach it
            self.out.clear()
            return 0
        del self.out[:sent]
        return sent

    def _from_wire(self) -> None:
        try:
            data = os.read(self.wire_in, WINDOW)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.wire_open = False
            return
        self.inbuf += data
        while len(self.inbuf) >= HEADER:
            size = int.from_bytes(self.inbuf[5:9], "big")
            if len(self.inbuf) < HEADER + size:
                break
            kind, channel = self.inbuf[0], int.from_bytes(self.inbuf[1:5], "big")
            payload = bytes(self.inbuf[HEADER : HEADER + size])
            del self.inbuf[: HEADER + size]
            self._take(kind, channel, payload)

    def _take(self, kind: int, channel: int, payload: bytes) -> None:
        chan = self.chans.get(channel)
        if kind == DATA:
            if chan is None or not chan.writing:
                self.send(CREDIT, channel, len(payload).to_bytes(4, "big"))  # dropped
            else:
                chan.pending += payload
        elif kind == EOF and chan is not None:
            chan.ended = True
            if not chan.pending:
                self._shut(chan)
        elif kind == CREDIT and chan is not None:
            chan.credit += int.from_bytes(payload, "big")
        elif kind == OPEN and not self.inside:
            self._open(int.from_bytes(payload[:4], "big"), channel, payload[4:])
        elif kind == EXIT:
            self.exit_code = int.from_bytes(payload, "big", signed=True)

    def _open(self, parent: int, channel: int, data: bytes) -> None:
        """A socket passed from inside: one end of a new socketpair passed on `parent`'s fd,
        the other the channel's local end (dropped, with an EOF back, if it cannot be)."""
        ours, theirs = _socket.socketpair()
        rights = theirs.fileno().to_bytes(4, sys.byteorder)
        owner = self.chans.get(parent)
        try:
            if owner is None or owner.sock is None:
                raise OSError("no such channel")
            owner.sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        except OSError:
            ours.close()
            self.chans[channel] = Chan(-1, None, reading=False)
            self.send(EOF, channel)
            return
        finally:
            theirs.close()
        ours.setblocking(False)
        self.chans[channel] = Chan(ours.fileno(), ours)

    def _write_local(self, channel: int, chan: Chan) -> None:
        try:
            if chan.sock is not None:
                wrote = chan.sock.send(chan.pending[:CHUNK])
            else:
                wrote = os.write(chan.fd, chan.pending[:CHUNK])
        except BlockingIOError:
            return
        except OSError:  # its reader is gone: what comes for it is dropped from now on
            wrote, chan.writing = len(chan.pending), False
        del chan.pending[:wrote]
        chan.taken += wrote
        if chan.taken >= WINDOW // 4 or not chan.pending:
            self.send(CREDIT, channel, chan.taken.to_bytes(4, "big"))
            chan.taken = 0
        if chan.ended and not chan.pending:
            self._shut(chan)

    def _shut(self, chan: Chan) -> None:
        """The far side's EOF, passed on once what came before it is written."""
        if chan.sock is not None:
            try:
                chan.sock.shutdown(_socket.SHUT_WR)
            except OSError:
                pass
        chan.writing = False

    def _read_local(self, channel: int, chan: Chan) -> None:
        size = min(CHUNK, chan.credit)
        fds: list[int] = []
        try:
            if chan.sock is not None and self.inside:
                data, fds = _recv_fds(chan.sock, size)
            elif chan.sock is not None:
                data = chan.sock.recv(size)
            else:
                data = os.read(chan.fd, size)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if fds:
            for fd in fds:
                self._passed(channel, fd, data)
            return
        if not data:
            chan.reading = False
            self.send(EOF, channel)
            return
        chan.credit -= len(data)
        self.send(DATA, channel, data)

    def _passed(self, parent: int, fd: int, data: bytes) -> None:
        if sum(1 for c in self.chans if c >= FIRST_SUB) >= MAX_SUBS:
            os.close(fd)  # a flood of connections: the client sees it closed
            return
        channel, self.next_sub = self.next_sub, self.next_sub + 1
        self.add(channel, fd)
        self.send(OPEN, channel, parent.to_bytes(4, "big") + data)


def _recv_fds(sock: _socket.socket, size: int) -> tuple[bytes, list[int]]:
    data, ancillary, _, _ = sock.recvmsg(size, _socket.CMSG_SPACE(16 * 4))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
    return data, fds
