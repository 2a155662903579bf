"""A model reply read by the API forward as it relays it (a JSON body or a stream of
server-sent events, bounded): the bytes framed into events here, each event read by the
dialect's `ReplyReader` (wire.py) for the tool calls it completes and the reply's usage.

    tap = ReplyTap(dialect.replies(), content_type, content_length)
    tap.feed(chunk); log(tap.take()); relay(chunk)   # each call taken before its last byte goes
    readable = tap.finish(); log(tap.take())         # False: over the cap
    tap.usage()                                      # the reply's model and tokens, if it said

A call is complete, and taken, with the chunk that completes it (the reader says which event
does; a JSON body's last byte when its length is known), before the agent can read it. An
event that does not parse is skipped: the reply comes from the API, and the agent cannot
have read a call from it either. A reader that fails on a reply leaves it unread (its calls
unknown: the attempt's transcript cannot be checked, executors/tool_check.py).
"""

from __future__ import annotations

import json
from typing import Any

from .wire import Call, ReplyReader, ReplyUsage

MAX_REPLY_BYTES = 16 * 1024 * 1024  # what one reply may hold for reading (a reply is ~100 KB)


class ReplyTap:
    """Reads one reply's tool calls from its bytes as they pass; never holds more than
    MAX_REPLY_BYTES (then it stops reading and says the reply was not read)."""

    def __init__(self, reader: ReplyReader, content_type: str, length: int | None = None) -> None:
        self.reader, self.length = reader, length
        self.stream = "text/event-stream" in content_type.lower()
        self.held = 0
        self.broken = False
        self._buffer = bytearray()
        self._data: list[bytes] = []  # the data lines of the event being read
        self._calls: list[Call] = []
        self._ended = False

    def feed(self, chunk: bytes) -> None:
        if self.broken:
            return
        self.held += len(chunk)
        if self.held > MAX_REPLY_BYTES:
            self._give_up()
            return
        self._buffer += chunk
        try:
            if self.stream:
                self._lines()
            elif self.length is not None and self.held >= self.length:
                self._parse_whole()
        except Exception:  # a reader that fails on a reply: it was not read, and says so
            self._give_up()

    def _give_up(self) -> None:
        self.broken = True
        self._buffer.clear()
        self._calls.clear()

    def take(self) -> list[Call]:
        """The calls completed since the last take, in order."""
        taken, self._calls = self._calls, []
        return taken

    def finish(self) -> bool:
        """The reply ended (or was cut off): take its last calls; False when it was over the
        cap, so its calls are unknown."""
        if self.broken:
            return False
        try:
            if self.stream:
                self._lines(final=True)
                self._end()
            elif self._buffer:
                self._parse_whole()
        except Exception:
            self._give_up()
            return False
        return True

    def usage(self) -> ReplyUsage | None:
        """What the reply said it cost (None: it said nothing, or was not read)."""
        if self.broken:
            return None
        try:
            return self.reader.usage()
        except Exception:
            return None

    def _parse_whole(self) -> None:
        try:
            body = json.loads(bytes(self._buffer))
        except (ValueError, RecursionError):
            body = None  # cut off, or not JSON: the agent cannot have read a call from it
        self._buffer.clear()
        self._calls += self.reader.whole(body)

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._calls += self.reader.done()

    def _lines(self, final: bool = False) -> None:
        while (end := self._buffer.find(b"\n")) >= 0 or (final and self._buffer):
            line = bytes(self._buffer[: end if end >= 0 else len(self._buffer)]).rstrip(b"\r")
            del self._buffer[: end + 1 if end >= 0 else len(self._buffer)]
            if line.startswith(b"data:"):
                self._data.append(line[5:].removeprefix(b" "))
            elif not line and self._data:
                self._event(b"\n".join(self._data))
                self._data = []
        if final and self._data:
            self._event(b"\n".join(self._data))
            self._data = []

    def _event(self, data: bytes) -> None:
        if data.strip() == b"[DONE]":
            self._end()
            return
        try:
            event: Any = json.loads(data)
        except (ValueError, RecursionError):
            return
        if isinstance(event, dict):
            self._calls += self.reader.event(event)


def arguments(text: str) -> Any:
    """A function call's arguments: the JSON object they hold, else the text itself."""
    try:
        return json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {"input": text}


def tokens(value: Any) -> int:
    """A token count as a reply states it (anything else: 0)."""
    return int(value) if isinstance(value, int | float) and value > 0 else 0


__all__ = ["MAX_REPLY_BYTES", "ReplyTap", "arguments", "tokens"]
