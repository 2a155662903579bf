"""Claude Code's `--output-format stream-json`, read as it arrives: one JSON object a line
(`system` init and `api_retry`, `assistant` messages with text and tool_use blocks, `user`
messages with tool_result blocks, and one `result` at the end). Kept: the tool calls in order
with their results (bounded), the last assistant text, the usage of each model reply once,
the retries the CLI made of API requests, and the result.

    reader = StreamReader(stop_at_skill="pdf")      # stop once the skill is invoked
    for line in lines: if not reader.feed(line): break
    result = reader.result(exit_code, stderr)

The stream comes from the CLI's stdout, a socket nothing in the jail can write to; a line that
is not JSON is counted and skipped, never trusted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...core.bounded import MAX_TRANSCRIPT_CALLS
from ...core.failure import EndsAs, Failure
from ...core.model import ExecutionResult, Usage
from ...core.transcript import (
    INPUT_LIMIT,
    OUTPUT_LIMIT,
    PendingCall,
    calls_transcript,
    event_of,
    result_text,
    trim_text,
    trim_value,
)
from ...core.work import ToolCall
from ...jail.api_log import SentCall
from ..catalog import invokes_skill
from ..errors_map import fatal_status, retryable_message, retryable_status
from ..pricing import load_price_table
from ..tool_check import by_id, unanswered

# Result fields the attempt's record keeps.
RESULT_META = (
    "subtype",
    "num_turns",
    "stop_reason",
    "terminal_reason",
    "duration_ms",
    "duration_api_ms",
    "session_id",
    "api_error_status",
)


@dataclass
class StreamReader:
    """Reads one attempt's stream; `stop_at_skill`: `feed` returns False once the model
    invokes that skill (a trigger attempt has its answer then)."""

    stop_at_skill: str | None = None
    calls: dict[str, PendingCall] = field(default_factory=dict)
    dropped_calls: int = 0
    replies: dict[str, tuple[str | None, Mapping[str, Any]]] = field(default_factory=dict)
    final: Mapping[str, Any] | None = None
    last_text: str = ""
    api_retries: int = 0
    last_retry_status: int | None = None
    last_retry_error: str = ""
    bad_lines: int = 0
    stopped_at_skill: bool = False
    # Ids of tool results that answer no call above (kept for tool_check: the model must
    # have sent them, else the result is invented).
    unmatched_results: list[str] = field(default_factory=list)

    def tampering(self, sent: Sequence[SentCall], ranks: Mapping[int, int]) -> str | None:
        """Why the transcript is not what the model sent (executors/tool_check.py): Claude
        Code prints the model's ids, names and inputs as they came, and its tool results
        apart (each must answer a call the model sent)."""
        return by_id(self.calls.items(), sent, ranks, same_input=True) or unanswered(
            self.unmatched_results, sent
        )

    def feed(self, line: bytes) -> bool:
        """Take one line; False when the CLI may be stopped: the attempt has its answer (a
        trigger attempt's skill was invoked), or the CLI is retrying an error no retry heals."""
        event = event_of(line)
        if event is None:
            self.bad_lines += 1
            return True
        kind = event.get("type")
        if kind == "assistant":
            return self._assistant(event.get("message"))
        if kind == "user":
            self._tool_results(event.get("message"))
        elif kind == "system" and event.get("subtype") == "api_retry":
            self.api_retries += 1
            status = event.get("error_status")
            self.last_retry_status = status if isinstance(status, int) else None
            self.last_retry_error = str(event.get("error") or "")[:200]
            # The CLI retries a 401/403/404 too (17 s of back-off at 5 retries); no retry can
            # heal one, and every attempt of the run would get the same: stop it now.
            return not fatal_status(self.last_retry_status)
        elif kind == "result":
            self.final = event
        return True

    def _assistant(self, message: Any) -> bool:
        if not isinstance(message, Mapping):
            return True
        usage = message.get("usage")
        if isinstance(usage, Mapping):  # one reply may come as several events: count it once
            self.replies[str(message.get("id") or len(self.replies))] = (
                message.get("model"),
                usage,
            )
        texts = []
        for block in _blocks(message):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                self._call(block)
                if self.stop_at_skill and invokes_skill(
                    str(block.get("name")), block.get("input"), self.stop_at_skill
                ):
                    self.stopped_at_skill = True
                    return False
        if texts:
            self.last_text = "\n".join(texts)
        return True

    def _call(self, block: Mapping[str, Any]) -> None:
        if len(self.calls) >= MAX_TRANSCRIPT_CALLS:
            self.dropped_calls += 1
            return
        raw = block.get("input")
        self.calls[str(block.get("id") or f"call-{len(self.calls)}")] = PendingCall(
            str(block.get("name") or "?"),
            trim_value(raw if isinstance(raw, Mapping) else {}, INPUT_LIMIT),
        )

    def _tool_results(self, message: Any) -> None:
        if not isinstance(message, Mapping):
            return
        for block in _blocks(message):
            if block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id"))
            call = self.calls.get(call_id)
            if call is not None:
                call.ok = not block.get("is_error")
                call.output = trim_text(result_text(block.get("content")), OUTPUT_LIMIT)
            elif len(self.unmatched_results) < MAX_TRANSCRIPT_CALLS:
                self.unmatched_results.append(call_id)

    # -- the attempt's result ---------------------------------------------------------------

    def transcript(self) -> tuple[ToolCall, ...]:
        """Every tool call in order, cut past MAX_TRANSCRIPT_CALLS (core.transcript)."""
        return calls_transcript(self.calls.values(), self.dropped_calls)

    def usage(self) -> tuple[Usage, str | None]:
        total = sum((Usage.from_dict(u) for _, u in self.replies.values()), Usage())
        model = next((str(m) for m, _ in self.replies.values() if m), None)
        return total, model

    def result(self, exit_code: int | None, stderr: str) -> ExecutionResult:
        """What the attempt produced: the CLI's result (its error classes: fatal 401/403/404,
        retryable 429/529/5xx), or why there is none."""
        transcript = self.transcript()
        meta: dict[str, Any] = {"api_retries": self.api_retries}
        if self.dropped_calls:
            meta["tool_calls_not_kept"] = self.dropped_calls
        if self.bad_lines:
            meta["unreadable_lines"] = self.bad_lines
        if self.stopped_at_skill:
            return self._stopped(transcript, meta)
        if self.final is None and fatal_status(self.last_retry_status):
            return ExecutionResult(
                failure=Failure.setup(
                    f"claude CLI error: (HTTP {self.last_retry_status}) "
                    f"{self.last_retry_error or 'API error'} (stopped at the CLI's first retry: "
                    "it cannot heal)"
                ),
                transcript=transcript,
                meta={**meta, "api_error_status": self.last_retry_status},
            )
        if self.final is None:
            tail = " | ".join(stderr.strip().splitlines()[-3:])[:500]
            retried = (
                f"; {self.api_retries} API retries, the last HTTP {self.last_retry_status}"
                if self.api_retries
                else ""
            )
            return ExecutionResult(
                failure=Failure.transient(
                    f"claude CLI gave no result (exit code {exit_code}{retried})"
                    + (f"; stderr: {tail}" if tail else "")
                ),
                transcript=transcript,
                meta={**meta, "error_type": "no_result", "exit_code": exit_code},
            )
        parsed = from_result(self.final, self.last_text)
        meta.update(parsed.meta)
        denials = self.final.get("permission_denials")
        if isinstance(denials, list) and denials:
            meta["permission_denials"] = [
                str(d.get("tool_name")) if isinstance(d, Mapping) else str(d) for d in denials
            ]
        return replace(parsed, transcript=transcript, meta=meta)

    def _stopped(self, transcript: tuple[ToolCall, ...], meta: dict[str, Any]) -> ExecutionResult:
        """Stopped at the skill's invocation: no result message, so the usage is the sum over
        the model's replies, priced from the built-in table."""
        usage, model = self.usage()
        cost, note = load_price_table().cost(model, usage) if model else (0.0, None)
        meta["stopped"] = "skill invoked"
        if note:
            meta["price_note"] = note
        return ExecutionResult(
            output=self.last_text, transcript=transcript, usage=usage, cost_usd=cost, meta=meta
        )


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def from_result(final: Mapping[str, Any], last_text: str = "") -> ExecutionResult:
    """The attempt's result from the CLI's `result` message: its text, usage and cost, or the
    error it reports, classed: a 401/403/404 is fatal (no attempt can succeed), a 429/529/5xx
    or an overload message retryable, a stop at --max-turns the output's own failure."""
    meta: dict[str, Any] = {k: final[k] for k in RESULT_META if final.get(k) is not None}
    models = final.get("modelUsage")
    if isinstance(models, Mapping) and models:
        meta["models"] = sorted(models)
    usage_data = final.get("usage")
    usage = Usage.from_dict(usage_data if isinstance(usage_data, Mapping) else None)
    cost = float(final.get("total_cost_usd") or 0.0)
    result = final.get("result")
    if not final.get("is_error"):
        text = result if isinstance(result, str) else last_text
        return ExecutionResult(output=text, usage=usage, cost_usd=cost, meta=meta)
    errors = final.get("errors")
    message = (
        result
        if isinstance(result, str) and result
        else "; ".join(map(str, errors))
        if isinstance(errors, list) and errors
        else str(final.get("subtype") or "is_error")
    )
    status = final.get("api_error_status")
    # stopping at --max-turns is the agent's own doing
    ends_as: EndsAs = "failed" if final.get("subtype") == "error_max_turns" else "error"
    if isinstance(status, int):
        retry = retryable_status(status)
        message = f"(HTTP {status}) {message}"
        ends_as = "stop" if fatal_status(status) else ends_as
    else:
        retry = ends_as != "failed" and retryable_message(message)
    failure = Failure(f"claude CLI error: {message}", ends_as, retry=retry and ends_as != "stop")
    return ExecutionResult(failure=failure, usage=usage, cost_usd=cost, meta=meta)
