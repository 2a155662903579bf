"""The agent's transcript from Claude Code's message stream: ordered tool calls (name, trimmed
input, ok/error, trimmed output), the skill invocations among them, and the final result.

Reads the messages as plain mappings, the way `executors/sdk_child.py` writes them (the
claude-agent-sdk message dataclasses, each tagged with its class name as `kind` and each content
block with its class name as `block`), so it needs no SDK and tests can feed it data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from .bounded import MAX_TRANSCRIPT_CALLS
from .work import ToolCall

# Per string inside a tool's input, and per tool output: a transcript is a record to read and
# judge, not a copy of every file the agent wrote or read.
INPUT_LIMIT = 2000
OUTPUT_LIMIT = 4000
NO_RESULT = "(no result: the run ended before the tool answered)"
TRANSCRIPT_CUT = "(transcript cut)"  # no tool has this name: the marker of a cut transcript


def trim_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def trim_value(value: Any, limit: int = INPUT_LIMIT) -> Any:
    """`value` with every string in it trimmed to `limit` (keys kept)."""
    if isinstance(value, str):
        return trim_text(value, limit)
    if isinstance(value, Mapping):
        return {str(k): trim_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [trim_value(v, limit) for v in value]
    return value


def result_text(content: Any) -> str:
    """A tool result's content as text: a string, or text blocks joined by newlines (other
    blocks, such as images, are named)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, Mapping):
                parts.append(f"[{block.get('type') or block.get('block') or 'block'}]")
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return json.dumps(content, default=str)


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping)]


def tool_calls(
    messages: Iterable[Mapping[str, Any]],
    *,
    input_limit: int = INPUT_LIMIT,
    output_limit: int = OUTPUT_LIMIT,
    max_calls: int = MAX_TRANSCRIPT_CALLS,
) -> tuple[ToolCall, ...]:
    """Every tool call in the stream, in the order the model made them, each with its result
    (matched by tool_use id). A call that never got a result counts as failed. Past
    `max_calls` calls the rest are counted, not kept, and a last TRANSCRIPT_CUT entry says how
    many (`transcript_problem`: such an attempt fails unjudged, since a call not kept could be
    the one a judge looks for)."""
    order: list[str] = []
    calls: dict[str, dict[str, Any]] = {}
    dropped = 0
    for message in messages:
        kind = message.get("kind")
        for block in _blocks(message):
            if kind == "AssistantMessage" and block.get("block") == "ToolUseBlock":
                if len(order) >= max_calls:
                    dropped += 1
                    continue
                call_id = str(block.get("id") or f"call-{len(order)}")
                order.append(call_id)
                raw = block.get("input")
                calls[call_id] = {
                    "name": str(block.get("name") or "?"),
                    "input": trim_value(raw if isinstance(raw, Mapping) else {}, input_limit),
                    "ok": False,
                    "output": NO_RESULT,
                }
            elif kind == "UserMessage" and block.get("block") == "ToolResultBlock":
                call = calls.get(str(block.get("tool_use_id")))
                if call is not None:
                    call["ok"] = not block.get("is_error")
                    call["output"] = trim_text(result_text(block.get("content")), output_limit)
    kept = tuple(ToolCall(**calls[i]) for i in order)
    if not dropped:
        return kept
    cut = ToolCall(
        TRANSCRIPT_CUT,
        {},
        False,
        f"the agent made {len(order) + dropped:,} tool calls, over the {max_calls:,} "
        f"skill-eval keeps of one attempt (... and {dropped:,} more): not judged",
    )
    return (*kept, cut)


def transcript_problem(transcript: Sequence[ToolCall]) -> str | None:
    """Why an attempt's transcript cannot be judged (it was cut); None when it can."""
    last = transcript[-1] if transcript else None
    return last.output if last is not None and last.name == TRANSCRIPT_CUT else None


def _is_skill_file(path: str, skill_name: str | None) -> bool:
    """`path` ends in `.claude/skills/<skill_name>/SKILL.md` (any skill when None), compared
    part by part."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return (
        len(parts) >= 4
        and parts[-4:-2] == (".claude", "skills")
        and parts[-1] == "SKILL.md"
        and (skill_name is None or parts[-2] == skill_name)
    )


def skill_invocations(
    transcript: Iterable[ToolCall], skill_name: str | None, *, plugin_names: bool = True
) -> tuple[ToolCall, ...]:
    """The calls that loaded skill `skill_name` (any skill when None): a `Skill` call naming
    it (as `name`, or a plugin's `plugin:name` unless `plugin_names` is False: a trigger
    attempt installs no plugin, so there such a name is another skill), or a `Read` of its
    installed SKILL.md. Field-exact: reading `a.pdf` does not invoke a skill named `pdf`."""
    found = []
    for call in transcript:
        if call.name == "Skill":
            named = call.input.get("skill")
            if (
                isinstance(named, str)
                and named
                and (
                    skill_name is None
                    or named == skill_name
                    or plugin_names
                    and named.endswith(f":{skill_name}")
                )
            ):
                found.append(call)
        elif call.name == "Read":
            path = call.input.get("file_path")
            if isinstance(path, str) and _is_skill_file(path, skill_name):
                found.append(call)
    return tuple(found)


def final_result(messages: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The stream's last ResultMessage (what the CLI reports about the whole run)."""
    return next((m for m in reversed(messages) if m.get("kind") == "ResultMessage"), None)


def last_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the last assistant message that has any (when the result holds none)."""
    for message in reversed(messages):
        if message.get("kind") == "AssistantMessage":
            texts = [str(b.get("text")) for b in _blocks(message) if b.get("block") == "TextBlock"]
            if texts:
                return "\n".join(texts)
    return ""
