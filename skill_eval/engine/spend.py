"""What a run has spent, attempt by attempt, judge calls included, and the caps on it
(--max-cost-usd, --max-tokens-total).

The `Meter` is the run's budget (core/budget.py): its executors charge each model reply as it
comes (the jail's API forward for an agent CLI, each response for an API executor) and ask it
before each request, so a cap reached inside an attempt stops that attempt's next request.
What an executor did not charge itself (a plugin's attempt, one run in another process) is
charged when its attempt is recorded (`Meter.add`), and so is every judgement's model calls
(`JudgeResult.calls`, recorded at the grader seam: judges/base.py `run_judge`), priced at the
executor's table. Attempts drawn from the baseline cache and cached judgements cost nothing
(the run that made them paid).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.budget import stopped_by_budget
from ..core.model import Attempt, JudgeResult, ModelCall, Usage
from ..executors.pricing import PriceTable, load_price_table
from .cache import drawn_from


def tokens_of(usage: Usage) -> int:
    """Every token a call was billed for: input, cache writes and reads, output."""
    return usage.total


def call_cost(call: ModelCall, prices: PriceTable) -> float:
    """What one model call cost at `prices` (0 for a model the table does not price)."""
    return prices.cost(call.model, call.usage, batch=call.batch)[0]


def recorded_calls(judge: Mapping[str, Any] | None) -> list[ModelCall]:
    """The model calls a judgement's record (`JudgeResult.to_dict`) holds: what a report reads
    of an artifact."""
    calls = judge.get("calls") if isinstance(judge, Mapping) else None
    if not isinstance(calls, list):
        return []
    return [ModelCall.from_dict(c) for c in calls if isinstance(c, Mapping)]


@dataclass(frozen=True)
class Spent:
    """One attempt's spending (or a sum of them): the attempt's own, and its judgement's."""

    cost_usd: float = 0.0
    tokens: int = 0
    judge_calls: int = 0
    judge_cost_usd: float = 0.0
    judge_tokens: int = 0

    @property
    def total_usd(self) -> float:
        return self.cost_usd + self.judge_cost_usd

    @property
    def total_tokens(self) -> int:
        return self.tokens + self.judge_tokens

    def __add__(self, other: Spent) -> Spent:
        return Spent(
            self.cost_usd + other.cost_usd,
            self.tokens + other.tokens,
            self.judge_calls + other.judge_calls,
            self.judge_cost_usd + other.judge_cost_usd,
            self.judge_tokens + other.judge_tokens,
        )


def judged(judge: JudgeResult | None, prices: PriceTable) -> Spent:
    """What a judgement's model calls cost (none for a cached judgement: it made none)."""
    calls = judge.calls if judge is not None else ()
    return Spent(
        judge_calls=len(calls),
        judge_cost_usd=sum(call_cost(c, prices) for c in calls),
        judge_tokens=sum(c.usage.total for c in calls),
    )


def spent_on(attempt: Attempt, prices: PriceTable) -> Spent:
    """What `attempt` cost this run (nothing when drawn from the baseline cache)."""
    if drawn_from(attempt) is not None:
        return Spent()
    own = Spent(attempt.cost_usd, attempt.usage.total)
    return own + judged(attempt.judge, prices)


def total(attempts: Iterable[Attempt], prices: PriceTable | None = None) -> Spent:
    """The sum of `spent_on` over attempts."""
    table = prices or load_price_table()
    return sum((spent_on(a, table) for a in attempts), Spent())


def finished(attempt: Attempt) -> bool:
    """An attempt run to its end: not in error, not drawn from the baseline cache."""
    return attempt.status != "error" and drawn_from(attempt) is None


class Meter:
    """A run's (or a command's) spending against its caps, thread-safe: the budget its
    executors charge each reply to and ask before each request (`refusal`, `charge`), and
    what each recorded attempt adds (`add`). `reached` says which cap was reached, once one
    is."""

    def __init__(
        self,
        max_cost_usd: float | None,
        max_tokens: int | None,
        prices: PriceTable | None = None,
        already: Spent = Spent(),
    ) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_tokens = max_tokens
        self.prices = prices or load_price_table()
        self.cost_usd = already.total_usd
        self.tokens = already.total_tokens
        self.reached: str | None = None
        self.finished = 0  # attempts run to an end (not in error, not drawn from the cache)
        self.stopped = 0  # attempts the budget stopped mid-way (core/budget.py)
        self._lock = threading.Lock()

    def count_finished(self, attempts: Iterable[Attempt]) -> None:
        """Count attempts that finished before the meter started (a resumed run's)."""
        with self._lock:
            self.finished += sum(finished(a) for a in attempts)

    def refusal(self) -> str | None:
        """Why no further model request may go (a cap reached), or None."""
        with self._lock:
            return self.reached

    def charge(self, cost_usd: float, tokens: int) -> bool:
        """Count spending as it happens (a reply, an improver's call); True once a cap is
        reached."""
        with self._lock:
            self.cost_usd += cost_usd
            self.tokens += tokens
            if self.reached is None:
                self.reached = self._over()
            return self.reached is not None

    def add(self, attempt: Attempt, *, own_charged: bool = False) -> bool:
        """Count a recorded attempt: its judgement's calls, and its own cost unless its
        replies were charged as they came (`own_charged`). True once a cap is reached."""
        own = own_charged and drawn_from(attempt) is None
        spent = judged(attempt.judge, self.prices) if own else spent_on(attempt, self.prices)
        with self._lock:
            self.finished += finished(attempt)
            self.stopped += attempt.status == "error" and stopped_by_budget(attempt.meta)
        return self.charge(spent.total_usd, spent.total_tokens)

    def _over(self) -> str | None:
        if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd:
            return f"${self.cost_usd:.4f} spent of --max-cost-usd {self.max_cost_usd:g}"
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"{self.tokens} tokens spent of --max-tokens-total {self.max_tokens}"
        return None


def command_meter(max_cost_usd: float | None, max_tokens: int | None) -> Meter | None:
    """The meter of a command that spends through several runs or calls (improve, review):
    its --max-cost-usd and --max-tokens-total over the whole command (None: no cap)."""
    if max_cost_usd is None and max_tokens is None:
        return None
    return Meter(max_cost_usd, max_tokens)


# The token counts of an artifact's `usage` entry for one arm (engine/artifact.py _usage).
ARTIFACT_TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "judge_tokens",
)


def artifact_spend(artifact: Mapping[str, Any]) -> tuple[float, int]:
    """(dollars, tokens) an evaluation artifact says its run spent, judges included: what a
    command that runs several evaluations (review) counts against its own caps."""
    usd, tokens = 0.0, 0
    for arm in (artifact.get("usage") or {}).values():
        if not isinstance(arm, Mapping):
            continue
        usd += float(arm.get("cost_usd") or 0) + float(arm.get("judge_cost_usd") or 0)
        tokens += sum(int(arm.get(key) or 0) for key in ARTIFACT_TOKENS)
    return usd, tokens


__all__ = [
    "ARTIFACT_TOKENS",
    "Meter",
    "Spent",
    "artifact_spend",
    "call_cost",
    "command_meter",
    "finished",
    "judged",
    "recorded_calls",
    "spent_on",
    "tokens_of",
    "total",
]
