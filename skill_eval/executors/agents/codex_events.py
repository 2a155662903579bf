"""Codex's `exec --json` events, read as they arrive (@openai/codex 0.171.0, see
references/agents.md): `thread.started`, `turn.started`, `item.started` / `item.completed`
(`agent_message` text, `command_execution` with `command`, `aggregated_output`, `exit_code`,
`file_change` with `changes: [{path, kind}]`, `error` items that are warnings), then
`turn.completed` (`usage`, `input_tokens` counting the cached ones) or `turn.failed`
(`error.message`, Codex's own words: the status comes from the proxy's log); top-level `error`
events are its reconnect notices.

In the transcript a command is `Bash {command}` (the command inside Codex's `bash -lc`); an
apply_patch's change is `Write` (a file added), `Edit` (updated) or `Delete`, with
`file_path`. Codex has no skill tool: the model loads a skill by reading its SKILL.md with a
command, so a command that reads `<skills folder>/<name>/SKILL.md` is recorded as
`Skill {skill: name}` before its `Bash` entry (and a trigger attempt stops there, before the
command runs).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...core.failure import Failure
from ...core.model import ExecutionResult, Usage
from ...jail.api_log import ApiLog, SentCall
from ..catalog import skill_roots
from .codex_check import codex_tampering
from .events import EventReader, api_failure, stderr_tail

AGENT = "codex"
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
PATCH_TOOLS = {"add": "Write", "update": "Edit", "delete": "Delete"}
OTHER_TOOLS = {"mcp_tool_call": "mcp", "web_search": "WebSearch", "todo_list": "TodoWrite"}
_STATUS = re.compile(r"\b(40[0-9]|41[0-9]|429|5\d\d)\b")


def inner_command(command: str) -> str:
    """The command Codex ran inside its shell (`/bin/bash -lc 'CMD'` -> CMD)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and os.path.basename(argv[0]) in SHELLS and argv[1] in ("-lc", "-c"):
        return argv[2]
    return command


def skills_read(command: str) -> list[str]:
    """The skills whose installed SKILL.md `command` reads (names, in order, once each)."""
    return list(dict.fromkeys(_skill_file().findall(command)))


def _skill_file() -> re.Pattern[str]:
    """A path to an installed skill's SKILL.md, anywhere in a command, in any registered
    agent's skill folder: the name is the folder's (`re` keeps the compiled pattern)."""
    roots = "|".join(re.escape(f"{a}/{b}") for a, b in skill_roots())
    return re.compile(rf"(?:^|[\s'\"=:(<]|/)(?:{roots})/([A-Za-z0-9._-]+)/SKILL\.md(?![\w.])")


@dataclass
class CodexReader(EventReader):
    completed: bool = False
    failed: str | None = None
    reconnects: int = 0
    last_error: str = ""

    def tampering(self, sent: Sequence[SentCall], ranks: Mapping[int, int]) -> str | None:
        return codex_tampering(self.calls.items(), sent)  # its ids are its own: by content

    def event(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("type")
        item = event.get("item")
        item = item if isinstance(item, Mapping) else {}
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._item(item, done=kind == "item.completed")
        if kind == "turn.completed":
            self.completed = True
            self._usage(event.get("usage"))
        elif kind == "turn.failed":
            error = event.get("error")
            said = error.get("message") if isinstance(error, Mapping) else error
            self.failed = str(said or "turn failed")
            self._usage(event.get("usage"))
        elif kind == "error":
            self.last_error = str(event.get("message") or "")[:500]
            if self.last_error.startswith("Reconnecting"):
                self.reconnects += 1
        return True

    def _item(self, item: Mapping[str, Any], done: bool) -> bool:
        kind, item_id = item.get("type"), str(item.get("id") or f"item-{len(self.calls)}")
        if kind == "agent_message" and done and isinstance(item.get("text"), str):
            self.last_text = item["text"]
        elif kind == "command_execution":
            return self._command(item_id, item, done)
        elif kind == "file_change":
            return self._patch(item_id, item, done)
        elif kind == "error" and done:
            self.note(str(item.get("message") or ""))  # a warning: the turn goes on
        elif kind in OTHER_TOOLS:
            name = OTHER_TOOLS[str(kind)]
            if kind == "mcp_tool_call":
                name = f"mcp__{item.get('server')}__{item.get('tool')}"  # Claude Code's form
            fields = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
            going = self.call(item_id, name, fields)
            if done:
                result = item.get("result") or item.get("error") or ""
                self.answer(item_id, item.get("status") != "failed", str(result))
            return going
        return True

    def _command(self, item_id: str, item: Mapping[str, Any], done: bool) -> bool:
        command = inner_command(str(item.get("command") or ""))
        ids = [f"{item_id}#skill:{name}" for name in skills_read(command)]
        going = True
        for call_id in ids:
            going = self.call(call_id, "Skill", {"skill": call_id.split("#skill:", 1)[1]}) and going
        going = self.call(item_id, "Bash", {"command": command}) and going
        if done:
            ok = item.get("exit_code") == 0 and item.get("status") != "failed"
            output = str(item.get("aggregated_output") or "")
            for call_id in (*ids, item_id):
                self.answer(call_id, ok, output)
        return going

    def _patch(self, item_id: str, item: Mapping[str, Any], done: bool) -> bool:
        changes = item.get("changes")
        going = True
        for index, change in enumerate(changes if isinstance(changes, list) else []):
            if not isinstance(change, Mapping):
                continue
            call_id = f"{item_id}#{index}"
            kind = str(change.get("kind") or "update")
            name = PATCH_TOOLS.get(kind, "apply_patch")
            going = self.call(call_id, name, {"file_path": str(change.get("path") or "")}) and going
            if done:
                ok = item.get("status") == "completed"
                self.answer(call_id, ok, f"{kind} {change.get('path')}" if ok else "failed")
        return going

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        total = _int(usage.get("input_tokens"))  # Codex's input counts the cached tokens
        cached = min(_int(usage.get("cached_input_tokens")), total)
        written = min(_int(usage.get("cache_write_input_tokens")), total - cached)
        self.usage += Usage(
            input_tokens=total - cached - written,
            output_tokens=_int(usage.get("output_tokens")),
            cache_creation_input_tokens=written,
            cache_read_input_tokens=cached,
        )
        self.replies += 1

    def result(self, exit_code: int | None, stderr: str, api: ApiLog | None) -> ExecutionResult:
        """The attempt: its answer, or the failed turn classed by the API's last status (the
        proxy's log; without a jail, a status the message names), or why there is none."""
        meta = {**self.meta(), "reconnects": self.reconnects}
        more: dict[str, Any] = {"transcript": self.transcript(), "usage": self.usage, "meta": meta}
        if self.stopped_at_skill:
            return ExecutionResult(output=self.last_text, **more)
        if self.failed is not None:
            status = api.last_error() if api is not None else None
            if status is None and (named := _STATUS.search(self.failed)):
                status = int(named.group(1))
            ended = api_failure(AGENT, status or None, f"turn failed: {self.failed}", **more)
            if not status and ended.failure is not None:
                # a failed turn is the service's, whatever its words say
                return replace(ended, failure=replace(ended.failure, retry=True))
            return ended
        if not self.completed or exit_code != 0:
            tail = stderr_tail(stderr)
            meta.update(error_type="no_result", exit_code=exit_code)
            last = f"; its last error: {self.last_error}" if self.last_error else ""
            return ExecutionResult(
                failure=Failure.transient(
                    f"codex ended without a completed turn (exit code {exit_code}){last}"
                    + (f"; stderr: {tail}" if tail else "")
                ),
                **more,
            )
        return ExecutionResult(output=self.last_text, **more)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and value > 0 else 0
