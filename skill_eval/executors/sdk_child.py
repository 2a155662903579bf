"""One Claude Code query through claude-agent-sdk, run as its own process by the `claude-cli`
executor (`python sdk_child.py`, in a new session, with the isolated environment).

Why a process of its own: the SDK always passes its process's whole environment on to the CLI
and starts the CLI without a process group. Here the environment is already the isolated one,
and the executor kills this process's group on a timeout: the CLI and everything it started go
with it. Standard library and the SDK only, so it runs from any interpreter that has the SDK.

stdin: one JSON object {"prompt": str, "options": {ClaudeAgentOptions field: JSON value},
"sys_path": [dir, ...], "stop_at_skill": name or null}. stdout: one JSON line per message,
{"kind": <message class name>, **fields}; an exception ends the stream as
{"kind": "exception", "type": <class name>, "message": str}. With `stop_at_skill` (trigger
tasks) the stream stops after the message that invokes that skill, with {"kind": "stopped"}.
Exit code 0 unless stdin is bad.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from pathlib import PurePosixPath
from typing import Any

# A tool result or file read can be large; the executor trims far below this anyway.
MAX_STRING = 256 * 1024


def _trim(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_STRING:
        return value[:MAX_STRING]
    if isinstance(value, list):
        return [_trim(v) for v in value]
    if isinstance(value, dict):
        return {k: _trim(v) for k, v in value.items()}
    return value


def _fields(value: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {"repr": repr(value)}


def _plain(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = _fields(message)
    content = getattr(message, "content", None)
    if isinstance(content, list):
        # Content blocks are dataclasses without a type tag: name each one.
        data["content"] = [{"block": type(b).__name__, **_fields(b)} for b in content]
    return dict(_trim({"kind": type(message).__name__, **data}))


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, default=str) + "\n")
    sys.stdout.flush()


def invokes_skill(tool: str, tool_input: Any, skill: str) -> bool:
    """Whether one tool call loads project skill `skill`: the same field-exact rule as
    transcript.skill_invocations with plugin_names=False (this file imports nothing of
    skill_eval; a test keeps the two in step)."""
    if not isinstance(tool_input, dict):
        return False
    if tool == "Skill":
        named = tool_input.get("skill")
        return named == skill
    if tool == "Read":
        path = tool_input.get("file_path")
        if not isinstance(path, str):
            return False
        parts = PurePosixPath(path.replace("\\", "/")).parts
        return len(parts) >= 4 and parts[-4:] == (".claude", "skills", skill, "SKILL.md")
    return False


def _invoked(record: dict[str, Any], skill: str) -> bool:
    if record.get("kind") != "AssistantMessage":
        return False
    return any(
        b.get("block") == "ToolUseBlock"
        and invokes_skill(str(b.get("name")), b.get("input"), skill)
        for b in record.get("content") or ()
        if isinstance(b, dict)
    )


async def _run(prompt: str, options: dict[str, Any], stop_at_skill: str | None) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, query

    def stderr(line: str) -> None:
        sys.stderr.write(line.rstrip("\n") + "\n")

    opts = ClaudeAgentOptions(**options, stderr=stderr)
    messages = query(prompt=prompt, options=opts)
    async for message in messages:
        record = _plain(message)
        _emit(record)
        if stop_at_skill and _invoked(record, stop_at_skill):
            # A trigger attempt has its answer: the skill was invoked. Stop before the CLI
            # runs it or asks the model again (the executor kills what is left of the group).
            _emit({"kind": "stopped", "reason": "skill invoked", "skill": stop_at_skill})
            # Exit now: closing the SDK's stream politely waits for the CLI, which meanwhile
            # runs the skill and asks the model again. The executor kills our process group
            # (the CLI with it) as soon as we are gone.
            os._exit(0)


def main() -> int:
    try:
        request = json.loads(sys.stdin.read())
        prompt, options = request["prompt"], request["options"]
    except (ValueError, KeyError, TypeError) as exc:
        sys.stderr.write(f"sdk_child: bad request on stdin: {exc}\n")
        return 2
    for entry in reversed(request.get("sys_path") or ()):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        asyncio.run(_run(prompt, options, request.get("stop_at_skill")))
    except Exception as exc:  # reported as data: the executor decides what it means
        _emit({"kind": "exception", "type": type(exc).__name__, "message": str(exc)[:4000]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
