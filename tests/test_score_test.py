"""The score test that decides against a pooled baseline (stats/score.py): its restricted
estimate, statistic and bounds; when the paired comparison uses it; the planning figures it
gives a run that lacks evidence."""

from __future__ import annotations

import math
import random

import pytest

from skill_eval.stats.estimates import paired_comparison
from skill_eval.stats.evidence import assess
from skill_eval.stats.intervals import PairedTest
from skill_eval.stats.policy import decide_policy
from skill_eval.stats.score import (
    degrees_of_freedom,
    restricted_baseline,
    score_bound,
    score_p,
    z_statistic,
)

ALPHA, THETA = 0.04, -0.10


def _loglik(q: float, tally: tuple[int, int, int, int], theta: float) -> float:
    x, a, y, b = tally
    total = 0.0
    for passes, tries, p in ((x, a, q + theta), (y, b, q)):
        if passes:
            total += passes * math.log(p) if p > 0 else -math.inf
        if tries - passes:
            total += (tries - passes) * math.log(1 - p) if p < 1 else -math.inf
    return total


@pytest.mark.parametrize("theta", [-0.3, -0.1, 0.0, 0.2])
@pytest.mark.parametrize("tally", [(0, 3, 12, 12), (3, 3, 12, 12), (1, 3, 7, 12), (2, 2, 0, 8)])
def test_the_closed_form_is_the_likelihood_maximum(tally, theta):
    q = restricted_baseline(tally, theta)
    low, high = max(0.0, -theta), min(1.0, 1.0 - theta)
    assert low - 1e-12 <= q <= high + 1e-12
    grid = [low + (high - low) * i / 4000 for i in range(4001)]
    best = max(grid, key=lambda g: _loglik(g, tally, theta))
    assert _loglik(q, tally, theta) >= _loglik(best, tally, theta) - 1e-9


def test_tasks_both_arms_always_pass_still_have_variance_under_a_regression():
    # 3 of 3 against 12 of 12: under "10 points worse" the candidate's chance is 0.9, not 1,
    # so 20 such tasks are evidence of a size, not proof (a plain Wald test would divide by 0).
    tallies = [(3, 3, 12, 12)] * 20
    sd = math.sqrt(20 * 0.09 / 3 * 15 / 14) / 20
    assert z_statistic(tallies, THETA) == pytest.approx(0.1 / sd)
    assert degrees_of_freedom(tallies) == 59
    assert 0 < score_p(tallies, THETA, "lower") < ALPHA
    assert score_p(tallies, -0.02, "lower") > ALPHA  # but not that it is within 2 points


def test_bounds_invert_the_test_on_both_sides():
    rng = random.Random(7)
    for _ in range(200):
        n, a = rng.randint(2, 30), rng.randint(1, 5)
        b = a * rng.randint(2, 4)
        tallies = [(rng.randint(0, a), a, rng.randint(0, b), b) for _ in range(n)]
        for side, step in (("lower", 2e-5), ("upper", -2e-5)):
            bound = score_bound(tallies, ALPHA, side)
            if abs(bound) < 1:
                assert score_p(tallies, bound, side) <= ALPHA + 1e-9
                assert score_p(tallies, bound + step, side) > ALPHA
    lost = [(0, 3, 12, 12)] * 10  # every task lost: nothing above -1 can be shown
    assert score_bound(lost, ALPHA, "lower") == -1.0
    assert score_bound(lost, ALPHA, "upper") < -0.8


def _scores(tallies: dict[str, tuple[int, int, int, int]]) -> tuple[dict, dict]:
    cand = {t: x / a for t, (x, a, _, _) in tallies.items()}
    base = {t: y / b for t, (_, _, y, b) in tallies.items()}
    return cand, base


def test_the_comparison_uses_it_against_a_pooled_baseline_only():
    pooled = {f"t{i}": (2, 3, 8, 12) for i in range(20)}
    comparison = paired_comparison(*_scores(pooled), samples=3, baseline_samples=12, tallies=pooled)
    assert comparison.method.startswith("Miettinen-Nurminen score test")
    low, _ = comparison.paired_test().interval(0.92)
    assert low == pytest.approx(score_bound(list(pooled.values()), ALPHA, "lower"))
    # the same tallies with equal arms, or a floor override (an early-stop look): the t-floor
    equal = {t: (2, 3, 2, 3) for t in pooled}
    plain = paired_comparison(*_scores(equal), samples=3, tallies=equal)
    assert "pseudo-task variance floor" in plain.method and plain.tallies is None
    assert comparison.paired_test(3).tallies is None


def test_a_tally_that_disagrees_with_the_scores_is_refused():
    cand, base = _scores({"t0": (2, 3, 8, 12), "t1": (1, 3, 4, 12)})
    with pytest.raises(ValueError, match="task 't1'.*disagrees with its scores"):
        paired_comparison(
            cand,
            base,
            samples=3,
            baseline_samples=12,
            tallies={"t0": (2, 3, 8, 12), "t1": (2, 3, 4, 12)},
        )
    with pytest.raises(ValueError, match="task 't1': scored in both arms but has no tally"):
        paired_comparison(cand, base, samples=3, baseline_samples=12, tallies={"t0": (2, 3, 8, 12)})


def test_too_few_tasks_get_figures_that_would_settle_it():
    mix = [(3, 3, 12, 12), (2, 3, 9, 12), (1, 3, 5, 12), (3, 3, 10, 12)]
    tallies = {f"t{i}": mix[i % 4] for i in range(8)}
    comparison = paired_comparison(
        *_scores(tallies), samples=3, baseline_samples=12, tallies=tallies
    )
    decision = decide_policy("no-regression", comparison)
    assert decision.outcome == "insufficient"
    needed = assess(decision, comparison).tasks_needed
    assert needed is not None and needed.tasks is not None and needed.samples_for_these_tasks
    # a plan for 80%, not the size at which this very mix would just clear: at it the same
    # mix clears with room to spare, and at half of it, it still would not settle
    assert needed.settles_as == "pass" and needed.probability == 0.8
    assert score_p(mix * math.ceil(needed.tasks / 4), THETA, "lower") <= ALPHA
    assert score_p(mix * (len(tallies) // 4), THETA, "lower") > ALPHA

    def at(samples: int) -> list:  # these tasks, every arm's attempts scaled (rates kept)
        k = samples / 3
        return [(x * k, a * k, y * k, b * k) for x, a, y, b in tallies.values()]

    assert score_p(at(needed.samples_for_these_tasks), THETA, "lower") <= ALPHA


def test_paired_test_of_without_tallies_is_unchanged():
    test = PairedTest.of([0.0] * 20, 3, False, 12)
    assert test.tallies is None and "pseudo-task" in test.method
