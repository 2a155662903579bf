"""What a run could and could not show, beside its verdict: whether a run that did not pass
lacked evidence (the interval holds the policy's threshold) or showed the candidate worse;
the smallest regression it did rule out; and how many tasks, or how many samples of these
tasks, would rule out the policy's margin if the per-task differences stayed as observed.
Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .estimates import Comparison
from .exact import EXACT_MAX_TASKS, exact_p
from .intervals import EPS
from .policy import PolicyDecision
from .score import Tally, z_statistic
from .student_t import t_quantile, t_upper_tail

MAX_TASKS = 100_000  # planning figures beyond these are reported as null: not a plan
MAX_SAMPLES = 1000  # --samples' own ceiling


@dataclass(frozen=True)
class TasksNeeded:
    """Planning figures for a run that lacked evidence. `tasks`: paired tasks, at `samples`
    attempts per task and arm, with which the policy's bound would clear its threshold if the
    per-task differences kept their observed mean and spread (for pass/fail tasks: the same
    shares improved, regressed and tied). `samples_for_these_tasks`: attempts per task and arm
    with which these `these_tasks` would, assuming the spread is attempt noise that more
    samples average out (a lower bound when tasks truly differ). None: no number up to the
    cap would, at the observed difference."""

    tasks: int | None
    samples: int
    samples_for_these_tasks: int | None
    these_tasks: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "samples": self.samples,
            "samples_for_these_tasks": self.samples_for_these_tasks,
            "these_tasks": self.these_tasks,
        }


@dataclass(frozen=True)
class Evidence:
    """`insufficient`: the policy did not pass and did not show the candidate worse either.
    `detectable_margin`: the smallest regression, in points, the run ruled out at the policy's
    level (minus its lower bound; 0 when the bound is above 0); None without an interval
    policy. `tasks_needed`: for an insufficient run, what would settle it."""

    insufficient: bool
    detectable_margin: float | None
    tasks_needed: TasksNeeded | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "insufficient": self.insufficient,
            "detectable_margin": self.detectable_margin,
            "tasks_needed": None if self.tasks_needed is None else self.tasks_needed.to_dict(),
        }


NO_EVIDENCE = Evidence(False, None, None)


def assess(
    decision: PolicyDecision | None, comparison: Comparison | None, pass_k: int = 1
) -> Evidence:
    """The evidence figures of a policy's decision on a comparison. `pass_k` converts the
    comparison's samples (pass@k scores per task) back into attempts per task and arm."""
    if decision is None or comparison is None or decision.lower is None:
        return Evidence(bool(decision and decision.insufficient), None, None)
    margin = round(max(0.0, -decision.lower) * 100, 1)
    if not decision.insufficient:
        return Evidence(False, margin, None)
    theta, alpha = decision.threshold, decision.alpha
    test = comparison.paired_test()
    if test.n == 0 or theta is None or alpha is None:
        return Evidence(True, margin, None)
    theta += test.allowance  # a pooled baseline's drift allowance stays as the run grows
    if test.tallies is not None:
        tasks, samples = _tallied(test.tallies, test.samples, theta, alpha)
    else:
        if test.counts is not None:
            tasks = _tasks_binary(test.counts, theta, alpha)
        else:
            tasks = _tasks_spread(test.diffs, test.samples, theta, alpha)
        samples = _samples_for(test.diffs, test.samples, theta, alpha)
    return Evidence(
        True,
        margin,
        TasksNeeded(
            tasks,
            test.samples * pass_k,
            None if samples is None else samples * pass_k,
            test.n,
        ),
    )


def _spread(diffs: tuple[float, ...]) -> tuple[float, float]:
    n = len(diffs)
    mean = math.fsum(diffs) / n
    return mean, math.fsum((d - mean) ** 2 for d in diffs) / n


def _t_floor_clears(mean: float, var: float, n: int, h: float, theta: float, alpha: float) -> bool:
    """The t-floor lower bound of n tasks whose differences have this mean and (population)
    variance, with floor h, above theta at one-sided alpha."""
    if n < 2:
        return False
    se = math.sqrt((n * var + 2 * h * h) / ((n + 1) * n))
    return mean - t_quantile(1 - 2 * alpha, n - 1) * se > theta + EPS


def _smallest(clears: Any, start: int, cap: int) -> int | None:
    """The smallest k in [start, cap] with clears(k), by doubling then bisection (the figures
    are monotone up to rounding; "about" in the wording allows for that)."""
    if start > cap:
        return None
    hi = start
    while not clears(hi):
        if hi >= cap:
            return None
        hi = min(cap, hi * 2)
    lo = max(start, hi // 2)
    if clears(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if clears(mid) else (mid, hi)
    return hi


def _tasks_spread(diffs: tuple[float, ...], samples: int, theta: float, alpha: float) -> int | None:
    mean, var = _spread(diffs)
    if mean <= theta:
        return None
    h = 1.0 / samples
    return _smallest(
        lambda n: _t_floor_clears(mean, var, n, h, theta, alpha), len(diffs) + 1, MAX_TASKS
    )


def _tasks_binary(counts: tuple[int, int, int], theta: float, alpha: float) -> int | None:
    """Tasks with the same shares improved and regressed; the exact test up to
    EXACT_MAX_TASKS tasks (as the decision would be made), the t-floor interval beyond."""
    b, c, n0 = counts
    if (b - c) / n0 <= theta:
        return None
    for n in range(n0 + 1, EXACT_MAX_TASKS + 1):
        bn, cn = round(b * n / n0), round(c * n / n0)
        if exact_p(bn, cn, n, round(theta, 9), "above") <= alpha:
            return n
    mean = (b - c) / n0
    var = (b + c) / n0 - mean * mean
    return _smallest(
        lambda n: _t_floor_clears(mean, var, n, 1.0, theta, alpha),
        max(n0, EXACT_MAX_TASKS) + 1,
        MAX_TASKS,
    )


def _tallied(
    tallies: tuple[Tally, ...], samples: int, theta: float, alpha: float
) -> tuple[int | None, int | None]:
    """Tasks, and samples per task, with which the score test would clear theta: the same mix
    of tasks, more of them or more attempts each (the pool growing with them). Its restricted
    estimates depend on the pass rates alone, so the variance falls as 1/attempts and z grows
    as the square root; the degrees of freedom are the candidate's attempts less one."""
    n = len(tallies)
    z = z_statistic(tallies, theta)
    attempts = sum(t[1] for t in tallies)
    if z <= 0:
        return None, None

    def clears(scale: float) -> bool:
        return t_upper_tail(z * math.sqrt(scale), max(1, round(attempts * scale) - 1)) <= alpha

    tasks = _smallest(lambda k: clears(k / n), n + 1, MAX_TASKS)
    more = _smallest(lambda s: clears(s / samples), samples + 1, MAX_SAMPLES)
    return tasks, more


def _samples_for(diffs: tuple[float, ...], samples: int, theta: float, alpha: float) -> int | None:
    """Samples per task (in the comparison's units) with which these tasks would clear theta,
    the spread shrinking as 1/samples (attempt noise) and the floor with it."""
    n = len(diffs)
    mean, var = _spread(diffs)
    if mean <= theta or n < 2:
        return None
    return _smallest(
        lambda s: _t_floor_clears(mean, var * samples / s, n, 1.0 / s, theta, alpha),
        samples + 1,
        MAX_SAMPLES,
    )


def of_verdict(
    verdict: str, reason: str | None, decision: PolicyDecision | None, evidence: Evidence
) -> Evidence:
    """The evidence as the artifact states it: `insufficient` only when the verdict is a fail
    the policy made (not "nothing passed", an error, a skip or --no-baseline's pass rate)."""
    from_policy = verdict == "fail" and decision is not None and reason == decision.reasoning
    if evidence.insufficient and not from_policy:
        return Evidence(False, evidence.detectable_margin, None)
    return evidence
