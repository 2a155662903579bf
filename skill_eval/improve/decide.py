"""The iteration engine's decision after each evaluated version: a pure function.

The checks run in the issue's fixed order (budget, timeout, regression, quality, max
iterations, diminishing returns); the first that holds wins and its reason is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Decision = Literal[
    "Continue", "Accept", "AcceptBest", "AbortBudget", "AbortTimeout", "AbortRegression"
]
DECISIONS: tuple[Decision, ...] = (
    "Continue",
    "Accept",
    "AcceptBest",
    "AbortBudget",
    "AbortTimeout",
    "AbortRegression",
)


@dataclass(frozen=True)
class IterationSettings:
    """The loop's knobs; defaults follow issue 12 (and OpenKoi's iteration engine).

    `token_budget` is per iteration: the run may spend `token_budget * iterate` tokens in
    all, and recall gets 10% of one iteration's budget. `max_cost_usd` is a hard stop for the
    whole run, `timeout_seconds` the whole run's wall clock. `regression_threshold` is not
    given by the issue; 0.10 (one task in ten) is our choice.
    """

    iterate: int = 3
    quality: float = 0.8
    improvement_threshold: float = 0.05
    regression_threshold: float = 0.10
    abort_on_regression: bool = True
    token_budget: int = 200_000
    max_cost_usd: float | None = None  # the command's --max-cost-usd (None: no cap)
    timeout_seconds: float = 1800.0
    holdout: float = 0.4
    seed: int = 0
    # Attempts a task and arm when the pick is confirmed on the tasks set apart: more than
    # the loop's one, for power where the tasks are few (scripts/bench_improve.py).
    confirm_samples: int = 3

    def __post_init__(self) -> None:
        problems = []
        if self.iterate < 1:
            problems.append("iterate: must be >= 1")
        for name in ("quality", "improvement_threshold", "regression_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                problems.append(f"{name}: must be in [0, 1], got {value}")
        if not 0.0 <= self.holdout < 1.0:
            problems.append(f"holdout: must be in [0, 1), got {self.holdout}")
        if self.confirm_samples < 1:
            problems.append("confirm_samples: must be >= 1")
        if self.token_budget < 1:
            problems.append("token_budget: must be >= 1")
        if (self.max_cost_usd is not None and self.max_cost_usd < 0) or self.timeout_seconds <= 0:
            problems.append("max_cost_usd must be >= 0 and timeout_seconds > 0")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def run_token_budget(self) -> int:
        return self.token_budget * self.iterate

    @property
    def recall_token_budget(self) -> int:
        return self.token_budget // 10


@dataclass(frozen=True)
class DecisionInput:
    """What the decision looks at, after version number `iteration` (1-based) was evaluated.

    `tokens_used`, `cost_usd` and `elapsed_seconds` are totals for the run so far;
    `previous_score` is the train score of the previous iteration (None on the first).
    """

    iteration: int
    train_score: float
    previous_score: float | None
    tokens_used: int
    cost_usd: float
    elapsed_seconds: float
    budget_spent: str | None = None  # the command's cap, reached (--max-cost-usd, ...): which


@dataclass(frozen=True)
class Decided:
    decision: Decision
    reason: str


def decide(state: DecisionInput, settings: IterationSettings) -> Decided:
    """The first rule that holds, in the issue's order."""
    s = settings
    if state.tokens_used > s.run_token_budget:
        return Decided(
            "AbortBudget",
            f"tokens {state.tokens_used} > budget "
            f"{s.run_token_budget} ({s.token_budget} x {s.iterate})",
        )
    if state.budget_spent is not None:
        return Decided("AbortBudget", f"budget spent: {state.budget_spent}")
    if s.max_cost_usd is not None and state.cost_usd > s.max_cost_usd:
        return Decided("AbortBudget", f"cost ${state.cost_usd:.2f} > max ${s.max_cost_usd:.2f}")
    if state.elapsed_seconds > s.timeout_seconds:
        return Decided(
            "AbortTimeout",
            f"wall time {state.elapsed_seconds:.0f}s > timeout {s.timeout_seconds:.0f}s",
        )
    drop = None if state.previous_score is None else state.previous_score - state.train_score
    if s.abort_on_regression and drop is not None and drop > s.regression_threshold:
        return Decided(
            "AbortRegression",
            f"train {state.previous_score:.2f} -> {state.train_score:.2f} dropped "
            f"more than {s.regression_threshold:.2f}; keeping the previous version",
        )
    if state.train_score >= s.quality:
        return Decided("Accept", f"train {state.train_score:.2f} >= quality {s.quality:.2f}")
    if state.iteration >= s.iterate:
        return Decided("AcceptBest", f"reached {state.iteration} of {s.iterate} iterations")
    if state.previous_score is not None:
        gain = state.train_score - state.previous_score
        if gain < s.improvement_threshold:
            return Decided(
                "AcceptBest", f"improvement {gain:+.2f} < threshold {s.improvement_threshold:.2f}"
            )
    return Decided("Continue", f"train {state.train_score:.2f} < quality {s.quality:.2f}")
