"""Reading a Messages request as a conversation: its texts, its turn, its newest tool results,
the working directory Claude Code states, and the `{cwd}`-style templates replies may use.

Pure functions of the request body; the rules match on them and the replies are filled from them.
Because every script state is derived from the request itself, concurrent conversations and
retried requests never disturb each other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# How Claude Code states its working directory: the environment section of its prompt (2.1.x,
# in a `role: system` message) says "Primary working directory: /abs/path"; older versions
# and `--bare` say "Working directory: ..." / "CWD: ...".
_CWD_PATTERNS = (
    re.compile(r"Primary working directory: *(\S[^\n]*)"),
    re.compile(r"^ *(?:- *)?Working directory: *(\S[^\n]*)", re.MULTILINE),
    re.compile(r"^CWD: *(\S[^\n]*)", re.MULTILINE),
)
TEMPLATE_NAMES = ("cwd", "model", "tool_result", "judgement_tag", "decision_tag")
_TEMPLATE = re.compile(r"\{(" + "|".join(TEMPLATE_NAMES) + r")\}")


class TemplateError(ValueError):
    """A reply uses a template the request cannot fill (e.g. `{cwd}` with no stated cwd)."""


def text_of(content: Any) -> str:
    """All text in a message content, system prompt or block list, tool results included."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(item) for item in content)
    if isinstance(content, dict):
        parts = []
        for key in ("text", "content", "thinking"):
            if key in content:
                parts.append(text_of(content[key]))
        if content.get("type") == "tool_use" and "input" in content:
            parts.append(json.dumps(content["input"], ensure_ascii=False))
        return "\n".join(parts)
    return str(content)


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict)]


def system_text(body: Mapping[str, Any]) -> str:
    """The system prompt of a Messages request as one string (blocks joined by newlines)."""
    return text_of(body.get("system"))


def message_texts(body: Mapping[str, Any]) -> list[str]:
    """The text of each message of a Messages request, in order, tool results included."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [text_of(m.get("content")) if isinstance(m, dict) else "" for m in messages]


def request_text(body: Mapping[str, Any]) -> str:
    """Everything a model would read: system prompt, tool definitions (as JSON, so names,
    descriptions and schemas) and every message. Where a client lists its skills can move
    between versions; a match on this text does not care."""
    tools = body.get("tools")
    tools_text = json.dumps(tools, ensure_ascii=False) if tools else ""
    return "\n".join([system_text(body), tools_text, *message_texts(body)])


def last_user_message(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The newest message whose role is "user" (a prompt, or the newest tool results)."""
    for message in reversed(_messages(body)):
        if message.get("role") == "user":
            return message
    return None


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last message whose role is "user"."""
    message = last_user_message(body)
    return text_of(message.get("content")) if message else ""


def tool_choice_name(body: Mapping[str, Any]) -> str | None:
    """The forced tool's name when `tool_choice` is `{"type": "tool", "name": X}`."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        name = choice.get("name")
        return name if isinstance(name, str) else None
    return None


def turn_number(body: Mapping[str, Any]) -> int:
    """Which model turn this request asks for: 1 + the assistant messages already in it.

    A retry of a request asks for the same turn again, so scripts keyed on it survive retries.
    """
    return 1 + sum(1 for m in _messages(body) if m.get("role") == "assistant")


@dataclass(frozen=True)
class ToolResult:
    """One `tool_result` block of the newest user message, with the name of the tool it answers
    (looked up through its `tool_use_id` in the assistant messages; None when not found)."""

    tool_use_id: str
    name: str | None
    content: str
    is_error: bool


def _tool_names(body: Mapping[str, Any]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in _messages(body):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
    return names


def last_tool_results(body: Mapping[str, Any]) -> list[ToolResult]:
    """The tool results the newest user message carries (none on a plain prompt)."""
    message = last_user_message(body)
    content = message.get("content") if message else None
    if not isinstance(content, list):
        return []
    names = _tool_names(body)
    results = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            use_id = str(block.get("tool_use_id"))
            results.append(
                ToolResult(
                    tool_use_id=use_id,
                    name=names.get(use_id),
                    content=text_of(block.get("content")),
                    is_error=bool(block.get("is_error")),
                )
            )
    return results


def working_directory(body: Mapping[str, Any]) -> str | None:
    """The working directory the client states in its prompt (system or messages), or None."""
    for text in (system_text(body), *message_texts(body)):
        for pattern in _CWD_PATTERNS:
            found = pattern.search(text)
            if found:
                return found.group(1).strip()
    return None


def substitute(value: Any, body: Mapping[str, Any], where: str = "reply") -> Any:
    """`value` with `{cwd}`, `{model}`, `{tool_result}`, `{judgement_tag}` (the
    `judgement-NONCE` a text judge was asked to answer in) and `{decision_tag}` (the
    `decision-NONCE` a review's visionary was asked to answer in) filled from the request, in every
    string of nested lists and mappings (keys are left alone). Other braces pass untouched, so
    code and JSON in a scripted text need no escaping."""
    if isinstance(value, str):
        if not _TEMPLATE.search(value):
            return value
        return _TEMPLATE.sub(lambda m: _variable(m.group(1), body, where), value)
    if isinstance(value, list):
        return [substitute(item, body, where) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, body, where) for key, item in value.items()}
    return value


def _variable(name: str, body: Mapping[str, Any], where: str) -> str:
    if name == "cwd":
        cwd = working_directory(body)
        if cwd is None:
            raise TemplateError(
                f"{where} uses {{cwd}} but the request states no working directory "
                "(no 'Primary working directory: ...' line)"
            )
        return cwd
    if name == "model":
        return str(body.get("model") or "")
    if name in ("judgement_tag", "decision_tag"):  # the tag the answer was asked to sit in
        kind = name.removesuffix("_tag")
        found = re.findall(rf"<({kind}-[0-9a-f]+)>", json.dumps(body))
        if not found:
            raise TemplateError(f"{where} uses {{{name}}} but the request names none")
        # A judge is told in its system prompt (first); a visionary at the prompt's end (last).
        return str(found[0] if kind == "judgement" else found[-1])
    return "\n".join(result.content for result in last_tool_results(body))
