"""The Messages API as Claude Code speaks it, declared for the jail's forward (jail/wire.py):
its routes, headers and `anthropic-beta` values, the request allow-list, and how a reply's
tool calls and usage read (`tool_use` blocks; `message_start` / `message_delta` usage).

The allow-list is what the pinned CLI (claude-agent-sdk's bundled Claude Code 2.1.330) was
recorded sending against tests/fakes' Messages API, in every mode and tool set skill-eval
runs it with (references/security.md lists it): client tools only (a tool with a `type` is a
server tool: web search, web fetch, code execution, bash, text editor, computer use, MCP
toolsets), no `mcp_servers` or `container`, images and documents only inline (`base64`: no
`url` or `file` source, no `container_upload`), and only the recorded betas (no Files API, no
MCP connector). `thinking` and `redacted_thinking` blocks are allowed back in assistant
turns: the API requires them there (the fake sends none, so they were not recorded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...jail.model_replies import arguments, tokens
from ...jail.request_rules import header_values, one_of, outside
from ...jail.wire import ApiDialect, ApiRequest, Call, Refusal, ReplyUsage

TOP_LEVEL = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "metadata",
        "max_tokens",
        "thinking",
        "context_management",
        "output_config",
        "stream",
    }
)
BETAS = frozenset(
    {
        "claude-code-20250219",
        "context-management-2025-06-27",
        "effort-2025-11-24",
        "extended-cache-ttl-2025-04-11",  # with a subscription login
        "interleaved-thinking-2025-05-14",
        "mid-conversation-tool-changes-2026-07-01",
        "oauth-2025-04-20",  # with a subscription login
        "per-turn-control-2026-07-01",
        "thinking-display-updates-2026-08-18",
        "thinking-token-count-2026-05-13",
    }
)
HEADERS = frozenset(
    {
        "accept",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "anthropic-version",
        "authorization",
        "content-type",
        "user-agent",
        "x-api-key",
        "x-app",
        "x-claude-code-session-id",
        "x-stainless-arch",
        "x-stainless-lang",
        "x-stainless-os",
        "x-stainless-package-version",
        "x-stainless-retry-count",
        "x-stainless-runtime",
        "x-stainless-runtime-version",
        "x-stainless-timeout",
    }
)
VERSIONS = frozenset({"2023-06-01"})
CLIENT_TOOL = frozenset({"name", "description", "input_schema", "cache_control", "defer_loading"})
CACHE = frozenset({"type", "ttl"})
# A content block's type -> the fields it may have.
BLOCKS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "cache_control"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
    "image": frozenset({"type", "source", "cache_control"}),
    "document": frozenset({"type", "source", "cache_control"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
}
IN_RESULTS = frozenset({"text", "image", "document"})  # what a tool result may hold
SOURCE = frozenset({"type", "media_type", "data"})  # `base64`, the only source type
SETTINGS: dict[str, tuple[frozenset[str], str, frozenset[str]]] = {
    # field -> (its keys, the key whose value is checked, the values allowed)
    "metadata": (frozenset({"user_id"}), "", frozenset()),
    "thinking": (
        frozenset({"type", "budget_tokens", "display"}),
        "type",
        frozenset({"enabled", "adaptive", "disabled"}),
    ),
    "output_config": (frozenset({"effort"}), "", frozenset()),
    "tool_choice": (frozenset({"type"}), "type", frozenset({"auto"})),
}
EDITS = frozenset({"clear_thinking_20251015"})


class MessagesDialect(ApiDialect):
    """`POST /v1/messages` (and `/count_tokens`, whose body is checked alike), as Claude Code
    sends it."""

    name = "messages"
    routes = frozenset({"/v1/messages", "/v1/messages/count_tokens"})
    queries = frozenset({"", "beta=true"})
    headers = HEADERS
    placeholder_prefix = "sk-ant-jail-"

    def credentials(self, key: str | None) -> dict[str, str]:
        return {"x-api-key": key} if key else {}

    def check(self, request: ApiRequest) -> Refusal | None:
        body = request.body
        return (
            header_values(request.headers, "anthropic-beta", BETAS)
            or header_values(request.headers, "anthropic-version", VERSIONS)
            or outside(body, TOP_LEVEL, "the body")
            or _settings(body)
            or _tools(body.get("tools", []))
            or _system(body.get("system", ""))
            or _messages(body.get("messages", []))
        )

    def replies(self) -> MessagesReplies:
        return MessagesReplies()


def _settings(body: Mapping[str, Any]) -> Refusal | None:
    for field, (keys, checked, values) in SETTINGS.items():
        if field in body:
            value = body[field]
            problem = outside(value, keys, field)
            if problem is None and checked:
                problem = one_of(value.get(checked), values, f"{field}.{checked}")
            if problem is not None:
                return problem
    if "context_management" in body:
        management = body["context_management"]
        problem = outside(management, frozenset({"edits"}), "context_management")
        if problem is not None:
            return problem
        for index, edit in enumerate(_list(management.get("edits"))):
            where = f"context_management.edits[{index}]"
            problem = outside(edit, frozenset({"type", "keep"}), where) or one_of(
                edit.get("type"), EDITS, f"{where}.type"
            )
            if problem is not None:
                return problem
    return None


def _tools(tools: Any) -> Refusal | None:
    """Client tools only: a tool with a `type` runs on the API's servers (or is a toolset)."""
    for index, tool in enumerate(_list(tools)):
        where = f"tools[{index}]"
        if isinstance(tool, Mapping) and "type" in tool and tool["type"] != "custom":
            return Refusal(f"{where} is a server tool ({str(tool['type'])[:60]})")
        problem = outside(tool, CLIENT_TOOL | {"type"}, where) or _cache(tool, where)
        if problem is not None:
            return problem
    return None


def _system(system: Any) -> Refusal | None:
    if isinstance(system, str):
        return None
    for index, block in enumerate(_list(system)):
        where = f"system[{index}]"
        problem = outside(block, BLOCKS["text"], where) or _typed(block, {"text"}, where)
        if problem is not None:
            return problem
    return None


def _messages(messages: Any) -> Refusal | None:
    for index, message in enumerate(_list(messages)):
        where = f"messages[{index}]"
        problem = outside(message, frozenset({"role", "content", "output_config"}), where)
        problem = problem or one_of(
            message.get("role"), frozenset({"user", "assistant", "system"}), f"{where}.role"
        )
        if problem is not None:
            return problem
        if "output_config" in message:
            config = message["output_config"]
            problem = outside(config, frozenset({"effort"}), f"{where}.output_config")
        content = message.get("content")
        if problem is None and not isinstance(content, str):
            problem = _blocks(content, set(BLOCKS), f"{where}.content")
        if problem is not None:
            return problem
    return None


def _blocks(blocks: Any, types: set[str], where: str) -> Refusal | None:
    for index, block in enumerate(_list(blocks)):
        at = f"{where}[{index}]"
        problem = _typed(block, types, at)
        if problem is not None:
            return problem
        kind = block["type"]
        problem = outside(block, BLOCKS[kind], at) or _cache(block, at)
        if problem is None and kind in ("image", "document"):
            source = block.get("source")
            problem = outside(source, SOURCE, f"{at}.source") or one_of(
                source.get("type"), frozenset({"base64"}), f"{at}.source.type"
            )
        if problem is None and kind == "tool_result" and not isinstance(block.get("content"), str):
            problem = _blocks(block.get("content", []), set(IN_RESULTS), f"{at}.content")
        if problem is not None:
            return problem
    return None


def _typed(block: Any, types: set[str], where: str) -> Refusal | None:
    if not isinstance(block, Mapping):
        return Refusal(f"{where} is not an object")
    return one_of(block.get("type"), frozenset(types), f"{where}.type")


def _cache(block: Any, where: str) -> Refusal | None:
    if isinstance(block, Mapping) and "cache_control" in block:
        return outside(block["cache_control"], CACHE, f"{where}.cache_control")
    return None


def _list(value: Any) -> list[Any]:
    """`value` when it is a list, else `[value]`: a field that must be a list and is not is
    then refused by its item's own check (an empty list here would let it through)."""
    return value if isinstance(value, list) else [value]


class MessagesReplies:
    """One Messages reply's tool calls (`tool_use` blocks, complete at their block's stop)
    and usage (`message_start`, then `message_delta`'s running totals)."""

    def __init__(self) -> None:
        self._blocks: dict[int, list[Any]] = {}  # an open tool_use block: [id, name, parts]
        self._model: str | None = None
        self._usage: dict[str, int] = {}

    def event(self, event: Mapping[str, Any]) -> list[Call]:
        kind, index = event.get("type"), event.get("index")
        if kind == "message_start" and isinstance(event.get("message"), Mapping):
            self._said(event["message"])
        elif kind == "message_delta":
            self._counted(event.get("usage"))
        if not isinstance(index, int):
            return []
        if kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                self._blocks[index] = [str(block.get("id")), str(block.get("name")), []]
        elif kind == "content_block_delta" and index in self._blocks:
            delta = event.get("delta")
            if isinstance(delta, Mapping) and isinstance(delta.get("partial_json"), str):
                self._blocks[index][2].append(delta["partial_json"])
        elif kind == "content_block_stop" and index in self._blocks:
            call_id, name, parts = self._blocks.pop(index)
            return [(call_id, name, arguments("".join(parts)))]
        return []

    def done(self) -> list[Call]:
        return []  # a block that never stopped was never a whole call

    def whole(self, body: Any) -> list[Call]:
        if not isinstance(body, Mapping):
            return []
        self._said(body)
        content = body.get("content")
        return [
            (str(block.get("id")), str(block.get("name")), block.get("input"))
            for block in (content if isinstance(content, list) else [])
            if isinstance(block, Mapping) and block.get("type") == "tool_use"
        ]

    def usage(self) -> ReplyUsage | None:
        if self._model is None and not self._usage:
            return None
        return ReplyUsage(self._model, **self._usage)

    def _said(self, message: Mapping[str, Any]) -> None:
        if isinstance(message.get("model"), str):
            self._model = message["model"]
        self._counted(message.get("usage"))

    def _counted(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ):
            if key in usage:  # message_delta's counts are running totals: the last one holds
                self._usage[key] = tokens(usage[key])


MESSAGES = MessagesDialect()

__all__ = ["BETAS", "HEADERS", "MESSAGES", "TOP_LEVEL", "MessagesDialect", "MessagesReplies"]
