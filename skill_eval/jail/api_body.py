"""A request's body as the API forward reads it from a jail: whole, before anything goes
upstream (the dialect's allow-list reads all of it), bounded three ways. At most
MAX_REQUEST_BYTES a body (the Messages API's own limit: nothing the API would take is
refused); at most MAX_HELD_BYTES held at once by one jail (`Held`: a jail cannot make the
harness hold its 32 connections' bodies at once, nor take memory another jail's requests
need); and parsed as JSON only when it has at most MAX_JSON_ITEMS objects, arrays and commas
(json.loads makes an object of each: `[[],[],...]` would take twenty times its bytes), one
big body parsed and checked at a time per jail.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..errors import OutputRejected
from .wire import Refusal

MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API's own cap on a request (32 MB)
MAX_HELD_BYTES = 2 * MAX_REQUEST_BYTES  # bodies one jail's connections hold at once
MAX_JSON_ITEMS = 1_000_000  # `{`, `[` and `,` in a body parsed (a long session: ~100,000)
BIG = 1024 * 1024  # a body past this is parsed one at a time per jail
PIECE = 65536


class TooLarge(OutputRejected):
    """The request's body is over MAX_REQUEST_BYTES."""

    def __init__(self, message: str = "the request's body is over the cap") -> None:
        super().__init__(message)


class OverHeld(OutputRejected):
    """The jail holds MAX_HELD_BYTES of bodies already: this one is turned away unread."""


class BadFraming(OutputRejected):
    """The request's body framing cannot be read (a bad Content-Length or chunk size)."""


class ClientGone(OutputRejected):
    """The jail's side failed while its body was read: it hung up, or went silent."""


class Held:
    """One jail's budget of request bytes held at once (thread-safe), and the lock its big
    bodies are parsed under."""

    def __init__(self, budget: int) -> None:
        self.budget, self.used = budget, 0
        self._lock = threading.Lock()
        self.parsing = threading.Lock()

    def take(self, size: int) -> bool:
        with self._lock:
            if self.used + size > self.budget:
                return False
            self.used += size
            return True

    def give(self, size: int) -> None:
        with self._lock:
            self.used -= size


def read_body(handler: BaseHTTPRequestHandler, held: Held) -> bytes | bytearray:
    """The request's whole body (b"" without one), its bytes taken from `held` (the caller
    gives back len(result) once it is sent); TooLarge, OverHeld, BadFraming or ClientGone
    when it cannot be read, with nothing left taken."""
    chunked = "chunked" in handler.headers.get("Transfer-Encoding", "").lower()
    if chunked:
        return _gather(_chunks(handler), held)
    try:
        length = int(handler.headers.get("Content-Length") or 0)
    except ValueError:
        raise BadFraming("Content-Length is not a number") from None
    if length < 0:
        raise BadFraming("Content-Length is negative")
    if length > MAX_REQUEST_BYTES:
        raise TooLarge
    if not held.take(length):
        raise OverHeld(f"the jail holds {held.used} bytes of request bodies already")
    try:
        return _whole(handler, length)
    except BaseException:
        held.give(length)
        raise


def _whole(handler: BaseHTTPRequestHandler, length: int) -> bytes:
    # One read of the declared length: the buffered reader fills one bytes object of that
    # size (a bytearray grown piece by piece, then copied, held twice the body for a moment)
    try:
        data = handler.rfile.read(length)
    except OSError as exc:
        raise ClientGone(type(exc).__name__) from None
    if len(data) < length:
        raise ClientGone("ConnectionResetError")  # the body was cut short
    return data


def _gather(pieces: Iterator[bytes], held: Held) -> bytearray:
    # Handed on as it grew (json.loads and the upstream send take a bytearray): copying it
    # out to bytes would hold the body twice over for a moment.
    data = bytearray()
    try:
        for piece in pieces:
            if not held.take(len(piece)):
                raise OverHeld(f"the jail holds {held.used} bytes of request bodies already")
            data += piece
    except BaseException:
        held.give(len(data))
        raise
    return data


def _chunks(handler: BaseHTTPRequestHandler) -> Iterator[bytes]:
    rfile, total = handler.rfile, 0
    try:
        while True:
            line = rfile.readline(1026)
            try:
                size = int(line.split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise BadFraming("a chunk size is not a number") from None
            if size == 0:
                for _ in range(64):  # the trailer, if any, up to its empty line
                    if rfile.readline(1026) in (b"\r\n", b"\n", b""):
                        return
                raise BadFraming("the trailer does not end")
            total += size
            if size < 0 or total > MAX_REQUEST_BYTES:
                raise TooLarge
            while size:
                piece = rfile.read(min(size, PIECE))
                if not piece:
                    raise ConnectionResetError("the body was cut short")
                size -= len(piece)
                yield piece
            rfile.readline(1026)
    except OSError as exc:
        raise ClientGone(type(exc).__name__) from None


def one_big_at_a_time(data: bytes | bytearray, held: Held) -> AbstractContextManager[Any]:
    """The lock a big body is parsed and checked under (nothing for a small one): its parsed
    form, as big again as its text, lives only under it, so a jail's connections hold at most
    one such form at once beside their bodies."""
    return held.parsing if len(data) > BIG else nullcontext()


def parsed(data: bytes | bytearray) -> Any:
    """The body as JSON (None when empty); a Refusal when it is not JSON, or holds more
    items than MAX_JSON_ITEMS (no CLI sends such a body: the jail wrote it)."""
    if not data.strip():
        return None
    items = data.count(b"{") + data.count(b"[") + data.count(b",")  # C speed, before parsing
    if items > MAX_JSON_ITEMS:
        return Refusal(f"the body holds more than {MAX_JSON_ITEMS} JSON items")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return Refusal("the body is not JSON")


__all__ = [
    "MAX_HELD_BYTES",
    "MAX_JSON_ITEMS",
    "MAX_REQUEST_BYTES",
    "BadFraming",
    "ClientGone",
    "Held",
    "OverHeld",
    "TooLarge",
    "one_big_at_a_time",
    "parsed",
    "read_body",
]
