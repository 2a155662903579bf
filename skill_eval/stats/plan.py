"""A plan for a run that lacked evidence: how many tasks (or samples of these tasks) a rerun
needs to settle, pass or shown worse, with a stated probability (80%).

The probability is predictive ("assurance"): the chance that a rerun settles, averaged over
what the true delta may be given this run, under a prior that a skill's true delta is normal
about zero with a standard deviation of PRIOR_SD. So of the runs that end like this one (this
policy, estimate and spread), 80% of reruns at the named size settle; for one fixed true delta
the rate is lower the nearer it sits to the threshold, where no size settles it more often
than by chance, and higher away from it. A point estimate cannot tell these apart: a run that
did not settle was picked for being near its threshold, and a plan read off the raw delta is a
coin flip at the size it names (the audit of issue 41: 52.5%). The spread is read off the
decision's own interval, so the exact, score and t-floor tests plan alike. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

from .policy import PolicyDecision
from .student_t import t_quantile

MAX_TASKS = 100_000  # planning figures beyond these are reported as null, with the reason
MAX_SAMPLES = 1000  # --samples' own ceiling
SETTLE_PROBABILITY = 0.8
# The prior on a skill's true delta (pass-rate points / 100): most skills move a suite's pass
# rate by under 20 points either way. It sets how far a run's delta is shrunk toward zero: it
# keeps PRIOR_SD^2 / (se^2 + PRIOR_SD^2), about a third at 20 tasks x 1 sample (se ~ 0.15).
PRIOR_SD = 0.10


@dataclass(frozen=True)
class TasksNeeded:
    """Planning figures for a run that lacked evidence. `tasks`: paired tasks, at `samples`
    attempts per task and arm, with which a rerun settles with `probability`, averaged over
    the true delta given this run (mean `effect`: the observed delta shrunk toward zero):
    passes, or is shown worse (`settles_as`: the likelier; None when even).
    `samples_for_these_tasks`: attempts per task and arm with which these `these_tasks`
    would, the spread being attempt noise that more samples average out (a lower bound when
    tasks truly differ). `reason` says why a figure is null."""

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


@dataclass(frozen=True)
class Belief:
    """What a run says of the true delta (normal posterior: `mean`, `sd`) and the rule a rerun
    is held to: `threshold` and the bound's one-sided `alpha`."""

    mean: float
    sd: float
    threshold: float
    alpha: float

    def settle_chances(self, se: float, quantile: float) -> tuple[float, float]:
        """The chances that a rerun whose delta has standard error `se` passes and is shown
        worse, its bound lying `quantile` standard errors from its estimate, averaged over
        the true delta: E[Phi(x + b * delta)] over a normal delta is Phi of one normal, so no
        integral."""
        spread = math.sqrt(se * se + self.sd * self.sd)
        reach = quantile * se
        up = NormalDist().cdf((self.mean - self.threshold - reach) / spread)
        down = NormalDist().cdf((self.threshold - self.mean - reach) / spread)
        return up, down


def posterior(estimate: float, se: float) -> tuple[float, float]:
    """Mean and sd of the true delta given an estimate with standard error `se`, under the
    N(0, PRIOR_SD^2) prior: the estimate shrunk toward zero."""
    weight = PRIOR_SD**2 / (PRIOR_SD**2 + se * se)
    return estimate * weight, se * math.sqrt(weight)


def _quantile(alpha: float, n: int) -> float:
    return t_quantile(1 - 2 * alpha, max(1, n - 1))


def _smallest(low: int, high: int, enough: Callable[[int], bool]) -> int | None:
    """The smallest m in [low, high] with enough(m), by bisection (the chance of settling
    grows with the size; the answer is one where it holds and fails one below)."""
    if not enough(high):
        return None
    if enough(low):
        return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def settle_tasks(belief: Belief, sd: float, power: float = SETTLE_PROBABILITY) -> int | None:
    """The fewest new tasks (per-task spread `sd`) at which a rerun settles with `power`,
    up to MAX_TASKS."""

    def enough(n: int) -> bool:
        return sum(belief.settle_chances(sd / math.sqrt(n), _quantile(belief.alpha, n))) >= power

    return _smallest(2, MAX_TASKS, enough)


def settle_samples(
    belief: Belief, se: float, n: int, samples: int, power: float = SETTLE_PROBABILITY
) -> int | None:
    """The fewest samples, above `samples`, at which these `n` tasks (standard error `se` at
    `samples`) settle with `power`, up to MAX_SAMPLES."""
    quantile = _quantile(belief.alpha, n)

    def enough(m: int) -> bool:
        return sum(belief.settle_chances(se * math.sqrt(samples / m), quantile)) >= power

    return _smallest(samples + 1, MAX_SAMPLES, enough) if samples < MAX_SAMPLES else None


def plan(decision: PolicyDecision, n: int, samples: int, pass_k: int = 1) -> TasksNeeded:
    """What would settle an insufficient decision over `n` paired tasks at `samples` per task
    and arm (the comparison's units; `pass_k` converts back to attempts)."""
    base = TasksNeeded(None, samples * pass_k, None, n)
    lower, upper, theta, alpha = decision.lower, decision.upper, decision.threshold, decision.alpha
    if lower is None or upper is None or theta is None or alpha is None or n == 0:
        return replace(base, reason="no task has a result in both arms")
    half = (upper - lower) / 2
    se = half / _quantile(alpha, n) if half > 0 else 0.0
    if se <= 0:
        return replace(base, reason="the run shows no spread to plan from")
    mean, sd = posterior((lower + upper) / 2, se)
    belief = Belief(mean, sd, theta, alpha)
    settles_as = None if mean == theta else ("pass" if mean > theta else "worse")
    tasks = settle_tasks(belief, se * math.sqrt(n))
    more = settle_samples(belief, se, n, samples)
    reason = None
    if tasks is None:
        reason = f"no size up to {MAX_TASKS:,} tasks settles a result like this one as often"
    elif more is None:
        reason = f"these tasks would need more than {MAX_SAMPLES} samples"
    return TasksNeeded(
        tasks,
        samples * pass_k,
        None if more is None else more * pass_k,
        n,
        SETTLE_PROBABILITY,
        mean,
        settles_as,
        reason,
    )
