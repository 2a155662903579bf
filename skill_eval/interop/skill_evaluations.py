"""The evaluations of `run SKILL_DIR...` (the measured gate), one skill after another: one
skill's fault (evals whose checks fail, a cap reached) is that skill's, never the others';
and --max-cost-usd is one cap over them all, each evaluation running with what the ones
before it left (a pull request touching ten skills spends the cap once, not ten times).

    budget = SharedBudget(5.0)
    done = evaluate_one(lambda: run_evaluation(plan_with(budget.left)), budget)
    done.outcome or done.error
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BudgetExhausted, RunInterrupted, SkillEvalError

if TYPE_CHECKING:
    from ..engine.finish import EvaluationOutcome


class SharedBudget:
    """A cost cap (None: none) spent by one evaluation after another."""

    def __init__(self, cap: float | None) -> None:
        self.cap, self.spent, self.stopped = cap, 0.0, False

    @property
    def left(self) -> float | None:
        """What the next evaluation may spend (None: no cap)."""
        return None if self.cap is None else max(self.cap - self.spent, 0.0)

    @property
    def spent_out(self) -> bool:
        """Nothing left: the next evaluation does not start."""
        return self.stopped or (self.cap is not None and self.spent >= self.cap)

    def spend(self, artifact: Mapping[str, Any]) -> None:
        """Count what an evaluation spent: its arms' attempts and model-graded judgements."""
        for usage in (artifact.get("usage") or {}).values():
            if isinstance(usage, Mapping):
                self.spent += float(usage.get("cost_usd") or 0)
                self.spent += float(usage.get("judge_cost_usd") or 0)


@dataclass(frozen=True)
class SkillEvaluation:
    """One skill's evaluation: its outcome, or the error that stopped it."""

    outcome: EvaluationOutcome | None = None
    error: SkillEvalError | None = None


def evaluate_one(
    evaluate: Callable[[], EvaluationOutcome], budget: SharedBudget
) -> SkillEvaluation:
    """Run one skill's evaluation; an error of the tree is its result (the user's Ctrl-C
    still stops everything). A cap reached stops the evaluations after it too."""
    try:
        outcome = evaluate()
    except RunInterrupted:
        raise
    except SkillEvalError as exc:
        budget.stopped = budget.stopped or isinstance(exc, BudgetExhausted)
        return SkillEvaluation(error=exc)
    budget.spend(outcome.artifact)
    return SkillEvaluation(outcome=outcome)


__all__ = ["SharedBudget", "SkillEvaluation", "evaluate_one"]
