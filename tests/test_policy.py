"""Table-driven tests for skill_eval.stats.policy: each policy's boundary and reasoning."""

from __future__ import annotations

import random

import pytest

from skill_eval.stats.estimates import Comparison, paired_comparison
from skill_eval.stats.policy import DEFAULT_POLICY, conclusion, decide_policy

# --------------------------------------------------------------------------------------------
# Policies


def _cmp(delta: float, low: float, high: float) -> Comparison:
    return Comparison(
        n_tasks=20, candidate_rate=0.5 + delta, baseline_rate=0.5, delta=delta,
        interval=(low, high), confidence=0.95, method="test", differences={},
        improved=(), regressed=(), excluded=(), mcnemar_p=1.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "delta", "low", "kwargs", "passed"),
    [
        ("delta", 0.0, -0.3, {}, True),  # the old tool: delta >= 0
        ("delta", -0.0001, -0.3, {}, False),
        ("delta", 0.05, -0.3, {"min_delta": 0.05}, True),
        ("delta", 0.0499, -0.3, {"min_delta": 0.05}, False),
        ("non-inferior", 0.1, -0.05, {}, False),  # strict: low must be above -margin
        ("non-inferior", 0.1, -0.0499, {}, True),
        ("non-inferior", 0.1, -0.08, {"margin": 0.1}, True),
        ("non-inferior", 0.1, -0.1, {"margin": 0.1}, False),
        ("superior", 0.2, 0.0, {}, False),
        ("superior", 0.2, 0.001, {}, True),
        ("superior", 0.2, -0.01, {}, False),
    ],
)
def test_policy_boundaries(policy, delta, low, kwargs, passed):
    decision = decide_policy(policy, _cmp(delta, low, 0.5), **kwargs)
    assert decision.passed is passed
    assert f"{delta * 100:+.1f} points" in decision.reasoning
    assert decision.to_dict()["passed"] is passed and decision.to_dict()["name"] == policy


def test_interval_policies_quote_the_interval():
    reasoning = decide_policy("non-inferior", _cmp(0.1, -0.0499, 0.25)).reasoning
    assert "95% interval [-5.0, +25.0] points" in reasoning and "margin -5.0 points" in reasoning


def test_unknown_policy_lists_the_valid_ones():
    with pytest.raises(ValueError, match="delta, no-regression, non-inferior, superior"):
        decide_policy("lenient", _cmp(0.0, -0.1, 0.1))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.01, 0.2, "better"),
        (-0.2, -0.01, "worse"),
        (-0.1, 0.1, "inconclusive"),
        (0.0, 0.2, "inconclusive"),
        (-0.2, 0.0, "inconclusive"),
    ],
)
def test_conclusion(low, high, expected):
    assert conclusion(_cmp((low + high) / 2, low, high)) == expected


def _scores(probs: list[float], samples: int, rng: random.Random) -> dict[str, float | None]:
    return {
        f"t{i}": sum(rng.random() < p for _ in range(samples)) / samples
        for i, p in enumerate(probs)
    }


def _pass_share(shift: float, policy: str, reps: int = 300) -> float:
    rng = random.Random(7)
    base = [rng.uniform(0.2, 0.8) for _ in range(20)]
    cand = [p + shift for p in base]
    passed = 0
    for _ in range(reps):
        c = paired_comparison(_scores(cand, 3, rng), _scores(base, 3, rng), samples=3)
        passed += decide_policy(policy, c, samples=3).passed  # type: ignore[arg-type]
    return passed / reps


def test_the_default_policy_rarely_accepts_a_skill_ten_points_worse():
    # 20 tasks x 3 samples, as in scripts/bench_verdicts.py: the old delta rule accepts a
    # 10-point-worse skill often; the default must stay at or under 5% (with a little noise).
    assert DEFAULT_POLICY == "no-regression"
    assert _pass_share(-0.10, "delta") > 0.10
    assert _pass_share(-0.10, DEFAULT_POLICY) <= 0.07
    assert _pass_share(0.0, DEFAULT_POLICY) > _pass_share(-0.10, DEFAULT_POLICY) * 3


def test_no_regression_reads_a_one_sided_bound_with_a_ten_point_margin():
    same = {f"t{i}": float(i % 2) for i in range(40)}
    decision = decide_policy("no-regression", paired_comparison(same, dict(same), samples=1))
    assert decision.passed and decision.settings == {"margin": 0.1}
    assert "one-sided 96% lower bound" in decision.reasoning
    worse = {t: 0.0 if i < 8 else s for i, (t, s) in enumerate(same.items())}
    assert not decide_policy("no-regression", paired_comparison(worse, same)).passed
