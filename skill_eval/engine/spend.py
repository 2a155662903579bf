"""What a run has spent, attempt by attempt, judge calls included, and the caps on it
(--max-cost-usd, --max-tokens-total): `Meter.add` says when a cap is reached, and the runner
then starts no new attempt (engine/runner.py `stop_when`).

An attempt's own cost is what its executor reported (`Attempt.cost_usd`); a model-graded
judgement's is priced here from the usage and model its judge recorded (`judge_model`,
`usage` in the judgement's data, at any depth: composite judges nest them). A cached
judgement recorded no usage and costs nothing; so do attempts drawn from the baseline cache
(paid for by the run that made them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.model import Attempt, Usage
from ..executors.pricing import PriceTable, load_price_table
from .cache import drawn_from

MAX_DEPTH = 8  # judge data nests a few levels (composite of composites); a deeper one is odd


def tokens_of(usage: Usage) -> int:
    """Every token a call was billed for: input, cache writes and reads, output."""
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_creation_input_tokens
        + usage.cache_read_input_tokens
    )


def judge_calls(data: Any, depth: int = 0) -> Iterator[tuple[str, Usage]]:
    """(model, usage) of every model call a judgement records in its data."""
    if depth > MAX_DEPTH:
        return
    if isinstance(data, Mapping):
        model, usage = data.get("judge_model"), data.get("usage")
        if isinstance(model, str) and isinstance(usage, Mapping) and not data.get("cached"):
            try:
                yield model, Usage.from_dict(usage)
            except (TypeError, ValueError):  # a judge's odd record: not a call we can price
                pass
        for value in data.values():
            if isinstance(value, Mapping | list):
                yield from judge_calls(value, depth + 1)
    elif isinstance(data, list):
        for item in data:
            yield from judge_calls(item, depth + 1)


@dataclass(frozen=True)
class Spent:
    """One attempt's spending: the attempt's own, and its judgement's."""

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


def spent_on(attempt: Attempt, prices: PriceTable) -> Spent:
    """What `attempt` cost this run (nothing when drawn from the baseline cache)."""
    if drawn_from(attempt) is not None:
        return Spent()
    calls = list(judge_calls(attempt.judge.data)) if attempt.judge is not None else []
    return Spent(
        attempt.cost_usd,
        tokens_of(attempt.usage),
        len(calls),
        sum(prices.cost(model, usage)[0] for model, usage in calls),
        sum(tokens_of(usage) for _, usage in calls),
    )


def total(attempts: Iterable[Attempt], prices: PriceTable | None = None) -> Spent:
    """The sum of `spent_on` over attempts."""
    table = prices or load_price_table()
    parts = [spent_on(a, table) for a in attempts]
    return Spent(
        sum(p.cost_usd for p in parts),
        sum(p.tokens for p in parts),
        sum(p.judge_calls for p in parts),
        sum(p.judge_cost_usd for p in parts),
        sum(p.judge_tokens for p in parts),
    )


def _finished(attempt: Attempt) -> bool:
    return attempt.status != "error" and drawn_from(attempt) is None


class Meter:
    """A run's spending against its caps. `add` each finished attempt (from the runner's
    thread); it returns True once a cap is reached, and `reached` says which."""

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
        self._lock = threading.Lock()

    def count_finished(self, attempts: Iterable[Attempt]) -> None:
        """Count attempts that finished before the meter started (a resumed run's)."""
        with self._lock:
            self.finished += sum(_finished(a) for a in attempts)

    def add(self, attempt: Attempt) -> bool:
        spent = spent_on(attempt, self.prices)
        with self._lock:
            self.cost_usd += spent.total_usd
            self.tokens += spent.total_tokens
            self.finished += _finished(attempt)
            if self.reached is None:
                self.reached = self.over()
            return self.reached is not None

    def charge(self, cost_usd: float, tokens: int) -> bool:
        """Count spending that is not an attempt's (an improver's call); True once a cap is
        reached, as `add`."""
        with self._lock:
            self.cost_usd += cost_usd
            self.tokens += tokens
            if self.reached is None:
                self.reached = self.over()
            return self.reached is not None

    def over(self) -> str | None:
        """Which cap the spending so far has reached, in words; None: neither."""
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


# The token counts of an artifact's `usage` entry for one arm (engine/artifact.py _usage).
ARTIFACT_TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "judge_tokens",
)

__all__ = [
    "Meter",
    "Spent",
    "artifact_spend",
    "command_meter",
    "judge_calls",
    "spent_on",
    "tokens_of",
    "total",
]
