"""The estimate's prior (engine/estimate.py, when no earlier run of the suite and model is in
the state root): what an attempt costs, task by task, from what the suite says and what the
executor declares, priced with the executor's table.

- Out: the size of a good answer, which the suite gives: the task's `reference` (its text, and
  in the object form the files it writes and its tool calls' inputs), else the expected output
  its judge holds (an eval's `expected_output`); else PRIOR_OUT tokens.
- In: the task's prompt and the arm's SKILL.md, plus what the executor's request frame says
  every request carries (executors/request_frame.py: an agent's own prompt and tools), over
  as many requests as the attempt makes (an agent's: one per tool call of the reference,
  each resending the history), with the prompt cache the executor marks.
- A model-graded judgement: JUDGE_FRAME tokens of instructions, the prompt and the answer in,
  JUDGE_OUT out, at the model its judge runs on.

All at CHARS_PER_TOKEN characters a token. No model is called.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Skill, Task
from ..executors.pricing import ModelPrice, PriceTable
from ..executors.request_frame import CHARS_PER_TOKEN, MIN_CACHED_TOKENS, RequestFrame

PRIOR_OUT = {"text": 500, "agent": 2_000}  # output tokens of an attempt the suite does not size
JUDGE_FRAME = 1_000  # a judgement's own instructions and rubric, in tokens
JUDGE_OUT = 300  # a judgement's reply (its JSON verdict and reasons), in tokens
TOOL_RESULT = 100  # what one tool result adds to an agent's history, in tokens
MAX_DEPTH = 8  # judge configs nest a few levels (a combinator of combinators)


@dataclass(frozen=True)
class Rate:
    """The cost of one attempt (or judgement): dollars (None: no known price) and tokens."""

    usd: float | None
    tokens: int


@dataclass(frozen=True)
class Spend:
    """One attempt's tokens by how they are billed (fractions: a mean over attempts)."""

    input: float = 0.0
    output: float = 0.0
    cache_write: float = 0.0
    cache_read: float = 0.0

    def rate(self, price: ModelPrice | None) -> Rate:
        tokens = round(self.input + self.output + self.cache_write + self.cache_read)
        if price is None:
            return Rate(None, tokens)
        usd = (
            self.input * price.input
            + self.output * price.output
            + self.cache_write * price.cache_write
            + self.cache_read * price.cache_read
        ) / 1_000_000
        return Rate(usd, tokens)


def tokens(chars: float) -> float:
    return chars / CHARS_PER_TOKEN


def answer_chars(task: Task) -> int | None:
    """The characters of a good answer to `task` as its suite gives it (see the module
    docstring), or None when it gives none."""
    reference = task.reference
    if isinstance(reference, str):
        return len(reference)
    if isinstance(reference, Mapping):
        text = reference.get("text")
        files = reference.get("files")
        tools = reference.get("tools")
        size = len(text) if isinstance(text, str) else 0
        size += sum(len(str(v)) for v in files.values()) if isinstance(files, Mapping) else 0
        if isinstance(tools, list):
            size += sum(len(json.dumps(t.get("input") or {})) for t in tools if _is_map(t))
        return size
    expected = [e for e in _expected_outputs(task.judge) if e.strip()]
    return max(len(e) for e in expected) if expected else None


def _is_map(value: Any) -> bool:
    return isinstance(value, Mapping)


def _expected_outputs(config: Any, depth: int = 0) -> Iterator[str]:
    """The `expected_output` of a judge config and of the judges it is made of."""
    if depth > MAX_DEPTH or not isinstance(config, Mapping):
        return
    if isinstance(config.get("expected_output"), str):
        yield config["expected_output"]
    for key in ("judges", "judge"):
        inner = config.get(key)
        for part in inner if isinstance(inner, list) else [inner]:
            if isinstance(part, Mapping):
                yield from _expected_outputs(part.get("judge", part), depth + 1)


def tool_calls(task: Task) -> int | None:
    """The tool calls a task's reference makes (its tools, else one write a file), or None."""
    reference = task.reference
    if not isinstance(reference, Mapping):
        return None
    tools, files = reference.get("tools"), reference.get("files")
    if isinstance(tools, list) and tools:
        return len(tools)
    return len(files) if isinstance(files, Mapping) else 0


def attempt_spend(
    task: Task, skill: Skill | None, frame: RequestFrame, mode: str, share: float, kind: str
) -> Spend:
    """One attempt of `task` with `skill` delivered in `mode`, on an executor of `frame`;
    `share`: the part of the arm's one cache write this attempt bears (1 / its attempts)."""
    skill_tokens = tokens(len(skill.content)) if skill is not None else 0.0
    shared = frame.overhead + (skill_tokens if mode in ("system", "context") else 0.0)
    own = tokens(len(task.prompt or task.query or "")) + (skill_tokens if mode == "prepend" else 0)
    chars = answer_chars(task)
    out = tokens(chars) if chars is not None else float(PRIOR_OUT[kind])
    calls = tool_calls(task) if frame.tool_turns else None
    turns = 1 + calls if calls is not None else frame.turns
    # What each turn after the first adds to the history: the reply before it and its tool
    # result (an installed skill's SKILL.md comes back as the first one).
    added = [out / turns + TOOL_RESULT] * (turns - 1)
    if added and mode == "installed":
        added[0] += skill_tokens
    sent = [sum(added[:k]) for k in range(turns)]  # the history each request resends
    if frame.cache == "none" or (frame.cache == "prefix" and shared < MIN_CACHED_TOKENS):
        return Spend(input=sum(shared + own + h for h in sent), output=out)
    if frame.cache == "prefix":  # the shared part cached, the rest sent whole each turn
        read = shared * (turns - share)
        return Spend(sum(own + h for h in sent), out, shared * share, read)
    # "conversation": each turn reads what the last one sent and writes what is new
    written = shared * share + own + sum(added)
    read = shared * (1 - share) + sum(shared + own + h for h in sent[:-1])
    return Spend(output=out, cache_write=written, cache_read=read)


def mean(spends: Sequence[Spend]) -> Spend:
    n = max(1, len(spends))
    return Spend(
        sum(s.input for s in spends) / n,
        sum(s.output for s in spends) / n,
        sum(s.cache_write for s in spends) / n,
        sum(s.cache_read for s in spends) / n,
    )


def judgement_spend(task: Task) -> Spend:
    """One model-graded judgement of an attempt at `task`: it reads the prompt and answer."""
    chars = answer_chars(task)
    answer = tokens(chars) if chars is not None else float(PRIOR_OUT["text"])
    return Spend(input=JUDGE_FRAME + tokens(len(task.prompt or "")) + answer, output=JUDGE_OUT)


def price_of(prices: PriceTable, model: str | None) -> ModelPrice | None:
    return prices.lookup(model) if model else None


__all__ = [
    "CHARS_PER_TOKEN",
    "JUDGE_FRAME",
    "JUDGE_OUT",
    "PRIOR_OUT",
    "Rate",
    "Spend",
    "answer_chars",
    "attempt_spend",
    "judgement_spend",
    "mean",
    "price_of",
    "tool_calls",
]
