"""A plan for a run that lacked evidence: how many tasks (or samples of these tasks) a rerun
needs for the same result to settle, pass or shown worse, with a stated probability (80%).

The effect planned for is the observed one shrunk toward zero (by 1.5 times the share of its
square that noise explains), because a run that did not settle was picked
for being near its threshold, and a plan read off the raw estimate is a coin flip at the size
it names (the audit of issue 41: 52.5%). The spread is read off the decision's own interval,
so the exact, score and t-floor tests plan alike. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

from .intervals import EPS
from .policy import PolicyDecision
from .student_t import t_quantile

MAX_TASKS = 100_000  # planning figures beyond these are reported as null, with the reason
MAX_SAMPLES = 1000  # --samples' own ceiling
SETTLE_PROBABILITY = 0.8
# How hard the effect is shrunk: to zero while within sqrt(1.5) standard errors of it. 1 is
# the positive-part James-Stein weight; 1.5 brings an even result's reruns to the stated 80%
# at 20 tasks (scripts/plan_bench.py; 73% at 1), runs that stopped near their threshold
# being a biased draw.
NOISE_WEIGHT = 1.5


@dataclass(frozen=True)
class TasksNeeded:
    """Planning figures for a run that lacked evidence. `tasks`: paired tasks, at `samples`
    attempts per task and arm, with which a rerun of `effect` (the observed delta shrunk toward
    zero) settles with `probability`: passes when the effect clears the threshold, is shown
    worse when it is past it (`settles_as`). `samples_for_these_tasks`: attempts per task and
    arm with which these `these_tasks` would, the spread being attempt noise that more samples
    average out (a lower bound when tasks truly differ). `reason` says why a figure is null."""

    tasks: int | None
    samples: int
    samples_for_these_tasks: int | None
    these_tasks: int
    probability: float = SETTLE_PROBABILITY
    effect: float | None = None
    settles_as: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "samples": self.samples,
            "samples_for_these_tasks": self.samples_for_these_tasks,
            "these_tasks": self.these_tasks,
            "probability": self.probability,
            "effect": None if self.effect is None else round(self.effect * 100, 1),
            "settles_as": self.settles_as,
            "reason": self.reason,
        }


def shrunk(estimate: float, se: float) -> float:
    """The estimate shrunk toward zero by NOISE_WEIGHT times the share of its square that
    noise explains."""
    if estimate == 0:
        return 0.0
    return estimate * max(0.0, 1.0 - NOISE_WEIGHT * se * se / (estimate * estimate))


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _quantile(alpha: float, n: int) -> float:
    return t_quantile(1 - 2 * alpha, max(1, n - 1))


def _settle_tasks(gap: float, sd: float, alpha: float, power: float) -> int | None:
    """The smallest n with gap * sqrt(n) / sd >= t_(1-alpha, n-1) + z_power (a t test's
    normal-approximation power), up to MAX_TASKS."""

    def enough(n: int) -> bool:
        return gap * math.sqrt(n) / sd >= _quantile(alpha, n) + _z(power)

    if not enough(MAX_TASKS):
        return None
    guess = max(2, math.ceil(((_z(1 - alpha) + _z(power)) * sd / gap) ** 2))
    n = guess
    while n > 2 and enough(n - 1):
        n -= 1
    while not enough(n):
        n += 1
    return n


def plan(
    decision: PolicyDecision, n: int, samples: int, allowance: float, pass_k: int = 1
) -> TasksNeeded:
    """What would settle an insufficient decision over `n` paired tasks at `samples` per task
    and arm (the comparison's units; `pass_k` converts back to attempts)."""
    base = TasksNeeded(None, samples * pass_k, None, n)
    lower, upper, theta, alpha = decision.lower, decision.upper, decision.threshold, decision.alpha
    if lower is None or upper is None or theta is None or alpha is None or n == 0:
        return replace(base, reason="no task has a result in both arms")
    half = (upper - lower) / 2 - allowance
    se = half / _quantile(alpha, n) if half > 0 else 0.0
    centre = (lower + upper) / 2
    effect = shrunk(centre, se)
    gap = abs(effect - theta) - allowance  # a pooled bound keeps its allowance as it grows
    settles_as = "pass" if effect > theta else "worse"
    if se <= 0 or gap <= EPS:
        why = "the effect, shrunk toward zero, sits on the policy's threshold: no number of "
        why += "tasks or samples would settle it more often than by chance"
        return replace(base, effect=effect, reason=why)
    sd = se * math.sqrt(n)
    power = SETTLE_PROBABILITY
    tasks = _settle_tasks(gap, sd, alpha, power)
    # these tasks at more samples: the variance of a task's difference falls as 1/samples
    need = ((_quantile(alpha, n) + _z(power)) * se / gap) ** 2 * samples
    more = math.ceil(need - 1e-9) if need <= MAX_SAMPLES else None
    if more is not None and more <= samples:
        more = samples + 1
    reason = None
    if tasks is None:
        reason = f"more than {MAX_TASKS:,} tasks would be needed at this effect"
    elif more is None:
        reason = f"these tasks would need more than {MAX_SAMPLES} samples"
    return TasksNeeded(
        tasks,
        samples * pass_k,
        None if more is None else more * pass_k,
        n,
        power,
        effect,
        settles_as,
        reason,
    )
