"""Exact decisions for paired pass/fail outcomes: one attempt per task and arm, so each task
is improved (candidate passed, baseline failed), regressed (the reverse) or tied. Pure.

The question is whether delta = P(improved) - P(regressed) lies above (or below) a threshold
theta. The test is the exact unconditional one of Hsueh, Liu & Chen (2001, Biometrics 57:478):
the outcomes (b improved, c regressed, n tasks) are ordered by Tango's score statistic
(Tango 1998, Stat Med 17:891), and the p-value is the largest chance, over every discordance
the null boundary delta = theta allows, that n tasks give an outcome at least as extreme.
No approximation is involved: the false-accept rate is at most the level for any pair of pass
chances (the only computing error is the search for that largest chance; see `_sup`).
Confidence bounds invert the test. Used up to EXACT_MAX_TASKS tasks (a bound costs up to about
0.2 s there); beyond, the t-floor interval of stats/intervals.py. At 20 pass/fail tasks the
exact test is the sharper of the two (scripts/bench_verdicts.py --only policies, with and
without --interval t-floor: unchanged skills pass 10.0% vs 8.4%, 20 points better 59.4% vs
55.2%, false accepts 3.0% vs 2.0%, the 95% interval 0.615 wide vs 0.658).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

Side = Literal["above", "below"]  # the evidence sought: delta above theta, or below it
EXACT_MAX_TASKS = 60
_GRID = 24  # nuisance points scanned before the local refinement
_THETA_TOL = 1e-5


def _clip_theta(theta: float) -> float:
    return min(1 - 1e-9, max(-1 + 1e-9, theta))


def tango_z(b: int, c: int, n: int, theta: float) -> float:
    """Tango's score statistic for H0: delta = theta, from b improved and c regressed tasks
    of n: (b - c - n theta) / sqrt(n (2 p01 + theta (1 - theta))), p01 the restricted maximum
    likelihood estimate of P(regressed) under delta = theta (the root of a quadratic)."""
    if n <= 0:
        return 0.0
    theta = _clip_theta(theta)
    a = 2 * n
    bq = -b - c + (2 * n - b + c) * theta
    cq = -c * theta * (1 - theta)
    p01 = (-bq + math.sqrt(max(bq * bq - 4 * a * cq, 0.0))) / (2 * a)
    p01 = min((1 - theta) / 2, max(max(0.0, -theta), p01))
    variance = n * (2 * p01 + theta * (1 - theta))
    numerator = b - c - n * theta
    if variance <= 1e-15:
        return 0.0 if abs(numerator) < 1e-12 else math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


@lru_cache(maxsize=512)
def _scores(n: int, theta: float) -> tuple[tuple[float, ...], ...]:
    """Tango's statistic of every outcome: row b holds c = 0 .. n - b."""
    return tuple(tuple(tango_z(b, c, n, theta) for c in range(n - b + 1)) for b in range(n + 1))


def _tail(n: int, theta: float, region: list[list[int]], p01: float) -> float:
    """P(outcome in region) when P(regressed) = p01 and P(improved) = p01 + theta; region[b]
    lists the c of row b that count. Terms by recurrence, no factorial or exp per cell."""
    up, down = p01 + theta, p01
    tie = 1.0 - up - down
    total = 0.0
    row = tie**n if n else 1.0  # the b = 0, c = 0 term: C(n, 0) up^0 tie^n
    if tie <= 0.0:
        return _tail_no_ties(n, region, up, down)
    ratio_c = down / tie
    ratio_b = up / tie
    for b in range(n + 1):
        cs = region[b]
        if cs:
            term, last = row, 0
            acc = 0.0
            for c in cs:
                while last < c:  # C(n-b, c) down^c tie^(n-b-c): step c by one
                    term *= (n - b - last) / (last + 1) * ratio_c
                    last += 1
                acc += term
            total += acc
        if b < n:  # next row's c = 0 term: C(n, b+1) up^(b+1) tie^(n-b-1)
            row *= (n - b) / (b + 1) * ratio_b
    return min(1.0, total)


def _tail_no_ties(n: int, region: list[list[int]], up: float, down: float) -> float:
    # tie == 0: only outcomes with b + c == n have mass (binomial in b).
    total = 0.0
    for b in range(n + 1):
        if (n - b) in region[b]:
            total += math.comb(n, b) * up**b * down ** (n - b)
    return min(1.0, total)


def _sup(n: int, theta: float, region: list[list[int]]) -> float:
    """The largest tail over the null boundary: P(regressed) = x in [max(0, -theta),
    (1 - theta) / 2]. A grid, then golden-section search around the best grid point."""
    lo, hi = max(0.0, -theta), (1 - theta) / 2
    if hi <= lo:
        return _tail(n, theta, region, lo)
    xs = [lo + (hi - lo) * i / _GRID for i in range(_GRID + 1)]
    values = [_tail(n, theta, region, x) for x in xs]
    best = max(range(len(xs)), key=values.__getitem__)
    a, z = xs[max(0, best - 1)], xs[min(len(xs) - 1, best + 1)]
    golden = (math.sqrt(5) - 1) / 2
    u, v = z - golden * (z - a), a + golden * (z - a)
    fu, fv = _tail(n, theta, region, u), _tail(n, theta, region, v)
    top = values[best]
    for _ in range(12):
        if fu > fv:
            z, v, fv = v, u, fu
            u = z - golden * (z - a)
            fu = _tail(n, theta, region, u)
        else:
            a, u, fu = u, v, fv
            v = a + golden * (z - a)
            fv = _tail(n, theta, region, v)
    return max(top, fu, fv)


@lru_cache(maxsize=8192)
def exact_p(b: int, c: int, n: int, theta: float, side: Side = "above") -> float:
    """The exact p-value for delta > theta (side "above": H0 delta <= theta) or delta < theta
    ("below": H0 delta >= theta), from b improved and c regressed tasks of n."""
    if not (0 <= b and 0 <= c and b + c <= n):
        raise ValueError(f"need 0 <= b, c and b + c <= n, got b={b}, c={c}, n={n}")
    if n == 0:
        return 1.0
    theta = _clip_theta(theta)
    scores = _scores(n, theta)
    observed = scores[b][c]
    tol = 1e-9 * max(1.0, abs(observed)) if math.isfinite(observed) else 0.0
    if side == "above":
        region = [[cc for cc, z in enumerate(row) if z >= observed - tol] for row in scores]
    else:
        region = [[cc for cc, z in enumerate(row) if z <= observed + tol] for row in scores]
    return _sup(n, theta, region)


@lru_cache(maxsize=4096)
def exact_bound(b: int, c: int, n: int, level: float, side: Literal["lower", "upper"]) -> float:
    """The one-sided exact confidence bound at `level` (e.g. 0.96): the lower bound is the
    largest theta the data rule out from below (exact_p(theta, "above") <= 1 - level for
    every theta under it), the upper bound likewise from above. -1 / 1 when nothing is ruled
    out. Bisection: the p-value grows monotonically towards the estimate."""
    alpha = 1 - level
    if n == 0:
        return -1.0 if side == "lower" else 1.0
    estimate = (b - c) / n
    if side == "lower":
        lo, hi = -1.0, estimate  # p(lo) small (ruled out), p(estimate) large
        if exact_p(b, c, n, lo + 1e-9, "above") > alpha:
            return -1.0
        while hi - lo > _THETA_TOL:
            mid = (lo + hi) / 2
            if exact_p(b, c, n, round(mid, 7), "above") <= alpha:
                lo = mid
            else:
                hi = mid
        return lo
    lo, hi = estimate, 1.0
    if exact_p(b, c, n, hi - 1e-9, "below") > alpha:
        return 1.0
    while hi - lo > _THETA_TOL:
        mid = (lo + hi) / 2
        if exact_p(b, c, n, round(mid, 7), "below") <= alpha:
            hi = mid
        else:
            lo = mid
    return hi
