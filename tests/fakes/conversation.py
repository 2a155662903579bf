"""Reading a request as a conversation, whatever its protocol: the fakes' rules and templates
work on one `Conversation` (system prompt, message texts, tool definitions, turn number, newest
tool results, stated working directory), which a reader per protocol builds from the body:
`read_messages` (Anthropic Messages), `read_chat` (OpenAI Chat Completions) and
`read_responses` (OpenAI Responses).

Pure functions of the request body: because every script state is derived from the request
itself, concurrent conversations and retried requests never disturb each other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# How agents state their working directory: Claude Code 2.1.x says "Primary working
# directory: /abs/path" (older versions and `--bare`: "Working directory: ..." / "CWD: ...");
# OpenCode's <env> block says "  Working directory: /abs/path"; Codex's
# <environment_context> holds "<cwd>/abs/path</cwd>".
_CWD_PATTERNS = (
    re.compile(r"Primary working directory: *(\S[^\n]*)"),
    re.compile(r"^ *(?:- *)?Working directory: *(\S[^\n]*)", re.MULTILINE),
    re.compile(r"^CWD: *(\S[^\n]*)", re.MULTILINE),
    re.compile(r"<cwd>([^<\n]+)</cwd>"),
)


@dataclass(frozen=True)
class ToolResult:
    """One tool result of the newest turn, with the name of the tool it answers (looked up
    through its id in the model's earlier calls; None when not found). `is_error` is what the
    protocol says (only Anthropic's `tool_result` has the flag; OpenAI's results never set it)."""

    tool_use_id: str
    name: str | None
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Conversation:
    """A request as the rules see it: `system` (system/developer instructions as one text),
    `messages` (each other message's or item's text, tool calls and results included),
    `tool_names` and `tools` (the definitions offered), `turn` (1 + the model turns already in
    it), `last_user` (the newest tool results, else the newest user message), `tool_results`
    (those of the newest turn), `tool_choice` (the forced tool's name), the model, `stream`,
    the reply's token bound, and the raw body."""

    system: str = ""
    messages: tuple[str, ...] = ()
    tool_names: tuple[str, ...] = ()
    tools: tuple[Any, ...] = ()
    turn: int = 1
    last_user: str = ""
    tool_results: tuple[ToolResult, ...] = ()
    tool_choice: str | None = None
    model: str | None = None
    stream: bool = False
    max_tokens: int | None = None
    body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def messages_text(self) -> str:
        return "\n".join(self.messages)

    def request_text(self) -> str:
        """Everything a model would read: system prompt, tool definitions (as JSON, so names,
        descriptions and schemas) and every message. Where a client lists its skills can move
        between versions; a match on this text does not care."""
        tools_text = json.dumps(list(self.tools), ensure_ascii=False) if self.tools else ""
        return "\n".join([self.system, tools_text, *self.messages])

    def working_directory(self) -> str | None:
        """The working directory the client states in its prompt (system or messages)."""
        for text in (self.system, *self.messages):
            for pattern in _CWD_PATTERNS:
                found = pattern.search(text)
                if found:
                    return found.group(1).strip()
        return None


def text_of(content: Any) -> str:
    """All text in a message content, system prompt or block list, tool results and tool-call
    inputs included (Anthropic blocks, OpenAI content parts and items alike)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(item) for item in content)
    if isinstance(content, dict):
        keys = ("text", "content", "thinking", "arguments", "output")
        parts = [text_of(content[k]) for k in keys if k in content]
        given = content.get("input")
        if content.get("type") == "tool_use" and given is not None:
            parts.append(json.dumps(given, ensure_ascii=False))
        elif isinstance(given, str):  # a Responses custom tool call's freeform input
            parts.append(given)
        return "\n".join(p for p in parts if p)
    return str(content)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- Anthropic Messages ----------------------------------------------------------------------------


def read_messages(body: Mapping[str, Any]) -> Conversation:
    """A Messages API request (`system`, `messages` of blocks, `tools`, `tool_choice`)."""
    messages = _dicts(body.get("messages"))
    names: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "assistant":
            for block in _dicts(message.get("content")):
                if block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    results = [
        ToolResult(
            tool_use_id=str(block.get("tool_use_id")),
            name=names.get(str(block.get("tool_use_id"))),
            content=text_of(block.get("content")),
            is_error=bool(block.get("is_error")),
        )
        for block in _dicts(last_user.get("content") if last_user else None)
        if block.get("type") == "tool_result"
    ]
    choice = body.get("tool_choice")
    tools = _dicts(body.get("tools"))
    return Conversation(
        system=text_of(body.get("system")),
        messages=tuple(text_of(m.get("content")) for m in messages),
        tool_names=tuple(str(t.get("name")) for t in tools if isinstance(t.get("name"), str)),
        tools=tuple(tools),
        turn=1 + sum(1 for m in messages if m.get("role") == "assistant"),
        last_user=text_of(last_user.get("content")) if last_user else "",
        tool_results=tuple(results),
        tool_choice=(
            _string(choice.get("name"))
            if isinstance(choice, dict) and choice.get("type") == "tool"
            else None
        ),
        model=_string(body.get("model")),
        stream=bool(body.get("stream")),
        max_tokens=_int(body.get("max_tokens")),
        body=body,
    )


# -- OpenAI Chat Completions -----------------------------------------------------------------------

_SYSTEM_ROLES = ("system", "developer")


def _chat_text(message: Mapping[str, Any]) -> str:
    calls = [
        f"{call['function'].get('name')} {call['function'].get('arguments')}"
        for call in _dicts(message.get("tool_calls"))
        if isinstance(call.get("function"), dict)
    ]
    return "\n".join(p for p in [text_of(message.get("content")), *calls] if p)


def read_chat(body: Mapping[str, Any]) -> Conversation:
    """A Chat Completions request: system/developer messages are the system prompt; tool
    calls are the assistant's `tool_calls`, answered by `role: tool` messages."""
    messages = _dicts(body.get("messages"))
    names = {
        str(call.get("id")): str(call["function"].get("name"))
        for m in messages
        if m.get("role") == "assistant"
        for call in _dicts(m.get("tool_calls"))
        if isinstance(call.get("function"), dict)
    }
    trailing: list[dict[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        trailing.insert(0, message)
    results = tuple(
        ToolResult(
            str(m.get("tool_call_id")),
            names.get(str(m.get("tool_call_id"))),
            text_of(m.get("content")),
        )
        for m in trailing
    )
    prompt = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    tools = _dicts(body.get("tools"))
    choice = body.get("tool_choice")
    forced = choice.get("function") if isinstance(choice, dict) else None
    return Conversation(
        system="\n".join(
            text_of(m.get("content")) for m in messages if m.get("role") in _SYSTEM_ROLES
        ),
        messages=tuple(_chat_text(m) for m in messages if m.get("role") not in _SYSTEM_ROLES),
        tool_names=_function_names(t.get("function") for t in tools),
        tools=tuple(tools),
        turn=1 + sum(1 for m in messages if m.get("role") == "assistant"),
        last_user=_newest_user_text(results, prompt),
        tool_results=results,
        tool_choice=_string(forced.get("name")) if isinstance(forced, dict) else None,
        model=_string(body.get("model")),
        stream=bool(body.get("stream")),
        max_tokens=_int(body.get("max_completion_tokens")) or _int(body.get("max_tokens")),
        body=body,
    )


def _newest_user_text(results: tuple[ToolResult, ...], prompt: Mapping[str, Any] | None) -> str:
    """What answers the model's newest turn: its tool results, else the newest user message."""
    if results:
        return "\n".join(r.content for r in results)
    return text_of(prompt.get("content")) if prompt else ""


def _function_names(definitions: Iterable[Any]) -> tuple[str, ...]:
    return tuple(
        d["name"] for d in definitions if isinstance(d, dict) and isinstance(d.get("name"), str)
    )


# -- OpenAI Responses ------------------------------------------------------------------------------

# Items the model produced in an earlier turn (sent back as input); a run of them is one turn.
MODEL_ITEMS = frozenset(
    {"function_call", "custom_tool_call", "reasoning", "local_shell_call", "web_search_call"}
)
RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})


def _item_kind(item: Mapping[str, Any]) -> str:
    kind = str(item.get("type") or "message")
    if kind == "message" and item.get("role") == "assistant":
        return "model"
    return "model" if kind in MODEL_ITEMS else kind


def read_responses(body: Mapping[str, Any]) -> Conversation:
    """A Responses request: `instructions` and system/developer message items are the system
    prompt; tool calls are `function_call` (or `custom_tool_call`) items, answered by
    `function_call_output` items with the same `call_id`. A plain-string `input` is one user
    message. A turn is a run of model-produced items."""
    raw = body.get("input")
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else _dicts(raw)
    kinds = [_item_kind(item) for item in items]
    names = {
        str(i.get("call_id")): str(i.get("name"))
        for i in items
        if i.get("type") in ("function_call", "custom_tool_call")
    }
    trailing = []
    for item, kind in zip(reversed(items), reversed(kinds), strict=True):
        if kind not in RESULT_ITEMS:
            break
        trailing.insert(0, item)
    results = tuple(
        ToolResult(str(i.get("call_id")), names.get(str(i.get("call_id"))), text_of(i["output"]))
        for i in trailing
        if "output" in i
    )
    system_items = [i for i in items if i.get("role") in _SYSTEM_ROLES]
    system = [text_of(body.get("instructions")), *(text_of(i.get("content")) for i in system_items)]
    prompt = next((i for i in reversed(items) if i.get("role") == "user"), None)
    tools = _dicts(body.get("tools"))
    choice = body.get("tool_choice")
    return Conversation(
        system="\n".join(s for s in system if s),
        messages=tuple(text_of(i) for i in items if i.get("role") not in _SYSTEM_ROLES),
        tool_names=_function_names(_flat_tools(tools)),
        tools=tuple(tools),
        turn=1 + sum(1 for at, k in enumerate(kinds) if k == "model" and kinds[at - 1 : at] != [k]),
        last_user=_newest_user_text(results, prompt),
        tool_results=results,
        tool_choice=_string(choice.get("name")) if isinstance(choice, dict) else None,
        model=_string(body.get("model")),
        stream=bool(body.get("stream")),
        max_tokens=_int(body.get("max_output_tokens")),
        body=body,
    )


def _flat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool definitions with a `namespace` tool's own tools in its place."""
    flat: list[dict[str, Any]] = []
    for tool in tools:
        flat.extend(_dicts(tool.get("tools")) if tool.get("type") == "namespace" else [tool])
    return flat


def tool_kind(conversation: Conversation, name: str) -> str:
    """The `type` of the tool definition called `name` (Responses: `function` or `custom`)."""
    for tool in _flat_tools(list(conversation.tools)):
        if tool.get("name") == name:
            return str(tool.get("type") or "function")
    return "function"


READERS: dict[str, Callable[[Mapping[str, Any]], Conversation]] = {
    "messages": read_messages,
    "chat": read_chat,
    "responses": read_responses,
}


# -- Messages-body helpers kept for tests' assertions ----------------------------------------------


def last_tool_results(body: Mapping[str, Any]) -> list[ToolResult]:
    """The tool results the newest user message of a Messages body carries."""
    return list(read_messages(body).tool_results)


def turn_number(body: Mapping[str, Any]) -> int:
    """Which model turn a Messages body asks for: 1 + the assistant messages already in it.
    A retry of a request asks for the same turn again, so scripts keyed on it survive retries."""
    return read_messages(body).turn


def working_directory(body: Mapping[str, Any]) -> str | None:
    """The working directory a Messages body states (system or messages), or None."""
    return read_messages(body).working_directory()


def request_text(body: Mapping[str, Any]) -> str:
    """Everything a model reads in a Messages body (see Conversation.request_text)."""
    return read_messages(body).request_text()
