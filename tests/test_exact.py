"""The exact test of paired pass/fail outcomes (stats/exact.py) and the paired bounds built on
it and on the t-floor interval (stats/intervals.py): known values, an independent brute-force
enumeration of the worst case, the size guarantee by enumeration, and consistency between
p-values, bounds and decisions."""

from __future__ import annotations

import math

import pytest

from skill_eval.stats.exact import EXACT_MAX_TASKS, exact_bound, exact_p, tango_z
from skill_eval.stats.intervals import PairedTest, t_floor_interval
from skill_eval.stats.student_t import t_quantile, t_upper_tail

ALPHA = 0.04  # no-regression's one-sided level


def _brute_p(b: int, c: int, n: int, theta: float, steps: int = 400) -> float:
    """The exact p-value by another route: every outcome by factorials, the worst case over a
    dense grid of (P(improved), P(regressed)) anywhere in the null (not only its boundary)."""
    observed = tango_z(b, c, n, theta)
    region = [
        (bb, cc)
        for bb in range(n + 1)
        for cc in range(n + 1 - bb)
        if tango_z(bb, cc, n, theta) >= observed - 1e-9
    ]
    worst = 0.0
    for i in range(steps + 1):
        for j in range(steps + 1):
            up, down = i / steps, j / steps
            if up + down > 1 or up - down > theta + 1e-12:
                continue
            tie = 1 - up - down
            total = sum(
                math.factorial(n)
                / (math.factorial(bb) * math.factorial(cc) * math.factorial(n - bb - cc))
                * up**bb
                * down**cc
                * tie ** (n - bb - cc)
                for bb, cc in region
            )
            worst = max(worst, total)
    return worst


@pytest.mark.parametrize(
    ("b", "c", "n", "p"),
    [
        (6, 0, 6, 0.45**6),  # a sweep: the worst case is P(improved) = 0.45, no ties
        (4, 0, 4, 0.45**4),  # 0.041: just above 4%, so 4 of 4 cannot rule out -10 points
        (3, 0, 3, 0.45**3),
        (5, 0, 5, 0.45**5),
        (3, 0, 5, 0.0391785),  # the README demo: max of 10u^3(.9-2u)^2 + 5u^4(.9-2u) + u^5
    ],
)
def test_known_p_values(b: int, c: int, n: int, p: float) -> None:
    assert exact_p(b, c, n, -0.1) == pytest.approx(p, rel=1e-4)


@pytest.mark.parametrize(("b", "c", "n"), [(3, 0, 5), (2, 1, 6), (0, 0, 5), (1, 3, 6), (4, 1, 7)])
def test_p_value_matches_brute_force_over_the_whole_null(b: int, c: int, n: int) -> None:
    # the sup over the whole null sits on its boundary; the grid search finds no larger value
    fast = exact_p(b, c, n, -0.1)
    assert fast == pytest.approx(_brute_p(b, c, n, -0.1), abs=2e-3)
    assert fast >= _brute_p(b, c, n, -0.1, steps=100) - 1e-9


def test_tango_statistic_hand_values() -> None:
    # 6 of 6 improved against delta = -0.1: p01 = 0.55, Z = 6.6 / sqrt(6 * 0.99)
    assert tango_z(6, 0, 6, -0.1) == pytest.approx(6.6 / math.sqrt(5.94))
    assert tango_z(0, 0, 20, 0.0) == 0.0  # no discordance, no evidence either way
    assert tango_z(2, 2, 10, 0.0) == 0.0


@pytest.mark.parametrize("n", [4, 8, 12])
def test_the_test_keeps_its_level_at_every_null_point(n: int) -> None:
    """The guarantee by enumeration: under delta = -0.1 (the margin), whatever the
    discordance, the chance of a pass is at most alpha."""
    passes = [
        (bb, cc)
        for bb in range(n + 1)
        for cc in range(n + 1 - bb)
        if exact_p(bb, cc, n, -0.1) <= ALPHA
    ]
    for k in range(1, 50):
        down = 0.1 + (0.45 - 0.1) * k / 50
        up = down - 0.1
        tie = 1 - up - down
        size = sum(
            math.comb(n, bb) * math.comb(n - bb, cc) * up**bb * down**cc * tie ** (n - bb - cc)
            for bb, cc in passes
        )
        assert size <= ALPHA + 1e-9


def test_bounds_invert_the_test() -> None:
    for b, c, n in [(3, 0, 5), (6, 0, 6), (2, 1, 20), (0, 10, 12), (5, 5, 15)]:
        low = exact_bound(b, c, n, 0.96, "lower")
        high = exact_bound(b, c, n, 0.96, "upper")
        assert low <= (b - c) / n <= high
        assert exact_p(b, c, n, low, "above") <= ALPHA  # ruled out
        assert exact_p(b, c, n, min(low + 2e-4, 1 - 1e-9), "above") > ALPHA  # not ruled out
        if high < 1.0:
            assert exact_p(b, c, n, high, "below") <= ALPHA
    assert exact_bound(0, 5, 5, 0.96, "lower") == -1.0  # nothing above -1 is ruled out
    assert exact_bound(5, 0, 5, 0.96, "upper") == 1.0


def test_p_values_grow_towards_the_estimate() -> None:
    for b, c, n in [(3, 0, 5), (7, 2, 15)]:
        thetas = [-0.9 + 0.05 * i for i in range(int(((b - c) / n + 0.9) / 0.05))]
        ps = [exact_p(b, c, n, round(t, 9)) for t in thetas]
        assert ps == sorted(ps)


def test_paired_test_chooses_exact_for_one_pass_fail_outcome_per_task() -> None:
    diffs = [1.0, 1.0, 1.0, 0.0, 0.0]
    exact = PairedTest.of(diffs, 1, True)
    assert exact.exact and exact.counts == (3, 0, 5) and "exact" in exact.method
    assert exact.clears(-0.1, ALPHA, "lower")  # the demo: -9.6 points, just
    assert not exact.clears(0.0, 0.025, "lower")  # but no improvement shown
    assert not PairedTest.of(diffs, 3, True).exact  # pass rates of 3 attempts: t-floor
    assert not PairedTest.of(diffs, 1, False).exact
    assert not PairedTest.of([1.0] * (EXACT_MAX_TASKS + 1), 1, True).exact
    assert not PairedTest.of(diffs, 1, True, baseline_samples=12).exact


def test_t_floor_decisions_agree_with_their_p_values() -> None:
    diffs = [0.0, 1 / 3, -1 / 3, 2 / 3, 0.0, 0.0, -1 / 3, 1 / 3] * 3
    test = PairedTest.of(diffs, 3, False)
    for theta in (-0.2, -0.1, 0.0, 0.1):
        for alpha in (0.04, 0.025, 0.001):
            p = test.p_value(theta, "lower")
            assert test.clears(theta, alpha, "lower") == (p < alpha)
            assert (test.bound(alpha, "lower") > theta) == (p < alpha)


def test_the_floor_takes_one_attempts_worth_of_each_arm_never_less_than_the_candidates() -> None:
    diffs = [0.25, -0.1, 0.0, 0.1]
    same = t_floor_interval(diffs, 0.95, 3)
    assert same == t_floor_interval(diffs, 0.95, 3, 3)
    # a pooled baseline (12 attempts a task) keeps the candidate's floor, 2/9: what the
    # candidate's 3 attempts may not have shown is not reduced by more baseline attempts
    assert t_floor_interval(diffs, 0.95, 3, 12) == same
    fewer = t_floor_interval(diffs, 0.95, 3, 2)  # 1/9 + 1/4 instead of 2/9
    assert fewer[0] < same[0] < same[1] < fewer[1]
    n, mean = 4, sum(diffs) / 4
    ss = sum((d - mean) ** 2 for d in diffs) + 1 / 9 + 1 / 4
    half = t_quantile(0.95, 3) * math.sqrt(ss / (n + 1) / n)
    assert fewer == pytest.approx((mean - half, mean + half))


@pytest.mark.parametrize(("t", "df", "tail"), [(0.0, 5, 0.5), (2.015, 5, 0.05), (-1.729, 19, 0.95)])
def test_t_upper_tail(t: float, df: int, tail: float) -> None:
    assert t_upper_tail(t, df) == pytest.approx(tail, abs=5e-4)


def test_against_scipy_when_it_is_installed() -> None:
    stats = pytest.importorskip("scipy.stats")  # a cross-check only: never a dependency
    for t, df in [(1.3, 4), (2.5, 19), (-0.7, 11)]:
        assert t_upper_tail(t, df) == pytest.approx(stats.t.sf(t, df), abs=1e-6)
