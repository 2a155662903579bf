"""OpenCode's `run --format json` events, read as they arrive (opencode-ai 1.18.33, see
references/agents.md): `step_start`; `text` (`part.text`); `tool_use`, one per finished call
(`part.tool`, `part.callID`, `part.state.{status, input, output | error}`); `step_finish`
(`part.tokens`: `{input, output, reasoning, cache: {read, write}}`, `input` without the
cached tokens; `part.cost`); `error` (`error.name`, `error.data.{message, statusCode}`) after
OpenCode's own retries of an API error, then exit 1.

Tools become Claude Code's names with snake_case fields (`write {filePath, content}` ->
`Write {file_path, content}`, `skill {name}` -> `Skill {skill}`), so one judge reads every
agent's transcript; a tool with no counterpart keeps its own name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.failure import Failure
from ...core.model import ExecutionResult, Usage
from ...jail.api_log import ApiLog
from .events import EventReader, api_failure, snake_keys, stderr_tail

AGENT = "opencode"
# OpenCode's tool -> Claude Code's (the transcript's names).
TOOL_NAMES = {
    "bash": "Bash",
    "edit": "Edit",
    "write": "Write",
    "read": "Read",
    "glob": "Glob",
    "grep": "Grep",
    "list": "LS",
    "skill": "Skill",
    "task": "Task",
    "todowrite": "TodoWrite",
    "todoread": "TodoRead",
    "webfetch": "WebFetch",
    "websearch": "WebSearch",
    "patch": "Edit",
}


def canonical(tool: str, tool_input: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(Claude Code's name, its input fields) of one OpenCode call."""
    fields = snake_keys(tool_input)
    if tool == "skill" and "name" in fields:
        fields["skill"] = fields.pop("name")
    return TOOL_NAMES.get(tool, tool), fields


@dataclass
class OpenCodeReader(EventReader):
    steps: int = 0
    error: Mapping[str, Any] | None = None
    _step_texts: tuple[str, ...] = ()

    def tool_name(self, sent: str) -> str:
        return TOOL_NAMES.get(sent, sent)

    def event(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("type")
        part = event.get("part")
        part = part if isinstance(part, Mapping) else {}
        if kind == "step_start":
            self.steps += 1
            self._step_texts = ()
        elif kind == "text" and isinstance(part.get("text"), str):
            self._step_texts = (*self._step_texts, part["text"])
            self.last_text = "\n".join(self._step_texts)
        elif kind == "tool_use":
            return self._tool(part)
        elif kind == "step_finish":
            self._usage(part)
        elif kind == "error":
            error = event.get("error")
            self.error = error if isinstance(error, Mapping) else {"name": str(error)}
        return True

    def _tool(self, part: Mapping[str, Any]) -> bool:
        state = part.get("state")
        state = state if isinstance(state, Mapping) else {}
        raw = state.get("input")
        name, fields = canonical(
            str(part.get("tool") or "?"), raw if isinstance(raw, Mapping) else {}
        )
        call_id = str(part.get("callID") or f"call-{len(self.calls)}")
        going = self.call(call_id, name, fields)
        status = state.get("status")
        if status in ("completed", "error"):
            said = state.get("output") if status == "completed" else state.get("error")
            self.answer(call_id, status == "completed", str(said or ""))
        return going

    def _usage(self, part: Mapping[str, Any]) -> None:
        tokens = part.get("tokens")
        if not isinstance(tokens, Mapping):
            return
        cache = tokens.get("cache")
        cache = cache if isinstance(cache, Mapping) else {}
        self.usage += Usage(
            input_tokens=_int(tokens.get("input")),  # OpenCode's input leaves the cache out
            output_tokens=_int(tokens.get("output")) + _int(tokens.get("reasoning")),
            cache_creation_input_tokens=_int(cache.get("write")),
            cache_read_input_tokens=_int(cache.get("read")),
        )
        cost = part.get("cost")
        if isinstance(cost, int | float) and cost > 0:
            self.cost += float(cost)
        self.replies += 1

    def result(self, exit_code: int | None, stderr: str, api: ApiLog | None) -> ExecutionResult:
        """The attempt: its answer, or the error OpenCode reported, or why there is none."""
        transcript, meta = self.transcript(), {**self.meta(), "steps": self.steps}
        more: dict[str, Any] = {"transcript": transcript, "usage": self.usage, "meta": meta}
        if self.stopped_at_skill:
            return ExecutionResult(output=self.last_text, cost_usd=self.cost, **more)
        if self.error is not None:
            data = self.error.get("data")
            data = data if isinstance(data, Mapping) else {}
            status = data.get("statusCode")
            status = status if isinstance(status, int) else None
            name = str(self.error.get("name") or "error")
            message = f"{name}: {data.get('message') or self.error.get('message') or ''}"
            meta["error_name"] = name
            if status is None and api is not None:
                status = api.last_error() or None  # what the proxy saw last
            return api_failure(AGENT, status, message.strip(": "), **more)
        if exit_code != 0:
            tail = stderr_tail(stderr)
            meta.update(error_type="no_result", exit_code=exit_code)
            return ExecutionResult(
                failure=Failure.transient(
                    f"opencode ended without an answer (exit code {exit_code})"
                    + (f"; stderr: {tail}" if tail else "")
                ),
                **more,
            )
        return ExecutionResult(output=self.last_text, cost_usd=self.cost, **more)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and value > 0 else 0
