"""The default policy's decisions over many simulated runs at once (numpy), for the drift bench
(scripts/drift_bench.py), each the vector form of the function `skill-eval run` decides by:

- `exact_passes`: one pass/fail attempt a task and arm (stats/exact.py: exact_p), read from a
  table of the project's own exact_p over every (improved, regressed) count of n tasks;
- `t_floor_passes`: equal attempts a task (stats/intervals.py: the t-floor interval's bound);
- `score_passes`: the arms' attempts differ (stats/score.py: the score test at the threshold);
- `agree`: the drift test of fresh against cached attempts (stats/drift.py: check).

`check_against_project` decides a sample of the same runs with the project's own functions
(stats/intervals.PairedTest, as stats/policy.decide_policy asks it; stats/drift.check) and
counts the decisions that differ: the bench refuses to print figures when any does.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import NDArray

from skill_eval.core.model import Status
from skill_eval.stats import drift
from skill_eval.stats.exact import exact_p
from skill_eval.stats.intervals import EPS, PairedTest
from skill_eval.stats.score import restricted_baseline
from skill_eval.stats.student_t import t_quantile

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]
Bools = NDArray[np.bool_]


@cache
def exact_table(n: int, theta: float, alpha: float) -> Ints:
    """For each count of improved tasks b, the most regressed tasks c at which n pass/fail
    tasks still rule out theta from below at alpha (-1: none). exact_p grows with c, so a
    bisection over c finds the edge; check_against_project checks the table's answers."""
    top = np.full(n + 1, -1, dtype=np.int64)

    def clears(b: int, c: int) -> bool:
        return exact_p(b, c, n, round(theta, 9), "above") <= alpha

    for b in range(n + 1):
        lo, hi = 0, n - b  # clears at lo, maybe not at hi
        if not clears(b, lo):
            continue
        if clears(b, hi):
            top[b] = hi
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if clears(b, mid) else (lo, mid)
        top[b] = lo
    return top


def exact_passes(x: Ints, y: Ints, theta: float, alpha: float) -> Bools:
    """x, y: (runs, tasks) 0/1 outcomes of the candidate and the baseline."""
    n = x.shape[1]
    improved = ((x == 1) & (y == 0)).sum(axis=1)
    regressed = ((x == 0) & (y == 1)).sum(axis=1)
    return regressed <= exact_table(n, theta, alpha)[improved]


def t_floor_passes(x: Ints, y: Ints, samples: int, theta: float, alpha: float) -> Bools:
    """Equal attempts: the t interval over tasks with the pseudo-task floor 2 / samples²."""
    n = x.shape[1]
    d = (x - y) / samples
    mean = d.mean(axis=1)
    ss = ((d - mean[:, None]) ** 2).sum(axis=1) + 2.0 / samples**2
    se = np.sqrt(ss / (n + 1) / n)
    low = np.maximum(-1.0, mean - t_quantile(1 - 2 * alpha, n - 1) * se)
    return low > theta + EPS


@cache
def _variance_table(a: int, most: int, theta: float) -> Floats:
    """Each task's term of the score test's variance at theta, for a candidate of `a`
    attempts, by (baseline attempts b, candidate passes x, baseline passes y): the project's
    own restricted estimate (stats/score.restricted_baseline) with Miettinen-Nurminen's
    N / (N - 1). Tasks take a handful of distinct tallies, so a table serves every run."""
    table = np.zeros((most + 1, a + 1, most + 1))
    for b in range(1, most + 1):
        for x in range(a + 1):
            for y in range(b + 1):
                q = restricted_baseline((x, a, y, b), theta)
                p = min(1.0, max(0.0, q + theta))
                table[b, x, y] = (p * (1 - p) / a + q * (1 - q) / b) * ((a + b) / (a + b - 1))
    return table


def score_z(x: Ints, a: int, y: Ints, b: Ints, theta: float) -> Floats:
    """stats/score.z_statistic per run: x, y are (runs, tasks) passes of `a` candidate
    attempts a task and of `b` (per task) baseline attempts."""
    theta = min(1 - 1e-9, max(-1 + 1e-9, theta))
    var = _variance_table(a, int(b.max()), theta)[b[None, :], x, y]
    n = x.shape[1]
    sd = np.sqrt(var.sum(axis=1)) / n
    gap = (x / a - y / b[None, :]).mean(axis=1) - theta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = gap / sd
    flat = np.where(np.abs(gap) < 1e-9, 0.0, np.copysign(np.inf, gap))
    return np.where(sd <= 0.0, flat, z)


def score_passes(x: Ints, a: int, y: Ints, b: Ints, theta: float, alpha: float) -> Bools:
    """The score test of "above theta" at one-sided alpha, df the fewer attempts less one."""
    df = max(1, min(a * x.shape[1], int(b.sum())) - 1)
    return score_z(x, a, y, b, theta) >= t_quantile(1 - 2 * alpha, df)


def agree(f: Ints, m: Ints, y: Ints, k: Ints, level: float = drift.DRIFT_LEVEL) -> Bools:
    """The drift test (fresh f of m against cached y of k a task, m and k per task) does not
    refuse at level: the score test of no difference with the cached attempts as the second
    arm, two-sided, df the fresh attempts less one."""
    df = max(1, int(m.sum()) - 1)
    return np.abs(_grouped_z(f, m, y, k)) < t_quantile(1 - level, df)


def _grouped_z(f: Ints, m: Ints, y: Ints, k: Ints) -> Floats:
    """score_z at 0 with the first arm's attempts `m` per task (the fresh ones, which differ
    between tasks): the variance summed over the groups of tasks with the same count."""
    n = f.shape[1]
    var = np.zeros(f.shape[0])
    gap = np.zeros(f.shape[0])
    for count in sorted(set(m.tolist())):
        cols = np.flatnonzero(m == count)
        table = _variance_table(count, int(k[cols].max()), 0.0)
        var += table[k[None, cols], f[:, cols], y[:, cols]].sum(axis=1)
        gap += (f[:, cols] / count - y[:, cols] / k[None, cols]).sum(axis=1)
    sd = np.sqrt(var) / n
    gap /= n
    with np.errstate(divide="ignore", invalid="ignore"):
        z = gap / sd
    flat = np.where(np.abs(gap) < 1e-9, 0.0, np.copysign(np.inf, gap))
    return np.where(sd <= 0.0, flat, z)


def _statuses(passes: int, attempts: int) -> list[Status]:
    return ["passed"] * passes + ["failed"] * (attempts - passes)


def project_passes(
    x: list[int], a: list[int], y: list[int], b: list[int], theta: float, alpha: float
) -> bool:
    """One run decided by the project's own test, as engine/summary.py builds it: the scores,
    the baseline's attempts a task when they differ (own_floor), the tallies."""
    s = a[0]
    least = min(b)
    floor = least if least < s else None
    diffs = [xi / ai - yi / bi for xi, ai, yi, bi in zip(x, a, y, b, strict=True)]
    scores = [xi / ai for xi, ai in zip(x, a, strict=True)] + [
        yi / bi for yi, bi in zip(y, b, strict=True)
    ]
    binary = all(v in (0.0, 1.0) for v in scores)
    tallies = list(zip(x, a, y, b, strict=True))
    test = PairedTest.of(diffs, s, binary, floor, tallies)
    return test.clears(theta, alpha, "lower")


def check_against_project(
    decided: Bools, x: Ints, a: int, y: Ints, b: Ints, theta: float, alpha: float, sample: int
) -> int:
    """How many of the first `sample` runs the project's own test decides otherwise (`a`
    candidate attempts a task, `b` the baseline's per task)."""
    wrong = 0
    attempts, made = [a] * x.shape[1], b.tolist()
    for r in range(min(sample, len(decided))):
        mine = project_passes(x[r].tolist(), attempts, y[r].tolist(), made, theta, alpha)
        wrong += mine != bool(decided[r])
    return wrong


def check_guard(said: Bools, f: Ints, m: Ints, y: Ints, k: Ints, sample: int) -> int:
    """How many of the first `sample` drift tests stats/drift.check answers otherwise."""
    wrong = 0
    for r in range(min(sample, len(said))):
        tasks = range(f.shape[1])
        fresh = {str(i): _statuses(int(f[r, i]), int(m[i])) for i in tasks}
        cached = {str(i): _statuses(int(y[r, i]), int(k[i])) for i in tasks}
        wrong += drift.check(fresh, cached).agree != bool(said[r])
    return wrong
