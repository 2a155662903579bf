"""Chat Completions as OpenCode speaks it, declared for the jail's forward (jail/wire.py): its
route, headers and request allow-list, and how a reply's tool calls (`tool_calls`, complete
at the choice's `finish_reason` or the stream's end) and usage read.

The allow-list is what the pinned OpenCode (opencode-ai 1.18.33, through its bundled
`@ai-sdk/openai-compatible` provider) was recorded sending against tests/fakes' Chat
Completions API in every mode and tool set skill-eval runs it with (references/security.md
lists it): function tools only, message content as text (its model is configured without
image input, so it sends none: no image URL the API would fetch), no stored completions, no
audio, no web search options, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...jail.model_replies import arguments
from ...jail.request_rules import one_of, outside
from ...jail.wire import ApiRequest, Call, Refusal, ReplyUsage
from .openai_dialect import OpenAiDialect, each, usage_of

TOP_LEVEL = frozenset(
    {"model", "max_tokens", "messages", "tools", "tool_choice", "stream", "stream_options"}
)
HEADERS = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "user-agent",
        "x-session-affinity",
        "x-session-id",
    }
)
MESSAGE = frozenset({"role", "content", "tool_calls", "tool_call_id"})
ROLES = frozenset({"system", "user", "assistant", "tool"})
TEXT = frozenset({"type", "text"})  # the one content part it sends


class ChatDialect(OpenAiDialect):
    """`POST /v1/chat/completions`, as OpenCode sends it."""

    name = "chat-completions"
    routes = frozenset({"/v1/chat/completions"})
    headers = HEADERS

    def check(self, request: ApiRequest) -> Refusal | None:
        body = request.body
        problem = outside(body, TOP_LEVEL, "the body")
        if problem is not None:
            return problem
        if "stream_options" in body:
            problem = outside(
                body["stream_options"], frozenset({"include_usage"}), "stream_options"
            )
        if problem is None and "tool_choice" in body:
            problem = one_of(body["tool_choice"], frozenset({"auto"}), "tool_choice")
        return problem or _tools(body.get("tools", [])) or _messages(body.get("messages"))

    def replies(self) -> ChatReplies:
        return ChatReplies()


def _tools(tools: Any) -> Refusal | None:
    """Function tools only (Chat Completions has no hosted tools, but a `custom` one or any
    other type is nothing OpenCode sends)."""
    problem = each(tools, frozenset({"type", "function"}), "tools")
    for index, tool in enumerate(tools if problem is None else []):
        where = f"tools[{index}]"
        problem = one_of(tool.get("type"), frozenset({"function"}), f"{where}.type") or outside(
            tool.get("function"), frozenset({"name", "description", "parameters"}), where
        )
        if problem is not None:
            return problem
    return problem


def _messages(messages: Any) -> Refusal | None:
    problem = each(messages, MESSAGE, "messages")
    for index, message in enumerate(messages if problem is None else []):
        where = f"messages[{index}]"
        problem = one_of(message.get("role"), ROLES, f"{where}.role")
        content = message.get("content")
        if problem is None and content is not None and not isinstance(content, str):
            problem = _parts(content, f"{where}.content")
        if problem is None and "tool_calls" in message:
            problem = _calls(message["tool_calls"], f"{where}.tool_calls")
        if problem is not None:
            return problem
    return problem


def _parts(parts: Any, where: str) -> Refusal | None:
    problem = each(parts, TEXT, where)
    for index, part in enumerate(parts if problem is None else []):
        problem = one_of(part.get("type"), frozenset({"text"}), f"{where}[{index}].type")
        if problem is not None:
            return problem
    return problem


def _calls(calls: Any, where: str) -> Refusal | None:
    problem = each(calls, frozenset({"id", "type", "function"}), where)
    for index, call in enumerate(calls if problem is None else []):
        at = f"{where}[{index}]"
        problem = one_of(call.get("type"), frozenset({"function"}), f"{at}.type") or outside(
            call.get("function"), frozenset({"name", "arguments"}), f"{at}.function"
        )
        if problem is not None:
            return problem
    return problem


class ChatReplies:
    """One Chat Completions reply's tool calls (choice 0's `tool_calls`, put together by their
    index, complete at its `finish_reason` or the stream's end) and usage (the chunk that
    carries it, with `stream_options.include_usage`)."""

    def __init__(self) -> None:
        self._open: dict[int, list[Any]] = {}  # index -> [id, name, argument parts]
        self._model: Any = None
        self._usage: Any = None

    def event(self, event: Mapping[str, Any]) -> list[Call]:
        self._model = event.get("model", self._model)
        self._usage = event.get("usage") or self._usage
        choices = event.get("choices")
        finished = False
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            finished = finished or bool(choice.get("finish_reason"))
            delta = choice.get("delta")
            calls = delta.get("tool_calls") if isinstance(delta, Mapping) else None
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, Mapping):
                    self._add(call)
        return self.done() if finished else []

    def _add(self, call: Mapping[str, Any]) -> None:
        index = call.get("index", 0)
        open_call = self._open.setdefault(index if isinstance(index, int) else 0, ["", "", []])
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        open_call[0] = open_call[0] or str(call.get("id") or "")
        open_call[1] = open_call[1] or str(function.get("name") or "")
        if isinstance(function.get("arguments"), str):
            open_call[2].append(function["arguments"])

    def done(self) -> list[Call]:
        calls = [
            (call_id, name, arguments("".join(parts)))
            for call_id, name, parts in (self._open[i] for i in sorted(self._open))
        ]
        self._open.clear()
        return calls

    def whole(self, body: Any) -> list[Call]:
        if not isinstance(body, Mapping) or not isinstance(body.get("choices"), list):
            return []
        self._model, self._usage = body.get("model"), body.get("usage")
        first = body["choices"][0] if body["choices"] else {}
        message = first.get("message") if isinstance(first, Mapping) else None
        found = message.get("tool_calls") if isinstance(message, Mapping) else None
        calls = []
        for call in found if isinstance(found, list) else []:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                said = arguments(str(function.get("arguments") or ""))
                calls.append((str(call.get("id")), str(function.get("name")), said))
        return calls

    def usage(self) -> ReplyUsage | None:
        return usage_of(self._model, self._usage, "prompt_tokens", "completion_tokens")


CHAT = ChatDialect()

__all__ = ["CHAT", "HEADERS", "TOP_LEVEL", "ChatDialect", "ChatReplies"]
