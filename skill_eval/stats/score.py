"""The score test of arms that made different numbers of pass/fail attempts a task: a baseline
pooled with cached attempts of earlier runs (more than the candidate's: stats/accumulate.py),
or a baseline that made only its fresh attempts beside a full cache (fewer: stats/drift.py).
Task i has the candidate's x_i passes of a_i attempts and the
baseline's y_i of b_i; the question is whether delta = mean_i(p_i - q_i) lies above (or below)
theta. Pure.

Tasks are fixed (the suite is what is judged) and attempts are independent draws of a task's
pass chance, so the mean difference of pass rates D has variance sum_i(p(1-p)/a + q(1-q)/b)/n².
The score test takes it where the null puts it: each task's baseline chance q is its restricted
maximum-likelihood estimate from both arms' attempts under p = q + theta (Farrington & Manning
1990; the cubic's closed form and the N/(N-1) factor, N = a + b, of Miettinen & Nurminen
1985). Then z = (D - theta) / sd against a Student t tail whose degrees of freedom are the
candidate's attempts less one: the variance rests on the candidate's few attempts (the pooled
baseline's are many), and with a normal tail small suites accept a skill 10 points worse in
up to 5.5% of runs at a 4% level.

Why here and not the t-floor interval: a pooled baseline mixes two noises of very different
size in each task's difference, and the spread of 20 differences plus a pseudo-task floor
either wastes the pool (the floor kept at the candidate's attempts: an unchanged skill passed
33.7% of runs at 20 tasks x 3 samples with 9 cached attempts) or, on suites the baseline nearly
always passes, accepts a 10-point-worse skill in over 5% of runs (up to 5.9%). This test keeps
every cell of `scripts/bench_score_tests.py --grid` at or under 4.8% and passes an unchanged
skill in 35.9% of the contract's runs (scripts/bench_verdicts.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from .student_t import t_quantile, t_upper_tail

Side = Literal["lower", "upper"]
Tally = tuple[int, int, int, int]  # candidate passes, attempts; baseline passes, attempts
_EDGE = 1e-9
_TOLERANCE = 1e-6  # of a bound, in pass-rate units (a ten-thousandth of a point)


def checked_tally(tallies: Mapping[str, Tally], task_id: str, cand: float, base: float) -> Tally:
    """A task's tally, checked against its scores: a tally that disagrees with them would
    decide on other data than the artifact shows."""
    if task_id not in tallies:
        raise ValueError(f"task {task_id!r}: scored in both arms but has no tally")
    x, a, y, b = tallies[task_id]
    if a < 1 or b < 1 or not (0 <= x <= a and 0 <= y <= b):
        raise ValueError(f"task {task_id!r}: tally {tallies[task_id]} is not passes of attempts")
    if abs(x / a - cand) > 1e-9 or abs(y / b - base) > 1e-9:
        raise ValueError(f"task {task_id!r}: tally {tallies[task_id]} disagrees with its scores")
    return (x, a, y, b)


def restricted_baseline(tally: Tally, theta: float) -> float:
    """The maximum-likelihood baseline pass chance q of one task given that the candidate's is
    q + theta: the root of Farrington and Manning's cubic, in Miettinen and Nurminen's closed
    form."""
    x, a, y, b = tally
    p1, p2, ratio = x / a, y / b, b / a
    c3 = 1 + ratio
    c2 = -(1 + ratio + p1 + ratio * p2 + theta * (ratio + 2))
    c1 = theta * theta + theta * (2 * p1 + ratio + 1) + p1 + ratio * p2
    c0 = -p1 * theta * (1 + theta)
    v = c2**3 / (3 * c3) ** 3 - c2 * c1 / (6 * c3 * c3) + c0 / (2 * c3)
    u = math.copysign(math.sqrt(max(c2 * c2 / (3 * c3) ** 2 - c1 / (3 * c3), 0.0)), v)
    if u == 0.0:
        p = -c2 / (3 * c3)
    else:
        w = (math.pi + math.acos(max(-1.0, min(1.0, v / u**3)))) / 3
        p = 2 * u * math.cos(w) - c2 / (3 * c3)
    return min(min(1.0, 1.0 - theta), max(max(0.0, -theta), p - theta))


def mean_difference(tallies: Sequence[Tally]) -> float:
    return math.fsum(x / a - y / b for x, a, y, b in tallies) / len(tallies)


def null_sd(tallies: Sequence[Tally], theta: float, nurminen: bool = True) -> float:
    """The sd of D at the null's restricted estimates, with Miettinen-Nurminen's N/(N-1)
    factor (`nurminen`; without it, Farrington-Manning's, which the bench compares)."""
    theta = min(1 - _EDGE, max(-1 + _EDGE, theta))
    var = 0.0
    for x, a, y, b in tallies:
        q = restricted_baseline((x, a, y, b), theta)
        p = min(1.0, max(0.0, q + theta))
        var += (p * (1 - p) / a + q * (1 - q) / b) * ((a + b) / (a + b - 1) if nurminen else 1)
    return math.sqrt(var) / len(tallies)


def z_statistic(tallies: Sequence[Tally], theta: float, nurminen: bool = True) -> float:
    """(D - theta) / sd, the sd at the null's restricted estimates (null_sd); ±inf when that
    sd is 0 (both arms certain on every task under the null) and D differs from theta."""
    sd = null_sd(tallies, theta, nurminen)
    gap = mean_difference(tallies) - theta
    if sd <= 0.0:
        return 0.0 if abs(gap) < _EDGE else math.copysign(math.inf, gap)
    return gap / sd


def degrees_of_freedom(tallies: Sequence[Tally]) -> int:
    """The attempts of the arm that made fewer, less one (at least 1): the candidate's against
    a pooled baseline, the baseline's own beside a full cache (stats/drift.py)."""
    fewer = min(sum(t[1] for t in tallies), sum(t[3] for t in tallies))
    return max(1, round(fewer) - 1)


def score_p(tallies: Sequence[Tally], theta: float, side: Side) -> float:
    """One-sided p-value for "delta lies above theta" (side "lower") or "below" ("upper")."""
    if not tallies:
        return 1.0
    z = z_statistic(tallies, theta)
    return t_upper_tail(z if side == "lower" else -z, degrees_of_freedom(tallies))


def score_bound(tallies: Sequence[Tally], alpha: float, side: Side) -> float:
    """The one-sided (1 - alpha) bound by inversion: the lower bound is the largest theta the
    test of "above theta" still rejects at alpha (the upper bound, the smallest theta "below
    theta" rejects). Regula falsi (Illinois) on z(theta) less its critical value, nearly
    linear in theta, from a bracket around the normal-approximation bound; _TOLERANCE on the
    safe side."""
    end = -1.0 if side == "lower" else 1.0
    if not tallies:
        return end
    sign = 1.0 if side == "lower" else -1.0
    critical = t_quantile(1 - 2 * alpha, degrees_of_freedom(tallies))

    def excess(theta: float) -> float:  # >= 0 where the test rejects, capped to stay finite
        return max(-1e6, min(1e6, sign * z_statistic(tallies, theta) - critical))

    kept = mean_difference(tallies)
    reach = 2 * critical * null_sd(tallies, kept) + 0.01
    rejected = max(-1 + _EDGE, kept - reach) if side == "lower" else min(1 - _EDGE, kept + reach)
    f_rejected, f_kept = excess(rejected), excess(kept)
    if f_rejected < 0:  # the guess fell short: the bound lies between the guess and the end
        kept, f_kept = rejected, f_rejected
        rejected = end - math.copysign(_EDGE, end)
        f_rejected = excess(rejected)
        if f_rejected < 0:
            return end
    last = 0
    while abs(kept - rejected) > _TOLERANCE:
        mid = (rejected * f_kept - kept * f_rejected) / (f_kept - f_rejected)
        if not min(rejected, kept) < mid < max(rejected, kept):
            mid = (rejected + kept) / 2
        f_mid = excess(mid)
        if f_mid >= 0:
            rejected, f_rejected = mid, f_mid
            f_kept = f_kept / 2 if last == -1 else f_kept  # Illinois: halve the stale end
            last = -1
        else:
            kept, f_kept = mid, f_mid
            f_rejected = f_rejected / 2 if last == 1 else f_rejected
            last = 1
    return rejected
