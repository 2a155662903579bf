"""Message bodies, SSE event sequences and token usage for the fake Anthropic server.

Shapes follow the Messages API as the official SDK parses them; the content comes from the
shared reply plan (reply_plan.py); prompt caching is simulated per server.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Mapping
from typing import Any

from tests.fakes.conversation import read_messages
from tests.fakes.reply_plan import JSON_CHUNK, TEXT_CHUNK, chunks, estimate_tokens, plan_reply
from tests.fakes.rules import Rule

DEFAULT_TEXT = "Hello from the fake Anthropic server."


def _part(item: Any, prefix: str = "") -> tuple[str, bool]:
    """A serialized prompt part without its cache marker, and whether it carried one.

    The marker is left out because the CLI moves its breakpoint to the newest message each
    turn: the cached prefix is the content, whatever is marked.
    """
    if not isinstance(item, dict):
        return prefix + str(item), False
    marked = "cache_control" in item
    plain = {k: v for k, v in item.items() if k != "cache_control"}
    return prefix + json.dumps(plain, sort_keys=True), marked


def _segments(body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The prompt in cache order (tools, system, messages) as (serialized part, is breakpoint)."""
    parts: list[tuple[str, bool]] = [_part(tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, list):
        parts.extend(_part(block) for block in system)
    elif system:
        parts.append((str(system), False))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        role = str(message.get("role"))
        if isinstance(content, list):
            parts.extend(_part(block, role) for block in content)
        else:
            parts.append((role + str(content), False))
    return parts


class UsageMeter:
    """Estimates usage for requests and remembers which cache prefixes were written."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def input_tokens(self, body: Mapping[str, Any]) -> int:
        """All input tokens of a request, cached or not (the count_tokens answer)."""
        return max(1, sum(estimate_tokens(text) for text, _ in _segments(body)))

    def measure(self, body: Mapping[str, Any]) -> dict[str, int]:
        """input_tokens / cache_creation_input_tokens / cache_read_input_tokens of a request.

        Each `cache_control` breakpoint closes a prefix; the longest prefix seen before is
        read from cache, the rest up to the last breakpoint is written to it.
        """
        parts = _segments(body)
        total = max(1, sum(estimate_tokens(text) for text, _ in parts))
        model = str(body.get("model"))
        digest = hashlib.sha256(model.encode())
        tokens = 0
        prefixes: list[tuple[str, int]] = []
        for text, marked in parts:
            digest.update(text.encode())
            tokens += estimate_tokens(text)
            if marked:
                prefixes.append((digest.copy().hexdigest(), tokens))
        if not prefixes:
            return {
                "input_tokens": total,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
        with self._lock:
            read = max((n for key, n in prefixes if key in self._seen), default=0)
            self._seen.update(key for key, _ in prefixes)
        cached = prefixes[-1][1]
        return {
            "input_tokens": max(1, total - cached),
            "cache_creation_input_tokens": cached - read,
            "cache_read_input_tokens": read,
        }


def build_message(body: Mapping[str, Any], rule: Rule | None, usage: Mapping[str, int]) -> dict:
    """The complete non-streaming Message a rule answers `body` with."""
    plan = plan_reply(rule, read_messages(body), default_text=DEFAULT_TEXT, id_prefix="toolu_fake_")
    content: list[dict[str, Any]] = []
    if plan.text is not None:
        content.append({"type": "text", "text": plan.text})
    content += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
        for call in plan.calls
    ]
    full_usage = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
        "cache_read_input_tokens": usage["cache_read_input_tokens"],
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": plan.output_tokens,
        "service_tier": "standard",
        **plan.usage,
    }
    return {
        "id": "msg_fake_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or "claude-fake"),
        "content": content,
        "stop_reason": plan.stop,
        "stop_sequence": None,
        "usage": full_usage,
    }


def sse_events(message: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) sequence that streams `message` exactly as the API does."""
    usage = dict(message["usage"])
    start_usage = dict(usage, output_tokens=1)
    start = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=start_usage)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in chunks(block["text"], TEXT_CHUNK)]
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [
                {"type": "input_json_delta", "partial_json": c} for c in chunks(raw, JSON_CHUNK)
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {
                    key: usage[key]
                    for key in (
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                        "output_tokens",
                    )
                },
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def encode_event(name: str, data: Mapping[str, Any]) -> bytes:
    """One SSE frame."""
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
