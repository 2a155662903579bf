"""What the OpenCode and Codex event readers share: the tool calls in order (bounded, under
Claude Code's names: core/transcript), their results, the usage summed over the model's
replies, the last answer, a stop at the skill's invocation (trigger tasks), and how an
attempt that ended without an answer is classed: an API error by its status (401/403/404
fatal, 429/5xx retryable), a CLI that died, a stream cut.

Each line comes from the CLI's stdout, a socket nothing in the jail can write to; a line that
is not a JSON object is counted and skipped, never trusted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...core.bounded import MAX_TRANSCRIPT_CALLS
from ...core.failure import Failure
from ...core.model import ExecutionResult, Usage
from ...core.transcript import (
    INPUT_LIMIT,
    OUTPUT_LIMIT,
    PendingCall,
    calls_transcript,
    event_of,
    trim_text,
    trim_value,
)
from ...core.work import ToolCall
from ...jail.api_log import ApiLog, SentCall
from ..catalog import invokes_skill
from ..errors_map import retryable_message, status_failure
from ..tool_check import by_id

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_keys(value: Mapping[str, Any]) -> dict[str, Any]:
    """`{"filePath": ...}` -> `{"file_path": ...}` (top-level keys: Claude Code's names)."""
    return {_CAMEL.sub(r"_\1", str(k)).lower(): v for k, v in value.items()}


@dataclass
class EventReader:
    """The part of reading one attempt's events that does not depend on the agent;
    `stop_at_skill`: `feed` returns False once the model invokes that skill."""

    stop_at_skill: str | None = None
    calls: dict[str, PendingCall] = field(default_factory=dict)
    dropped_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    replies: int = 0  # model replies whose usage was counted
    last_text: str = ""
    bad_lines: int = 0
    stopped_at_skill: bool = False
    notes: list[str] = field(default_factory=list)  # the CLI's warnings, kept in meta

    def feed(self, line: bytes) -> bool:
        """Take one line; False when the CLI may be stopped (the attempt has its answer)."""
        event = event_of(line)
        if event is None:
            self.bad_lines += 1
            return True
        return self.event(event)

    def event(self, event: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def result(self, exit_code: int | None, stderr: str, api: ApiLog | None) -> ExecutionResult:
        """The attempt, once the CLI ended with `exit_code` (None: killed)."""
        raise NotImplementedError

    def tool_name(self, sent: str) -> str:
        """The transcript's name of a tool the model called `sent` (the agent's own names
        may be mapped to Claude Code's)."""
        return sent

    def tampering(self, sent: Sequence[SentCall], ranks: Mapping[int, int]) -> str | None:
        """Why the transcript is not what the model sent (executors/tool_check.py): by the
        model's own call ids, names under `tool_name`; a reader whose CLI prints ids of its
        own says its rule instead."""
        return by_id(self.calls.items(), sent, ranks, name=self.tool_name)

    # -- calls -------------------------------------------------------------------------------

    def call(self, call_id: str, name: str, tool_input: Mapping[str, Any]) -> bool:
        """Record a call (once per id); False when it invokes the watched skill."""
        if call_id not in self.calls:
            if len(self.calls) >= MAX_TRANSCRIPT_CALLS:
                self.dropped_calls += 1
                return True
            self.calls[call_id] = PendingCall(name, trim_value(dict(tool_input), INPUT_LIMIT))
        if self.stop_at_skill and invokes_skill(name, tool_input, self.stop_at_skill):
            self.stopped_at_skill = True
            return False
        return True

    def answer(self, call_id: str, ok: bool, output: str) -> None:
        call = self.calls.get(call_id)
        if call is not None:
            call.ok, call.output = ok, trim_text(output, OUTPUT_LIMIT)

    def note(self, text: str) -> None:
        if len(self.notes) < 20:
            self.notes.append(text[:300])

    def transcript(self) -> tuple[ToolCall, ...]:
        """Every tool call in order, cut past MAX_TRANSCRIPT_CALLS (core.transcript)."""
        return calls_transcript(self.calls.values(), self.dropped_calls)

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"model_replies": self.replies}
        if self.dropped_calls:
            meta["tool_calls_not_kept"] = self.dropped_calls
        if self.bad_lines:
            meta["unreadable_lines"] = self.bad_lines
        if self.notes:
            meta["agent_notes"] = list(self.notes)
        if self.stopped_at_skill:
            meta["stopped"] = "skill invoked"
        return meta


def api_failure(agent: str, status: int | None, message: str, **more: Any) -> ExecutionResult:
    """An attempt the model API failed: fatal for 401/403/404 (every attempt would), else
    retryable when the status (or, without one, the message) says a retry may heal it."""
    if status is None:
        text = f"{agent} API error: {message}"[:1000]
        return ExecutionResult(failure=Failure(text, retry=retryable_message(message)), **more)
    text = f"{agent} API error: (HTTP {status}) {message}"[:1000]
    return ExecutionResult(failure=status_failure(text, status), **more)


def stderr_tail(stderr: str) -> str:
    return " | ".join(stderr.strip().splitlines()[-3:])[:500]
