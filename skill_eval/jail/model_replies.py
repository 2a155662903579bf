"""The tool calls in a model reply, read by the API proxy as it relays the reply (a JSON body
or a stream of server-sent events, bounded): Messages `tool_use` blocks; Chat Completions
`tool_calls`; Responses `function_call`, `custom_tool_call` and `local_shell_call` items.

    tap = ReplyTap("anthropic", content_type, content_length)
    tap.feed(chunk); log(tap.take()); relay(chunk)   # each call taken before its last byte goes
    readable = tap.finish(); log(tap.take())         # False: over the cap

A call is complete, and taken, with the chunk that completes it (a Messages block's stop, a
Responses item's `done`, a Chat Completions choice's `finish_reason`, a JSON body's last byte
when its length is known), before the agent can read it. An event that does not parse is
skipped: the reply comes from the API, and the agent cannot have read a call from it either.
"""

from __future__ import annotations

import json
from typing import Any, Literal

Dialect = Literal["anthropic", "openai"]
MAX_REPLY_BYTES = 16 * 1024 * 1024  # what one reply may hold for reading (a reply is ~100 KB)
RESPONSES_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})


class ReplyTap:
    """Reads one reply's tool calls from its bytes as they pass; never holds more than
    MAX_REPLY_BYTES (then it stops reading and says the reply was not read)."""

    def __init__(self, dialect: Dialect, content_type: str, length: int | None = None) -> None:
        self.dialect, self.length = dialect, length
        self.stream = "text/event-stream" in content_type.lower()
        self.held = 0
        self.broken = False
        self._buffer = bytearray()
        self._data: list[bytes] = []  # the data lines of the event being read
        self._blocks: dict[int, list[Any]] = {}  # an open block or call: [id, name, parts]
        self._calls: list[tuple[str, str, Any]] = []

    def feed(self, chunk: bytes) -> None:
        if self.broken:
            return
        self.held += len(chunk)
        if self.held > MAX_REPLY_BYTES:
            self.broken = True
            self._buffer.clear()
            self._blocks.clear()
            return
        self._buffer += chunk
        if self.stream:
            self._lines()
        elif self.length is not None and self.held >= self.length:
            self._parse_whole()

    def take(self) -> list[tuple[str, str, Any]]:
        """The calls completed since the last take, in order."""
        taken, self._calls = self._calls, []
        return taken

    def finish(self) -> bool:
        """The reply ended (or was cut off): take its last calls; False when it was over the
        cap, so its calls are unknown."""
        if self.broken:
            return False
        if self.stream:
            self._lines(final=True)
            self._chat_calls()
        elif self._buffer:
            self._parse_whole()
        return True

    def _parse_whole(self) -> None:
        try:
            body = json.loads(bytes(self._buffer))
        except ValueError:
            body = None  # cut off, or not JSON: the agent cannot have read a call from it
        self._buffer.clear()
        self._whole(body)

    # -- server-sent events ----------------------------------------------------------------

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
            self._chat_calls()
            return
        try:
            event = json.loads(data)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if self.dialect == "anthropic":
            self._messages_event(event)
        elif isinstance(event.get("choices"), list):
            self._chat_chunk(event["choices"])
        elif event.get("type") == "response.output_item.done":
            self._responses_item(event.get("item"))

    def _messages_event(self, event: dict[str, Any]) -> None:
        kind, index = event.get("type"), event.get("index")
        if not isinstance(index, int):
            return
        if kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._blocks[index] = [str(block.get("id")), str(block.get("name")), []]
        elif kind == "content_block_delta" and index in self._blocks:
            delta = event.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("partial_json"), str):
                self._blocks[index][2].append(delta["partial_json"])
        elif kind == "content_block_stop" and index in self._blocks:
            call_id, name, parts = self._blocks.pop(index)
            self._calls.append((call_id, name, _arguments("".join(parts))))

    def _chat_chunk(self, choices: list[Any]) -> None:
        finished = False
        for choice in choices:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                finished = finished or bool(choice.get("finish_reason"))
            delta = choice.get("delta") if isinstance(choice, dict) else None
            calls = delta.get("tool_calls") if isinstance(delta, dict) else None
            if not isinstance(calls, list) or choice.get("index", 0) != 0:
                continue
            for call in calls:
                if not isinstance(call, dict):
                    continue
                index = call.get("index", 0)
                open_call = self._blocks.setdefault(index if isinstance(index, int) else 0, [])
                if not open_call:
                    open_call += ["", "", []]
                function = call.get("function")
                function = function if isinstance(function, dict) else {}
                open_call[0] = open_call[0] or str(call.get("id") or "")
                open_call[1] = open_call[1] or str(function.get("name") or "")
                if isinstance(function.get("arguments"), str):
                    open_call[2].append(function["arguments"])
        if finished:
            self._chat_calls()

    def _chat_calls(self) -> None:
        """The Chat Completions calls of a stream, at its end, by their index."""
        if self.dialect != "openai":
            return
        for index in sorted(self._blocks):
            call_id, name, parts = self._blocks[index]
            self._calls.append((call_id, name, _arguments("".join(parts))))
        self._blocks.clear()

    # -- a whole JSON reply ----------------------------------------------------------------

    def _whole(self, body: Any) -> None:
        if not isinstance(body, dict):
            return
        if self.dialect == "anthropic":
            for block in _list(body.get("content")):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call = (str(block.get("id")), str(block.get("name")), block.get("input"))
                    self._calls.append(call)
        elif isinstance(body.get("choices"), list):
            first = body["choices"][0] if body["choices"] else {}
            message = first.get("message") if isinstance(first, dict) else None
            for call in _list(message.get("tool_calls") if isinstance(message, dict) else None):
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    arguments = _arguments(str(function.get("arguments") or ""))
                    self._calls.append((str(call.get("id")), str(function.get("name")), arguments))
        else:
            for item in _list(body.get("output")):
                self._responses_item(item)

    def _responses_item(self, item: Any) -> None:
        if not isinstance(item, dict) or item.get("type") not in RESPONSES_CALLS:
            return
        call_id = str(item.get("call_id") or item.get("id") or "")
        if item["type"] == "function_call":
            tool_input = _arguments(str(item.get("arguments") or ""))
        elif item["type"] == "custom_tool_call":
            tool_input = {"input": str(item.get("input") or "")}
        else:
            tool_input = {"action": item.get("action")}
        name = str(item.get("name") or item["type"])
        self._calls.append((call_id, name, tool_input))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _arguments(text: str) -> Any:
    """A function call's arguments: the JSON object they hold, else the text itself."""
    try:
        return json.loads(text or "{}")
    except ValueError:
        return {"input": text}
