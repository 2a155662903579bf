"""A run's budget as the model calls meet it: whether one more request may go, and where each
reply's cost is charged the moment it is known. The run's meter (engine/spend.py `Meter`) is
one; an executor holds the budget it was given (`ExecutorBase.use_budget`) and asks it before
each request (an API executor) or lets the jail's forward ask it (an agent CLI).

    if (why := budget.refusal()) is not None:      # the cap is reached: send nothing more
        return stopped_for_budget(why, spent_usage, spent_usd)
    budget.charge(reply_usd, reply_tokens)          # each reply, as it comes

An attempt the budget stopped is an error of its own kind (`BUDGET_STOPPED`): never retried,
never a failure or a pass, run again by `run --resume` with a higher cap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .execution import ExecutionResult, Usage
from .failure import Failure

# Attempt.meta["error_type"] of an attempt the budget stopped (engine/spending.py reads it).
BUDGET_STOPPED = "budget"


class Budget(Protocol):
    """What a model call asks of the run's budget (thread-safe)."""

    def refusal(self) -> str | None:
        """Why no further model request may go (a cap reached, in words), or None."""
        ...

    def charge(self, cost_usd: float, tokens: int) -> bool:
        """Count what one reply (or call) cost; True once a cap is reached."""
        ...


def stopped_for_budget(why: str, usage: Usage, cost_usd: float) -> ExecutionResult:
    """The attempt the budget stopped, with what its replies cost before it did; `charged`:
    every one of them was charged as it came."""
    return ExecutionResult(
        failure=Failure(f"stopped: the run's budget is spent ({why})"),
        usage=usage,
        cost_usd=cost_usd,
        meta={"error_type": BUDGET_STOPPED},
        charged=True,
    )


def stopped_by_budget(meta: Mapping[str, Any]) -> bool:
    """Whether an attempt's meta says the budget stopped it."""
    return meta.get("error_type") == BUDGET_STOPPED


__all__ = ["BUDGET_STOPPED", "Budget", "stopped_by_budget", "stopped_for_budget"]
