"""Adaptive sampling within a budget (`--budget ATTEMPTS`, round 2 of #30): a first round of
attempts at every task in both arms, then the rest of the budget where it narrows the interval
most: tasks that are flaky. Pure: the engine (engine/rounds.py) runs the rounds and calls
`first_round` and `allocate`, then scores each task on all its attempts (the unbiased pass@1,
c/n: stats.accumulate.pooled_score) and decides as usual, with the pseudo-task floor at the
attempts the budget buys per task and arm on average, budget // (2 * tasks) (`floor`).

The catch, and how it is avoided: if an arm's extra attempts at a task depended on that arm's
own first-round results there, its pass rate over all attempts would be biased (stop after
three passes, go on after a failure: the estimate leans towards the lucky stops) and a worse
candidate could look better. So allocation crosses over: an arm's extra attempts at a task
follow the OTHER arm's first round there (a task the baseline finds flaky is likely flaky for
the candidate too). Each arm's attempt count is then independent of its own outcomes, every
pass rate stays unbiased, and the paired interval keeps its meaning. Within an arm, task i's
share is its Neyman weight: the expected standard deviation of one attempt, E[sqrt(p(1-p))]
under Jeffreys' prior given the other arm's first round (c passes of n),
B(c + 1, n - c + 1) / B(c + 1/2, n - c + 1/2). scripts/bench_verdicts.py compares it with
fixed sampling at equal attempts, both error rates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Status

FIRST_ROUND = 2  # attempts per task and arm before any allocation
ARMS = ("candidate", "baseline")


def first_round(budget: int, tasks: int) -> int:
    """Attempts per task and arm of the first round: FIRST_ROUND, or fewer when the budget
    is small; at least one (a budget under one attempt per task and arm is refused)."""
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    if budget < 2 * tasks:
        raise ValueError(
            f"--budget {budget} is under one attempt per task and arm ({2 * tasks} attempts)"
        )
    return min(FIRST_ROUND, budget // (2 * tasks))


def floor(budget: int, tasks: int) -> int:
    """Attempts per task and arm the paired interval's pseudo-task floor assumes: what the
    budget buys on average (fixed sampling at equal attempts has the same floor)."""
    return max(1, budget // (2 * max(1, tasks)))


def arm_totals(budget: int, tasks: int) -> dict[str, int]:
    """Attempts each arm gets of the budget: its first round, and its share of the rest (the
    candidate's the larger by one when the rest is odd: `allocate`)."""
    first = first_round(budget, tasks)
    remaining = budget - 2 * tasks * first
    return {
        "candidate": tasks * first + remaining - remaining // 2,
        "baseline": tasks * first + remaining // 2,
    }


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def neyman_weight(passes: int, attempts: int) -> float:
    """E[sqrt(p (1 - p))] under Jeffreys' Beta(1/2, 1/2) prior after `passes` of
    `attempts`: the expected standard deviation of one more attempt."""
    c, n = passes, attempts
    return math.exp(_log_beta(c + 1, n - c + 1) - _log_beta(c + 0.5, n - c + 0.5))


def _apportion(weights: Mapping[str, float], total: int) -> dict[str, int]:
    """`total` attempts in proportion to `weights` (largest remainders; ties in task order)."""
    if total <= 0 or not weights:
        return dict.fromkeys(weights, 0)
    whole = math.fsum(weights.values())
    quotas = {t: total * w / whole for t, w in weights.items()}
    out = {t: math.floor(q) for t, q in quotas.items()}
    left = total - sum(out.values())
    order = sorted(weights, key=lambda t: -(quotas[t] - out[t]))
    for t in order[:left]:
        out[t] += 1
    return out


def allocate(
    first: Mapping[str, Mapping[str, Sequence[Status]]], remaining: int
) -> dict[str, dict[str, int]]:
    """Extra attempts per arm and task for the rest of the budget. `first[arm][task]` holds
    the first round's statuses of each of the two arms ("candidate", "baseline"). Each arm gets
    half the remaining attempts (the arms' variances add up alike); within an arm, shares
    follow the OTHER arm's first round at each task (see the module doc). Attempts in error
    count neither way; a task the other arm could not judge gets the prior's weight."""
    missing = [arm for arm in ARMS if arm not in first]
    if missing:
        raise ValueError(f"first round lacks arm(s): {', '.join(missing)}")
    if remaining < 0:
        raise ValueError(f"remaining must be >= 0, got {remaining}")
    tasks = list(first["candidate"])
    shares = {"candidate": remaining - remaining // 2, "baseline": remaining // 2}
    out: dict[str, dict[str, int]] = {}
    for arm, other in (("candidate", "baseline"), ("baseline", "candidate")):
        weights = {}
        for task in tasks:
            seen = [s for s in first[other].get(task, ()) if s != "error"]
            weights[task] = neyman_weight(seen.count("passed"), len(seen))
        out[arm] = _apportion(weights, shares[arm])
    return out


@dataclass(frozen=True)
class Allocation:
    """How a run spent its budget, for the artifact: the first round's attempts per task and
    arm, then the extra attempts per arm and task that `allocate` gave."""

    budget: int
    first: int
    extra: Mapping[str, Mapping[str, int]]  # arm -> task -> attempts after the first round
    tasks: int

    @property
    def planned(self) -> int:
        return 2 * self.tasks * self.first + sum(sum(t.values()) for t in self.extra.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": (
                "a first round at every task and arm, then the rest where the other arm's "
                "first round says the task is flaky (Neyman weights, crossed over)"
            ),
            "budget": self.budget,
            "first_round": self.first,
            "floor_samples": floor(self.budget, self.tasks),
            "planned_attempts": self.planned,
            "extra": {arm: dict(per_task) for arm, per_task in self.extra.items()},
        }
