"""What a fake server answers, before any protocol shapes it: the text, the tool calls (with
ids), why the turn stopped and the output tokens, planned from a rule and the request.

Each protocol renders the plan as its own body and stream (replies.py for Messages,
chat_protocol.py and responses_protocol.py for OpenAI). Token counts are estimates: about four
characters a token.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass
from typing import Any

from tests.fakes.conversation import Conversation
from tests.fakes.rules import Rule

TEXT_CHUNK = 24  # characters per streamed text delta
JSON_CHUNK = 16  # characters per streamed tool-input delta


def estimate_tokens(text: str) -> int:
    """About four characters a token, at least one for any non-empty text."""
    return math.ceil(len(text) / 4) if text else 0


def chunks(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters (one empty piece for an empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass(frozen=True)
class PlannedCall:
    """One tool call of a reply: its id, the tool's name and its input."""

    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class ReplyPlan:
    """A reply's content. `stop` is the rule's own `stop_reason` when it gives one, else
    `end_turn`, `tool_use` (a tool is called) or `max_tokens` (the text was cut); each protocol
    maps those three to its own words. `usage` holds the rule's overrides."""

    text: str | None
    calls: tuple[PlannedCall, ...]
    stop: str
    output_tokens: int
    usage: dict[str, Any]

    @property
    def arguments(self) -> list[str]:
        """Each call's input as the JSON text OpenAI's `arguments` carry."""
        return [json.dumps(call.input) for call in self.calls]


def plan_reply(
    rule: Rule | None, convo: Conversation, *, default_text: str, id_prefix: str
) -> ReplyPlan:
    """The reply `rule` (None: no rule matched and there is no default) gives `convo`. A text
    longer than the request's token bound (≈4 chars/token) is cut, unless tools are called."""
    text = rule.text if rule is not None else None
    calls: list[PlannedCall] = []
    if rule is not None and rule.tool_use is not None:
        uses = rule.tool_use if isinstance(rule.tool_use, list) else [rule.tool_use]
        calls = [
            _call(use["name"], use.get("input") or {}, use.get("id"), id_prefix) for use in uses
        ]
    elif rule is not None and rule.tool_input is not None:
        calls = [_call(_forced_tool(convo), rule.tool_input, None, id_prefix)]
    if text is None and not calls:
        text = default_text
    stop = rule.stop_reason if rule is not None and rule.stop_reason else None
    output_tokens = 0
    if text is not None:
        bound = convo.max_tokens
        if not calls and bound is not None and estimate_tokens(text) > bound:
            text = text[: max(0, bound) * 4]
            stop = stop or "max_tokens"
        output_tokens += estimate_tokens(text)
    output_tokens += sum(estimate_tokens(json.dumps(call.input)) for call in calls)
    return ReplyPlan(
        text=text,
        calls=tuple(calls),
        stop=stop or ("tool_use" if calls else "end_turn"),
        output_tokens=max(1, output_tokens),
        usage=dict(rule.usage or {}) if rule is not None else {},
    )


def _call(name: str, given: Any, call_id: str | None, prefix: str) -> PlannedCall:
    return PlannedCall(call_id or prefix + uuid.uuid4().hex[:20], name, given)


def _forced_tool(convo: Conversation) -> str:
    """The tool `tool_choice` forces, else the first tool offered, else "tool"."""
    if convo.tool_choice:
        return convo.tool_choice
    return convo.tool_names[0] if convo.tool_names else "tool"
