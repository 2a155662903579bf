"""The bounded loop in which a text executor's model reads its skill's other files: ask, answer
each `read_skill_file` call from the folder (skills/files.py), ask again, until the model
answers, the tool turns run out (the last request offers no more calls) or the attempt's time
does. The API is the `Dialogue` an executor plugs in (the Messages API in anthropic_api.py,
Chat Completions in openai_api.py); the loop, the answers and the transcript are shared.

Also the error attempt both build (`failure`): not the skill's fault, with what the runner needs
to retry it or to stop the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..core.budget import Budget, stopped_for_budget
from ..core.failure import Failure
from ..core.model import ExecutionResult, Usage
from ..core.work import ToolCall
from ..skills.files import TOOL_NAME, SkillFolder
from .pricing import PriceTable

TRANSCRIPT_CHARS = 2000  # of each tool result kept in the attempt's record (the model saw all)


def failed(why: Failure, **meta: Any) -> ExecutionResult:
    """An attempt that ended in `why`, with `meta` (its None values left out) on its record."""
    return ExecutionResult(failure=why, meta={k: v for k, v in meta.items() if v is not None})


@dataclass(frozen=True)
class ToolUse:
    """One tool call of a model turn: its id, the tool's name and its input (as sent; an
    input that is not a JSON object is refused when answered)."""

    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class ModelTurn:
    """One reply of the model: its text, its tool calls, what it cost, the model that
    answered, the reply's id and why it stopped, and the API's own reply object (`raw`)."""

    text: str
    uses: tuple[ToolUse, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    id: str | None = None
    stop_reason: str | None = None
    raw: Any = None


@dataclass(frozen=True)
class ToolAnswer:
    """The harness's answer to one tool call: the text the model reads, and whether it is an
    error (`ok` False: a refused path, an unknown tool)."""

    use: ToolUse
    ok: bool
    text: str


class Dialogue(Protocol):
    """One attempt's conversation in some API. `ask` sends the history (with no more tool
    calls allowed when `last`) within `timeout` seconds and returns the model's turn, or an
    error attempt (already classified); `add` appends a turn and its answers to the history."""

    def ask(self, last: bool, timeout: float) -> ModelTurn | ExecutionResult: ...

    def add(self, turn: ModelTurn, answers: Sequence[ToolAnswer]) -> None: ...


@dataclass(frozen=True)
class LoopEnd:
    """How the loop ended: the model's last turn, or the error attempt that ended it; usage
    over every request, the tool calls answered, how many requests were sent, and whether
    each reply was charged to the run's budget as it came."""

    last: ModelTurn | ExecutionResult
    usage: Usage
    calls: tuple[ToolCall, ...]
    requests: int
    charged: bool = False

    def result(self, prices: PriceTable, model: str, seconds: float) -> ExecutionResult:
        """The attempt: the last turn's text, usage and cost over all its requests (`model`
        when the reply names none), or the error that ended it with what the turns before it
        cost."""
        if isinstance(self.last, ExecutionResult):
            if self.usage == Usage():
                return replace(self.last, charged=self.charged)
            cost = prices.cost(model, self.usage)[0]
            return replace(self.last, usage=self.usage, cost_usd=cost, charged=self.charged)
        model = self.last.model or model
        cost, note = prices.cost(model, self.usage)
        meta: dict[str, Any] = {
            "model": model,
            "id": self.last.id,
            "stop_reason": self.last.stop_reason,
            "latency_ms": int(seconds * 1000),
        }
        if self.requests > 1:
            meta["requests"] = self.requests
        if note:
            meta["price"] = note
        return ExecutionResult(
            output=self.last.text,
            usage=self.usage,
            cost_usd=cost,
            meta=meta,
            transcript=self.calls,
            charged=self.charged,
        )


Price = Callable[[ModelTurn], float]


def converse(
    dialogue: Dialogue,
    folder: SkillFolder | None,
    *,
    max_tool_turns: int,
    timeout_seconds: float,
    budget: Budget | None = None,
    price: Price = lambda turn: 0.0,
) -> LoopEnd:
    """Ask until the model answers without a tool call; with no `folder` that is one request.
    The request numbered `max_tool_turns` is the last: it may not call a tool. With a
    `budget`, no request goes once it refuses (the attempt ends stopped, core/budget.py) and
    each reply is charged to it at `price` as it comes."""
    started = time.monotonic()
    usage, requests = Usage(), 0
    calls: list[ToolCall] = []
    charged = budget is not None
    while True:
        requests += 1
        last = folder is not None and requests >= max_tool_turns
        left = timeout_seconds - (time.monotonic() - started)
        if left <= 0:
            timeout = failed(
                Failure.transient(
                    f"timeout: {requests - 1} requests took over {timeout_seconds:g}s"
                ),
                error_type="timeout",
            )
            return LoopEnd(timeout, usage, tuple(calls), requests - 1, charged)
        if budget is not None and (why := budget.refusal()) is not None:
            stopped = stopped_for_budget(why, Usage(), 0.0)
            return LoopEnd(stopped, usage, tuple(calls), requests - 1, charged)
        turn = dialogue.ask(last, left)
        if isinstance(turn, ExecutionResult):
            return LoopEnd(turn, usage, tuple(calls), requests, charged)
        usage += turn.usage
        if budget is not None:
            budget.charge(price(turn), turn.usage.total)
        if folder is None or not turn.uses or last:
            return LoopEnd(turn, usage, tuple(calls), requests, charged)
        dialogue.add(turn, [answer(folder, use, calls) for use in turn.uses])


def answer(folder: SkillFolder, use: ToolUse, calls: list[ToolCall]) -> ToolAnswer:
    """Answer one tool call from the skill's folder; the call joins `calls` (the attempt's
    transcript, each result cut at TRANSCRIPT_CHARS)."""
    given = dict(use.input) if isinstance(use.input, Mapping) else {}
    if use.name != TOOL_NAME:
        ok, out = False, f"unknown tool {use.name!r}: the only tool is {TOOL_NAME}"
    elif not isinstance(use.input, Mapping):
        ok, out = False, f"the input of {TOOL_NAME} must be a JSON object with a 'path'"
    else:
        ok, out = folder.read(given.get("path"))
    calls.append(ToolCall(name=use.name, input=given, ok=ok, output=out[:TRANSCRIPT_CHARS]))
    return ToolAnswer(use, ok, out)


__all__ = [
    "TRANSCRIPT_CHARS",
    "Dialogue",
    "LoopEnd",
    "ModelTurn",
    "ToolAnswer",
    "ToolUse",
    "answer",
    "converse",
    "failed",
]
