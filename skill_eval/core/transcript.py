"""The agent's transcript as judges read it: how tool calls are trimmed (inputs and outputs
are a record to read, not a copy of every file the agent touched), how a tool result reads as
text, and which calls invoked a skill. Executors build the calls (executors/claude/stream.py
from Claude Code's stream-json; executors/agents/ from OpenCode's and Codex's JSON events),
each agent's tools under the names and input fields Claude Code gives them (`Skill` with
`skill`, `Read` / `Write` / `Edit` with `file_path`, `Bash` with `command`), so one judge
reads every agent's transcript."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .bounded import MAX_TRANSCRIPT_CALLS
from .work import ToolCall

# Per string inside a tool's input, and per tool output: a transcript is a record to read and
# judge, not a copy of every file the agent wrote or read.
INPUT_LIMIT = 2000
OUTPUT_LIMIT = 4000
NO_RESULT = "(no result: the run ended before the tool answered)"
# A folder an agent finds a project's skills in, as (parent, folder): (".claude", "skills").
# A Read of `<root>/<name>/SKILL.md` loads skill <name>, as its Skill call would. Each executor
# declares its own (ExecutorSpec.skill_roots); executors/catalog.py passes them all in.
SkillRoot = tuple[str, str]
TRANSCRIPT_CUT = "(transcript cut)"  # no tool has this name: the marker of a cut transcript


@dataclass
class PendingCall:
    """A tool call as an executor reads it from its agent's events, before the result: its
    `output` stays None when no result came back."""

    name: str
    input: Mapping[str, Any]
    ok: bool = False
    output: str | None = None


def event_of(line: bytes) -> dict[str, Any] | None:
    """One line of an agent CLI's JSON event stream as an object; None when it is not one
    (the readers count such lines, never trust them)."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def calls_transcript(calls: Iterable[PendingCall], dropped: int) -> tuple[ToolCall, ...]:
    """Every kept call in order (`completed` only when its result came back) and, when
    `dropped` more were made past MAX_TRANSCRIPT_CALLS, a last TRANSCRIPT_CUT entry saying how
    many: such an attempt fails unjudged, since a call not kept could be the one a judge
    looks for."""
    kept = tuple(
        ToolCall(c.name, c.input, c.ok, c.output or "", completed=c.output is not None)
        for c in calls
    )
    if not dropped:
        return kept
    made = len(kept) + dropped
    cut = ToolCall(
        TRANSCRIPT_CUT,
        {},
        False,
        f"the agent made {made:,} tool calls, over the {MAX_TRANSCRIPT_CALLS:,} skill-eval "
        f"keeps of one attempt (... and {dropped:,} more): not judged",
    )
    return (*kept, cut)


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


def invokes_skill(tool: str, tool_input: Any, skill: str, *, roots: Collection[SkillRoot]) -> bool:
    """Whether one tool call loads project skill `skill`: a `Skill` call naming it, or a
    `Read` of its installed SKILL.md in one of the skill folders `roots` (the rule of
    `skill_invocations` with plugin names off: a trigger attempt installs no plugin)."""
    if not isinstance(tool_input, Mapping):
        return False
    if tool == "Skill":
        return tool_input.get("skill") == skill
    path = tool_input.get("file_path")
    return tool == "Read" and isinstance(path, str) and _is_skill_file(path, skill, roots)


def transcript_problem(transcript: Sequence[ToolCall]) -> str | None:
    """Why an attempt's transcript cannot be judged (it was cut); None when it can."""
    last = transcript[-1] if transcript else None
    return last.output if last is not None and last.name == TRANSCRIPT_CUT else None


def _is_skill_file(path: str, skill_name: str | None, roots: Collection[SkillRoot]) -> bool:
    """`path` ends in `<root>/<skill_name>/SKILL.md` for one of `roots` (any skill when
    None), compared part by part."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return (
        len(parts) >= 4
        and parts[-4:-2] in roots
        and parts[-1] == "SKILL.md"
        and (skill_name is None or parts[-2] == skill_name)
    )


def skill_invocations(
    transcript: Iterable[ToolCall],
    skill_name: str | None,
    *,
    roots: Collection[SkillRoot],
    plugin_names: bool = True,
) -> tuple[ToolCall, ...]:
    """The calls that loaded skill `skill_name` (any skill when None): a `Skill` call naming
    it (as `name`, or a plugin's `plugin:name` unless `plugin_names` is False: a trigger
    attempt installs no plugin, so there such a name is another skill), or a `Read` of its
    installed SKILL.md (in one of the skill folders `roots`). Field-exact: reading
    `a.pdf` does not invoke a skill named `pdf`, nor does a `Bash` command (Codex, which loads
    a skill with a shell command, has its parser record that as a `Skill` call)."""
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
            if isinstance(path, str) and _is_skill_file(path, skill_name, roots):
                found.append(call)
    return tuple(found)
