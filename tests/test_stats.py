"""Table-driven tests for skill_eval.stats.estimates: pass@k, labels, the paired comparison,
policies."""

from __future__ import annotations

import json
import math
import random

import pytest

from skill_eval.stats.analysis import non_discriminating
from skill_eval.stats.estimates import (
    binomial_two_sided_p,
    paired_comparison,
    pass_at_k,
    pass_hat_k,
    power_hint,
    task_stats,
)
from skill_eval.stats.policy import POLICIES, conclusion, decide_policy
from skill_eval.stats.student_t import t_quantile

# --------------------------------------------------------------------------------------------
# pass@k and pass^k


@pytest.mark.parametrize(
    ("n", "c", "k", "at_k", "hat_k"),
    [
        (5, 2, 1, 0.4, 0.4),  # 1 - 3/5 ; 2/5
        (5, 2, 2, 0.7, 0.1),  # 1 - 3/10 ; 1/10
        (5, 2, 3, 0.9, 0.0),  # 1 - 1/10 ; 0
        (5, 2, 4, 1.0, 0.0),  # C(3, 4) = 0
        (5, 2, 5, 1.0, 0.0),
        (5, 0, 1, 0.0, 0.0),
        (5, 0, 3, 0.0, 0.0),
        (5, 5, 1, 1.0, 1.0),
        (5, 5, 5, 1.0, 1.0),
        (3, 1, 1, 1 / 3, 1 / 3),
        (10, 7, 3, 1 - 1 / 120, 35 / 120),
        (1, 1, 1, 1.0, 1.0),
        (2, 1, 3, None, None),  # n < k: undefined, not 1.0
        (0, 0, 1, None, None),
    ],
)
def test_pass_at_k_and_pass_hat_k_hand_values(n, c, k, at_k, hat_k):
    if at_k is None:
        assert pass_at_k(n, c, k) is None and pass_hat_k(n, c, k) is None
    else:
        assert pass_at_k(n, c, k) == pytest.approx(at_k, abs=1e-12)
        assert pass_hat_k(n, c, k) == pytest.approx(hat_k, abs=1e-12)


def test_pass_at_k_matches_closed_forms_on_a_grid():
    # Chen et al.'s numerically stable product: 1 - prod_{i=n-c+1}^{n} (1 - k/i);
    # pass^k as sampling k without replacement: prod_{i<k} (c-i)/(n-i).
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                stable = (
                    1.0 if n - c < k else 1 - math.prod(1 - k / i for i in range(n - c + 1, n + 1))
                )
                hat = math.prod((c - i) / (n - i) for i in range(k))
                assert pass_at_k(n, c, k) == pytest.approx(stable, abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)
                assert isinstance(pass_at_k(n, c, k), float)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0)])
def test_pass_at_k_rejects_bad_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


# --------------------------------------------------------------------------------------------
# task_stats


@pytest.mark.parametrize(
    ("outcomes", "k", "n", "c", "errors", "label", "first_k"),
    [
        (["passed", "passed", "passed"], 1, 3, 3, 0, "stable_pass", True),
        (["failed", "failed"], 1, 2, 0, 0, "stable_fail", False),
        (["failed", "passed"], 1, 2, 1, 0, "flaky", False),
        (["failed", "passed"], 2, 2, 1, 0, "flaky", True),
        (["error", "passed"], 1, 1, 1, 1, "stable_pass", True),
        (["failed", "error", "passed"], 2, 2, 1, 1, "flaky", True),  # errors skipped
        (["error", "error"], 1, 0, 0, 2, "error", None),
        ([], 1, 0, 0, 0, "error", None),
        (["passed"], 3, 1, 1, 0, "stable_pass", True),  # fewer than k attempts
    ],
)
def test_task_stats_labels_and_counts(outcomes, k, n, c, errors, label, first_k):
    s = task_stats(outcomes, k)
    assert (s.n, s.c, s.errors, s.label, s.first_k_passed) == (n, c, errors, label, first_k)
    assert s.pass_at_k == pass_at_k(n, c, k)
    assert s.pass_hat_k == pass_hat_k(n, c, k)


def test_task_stats_rejects_unknown_status_and_serialises():
    with pytest.raises(ValueError, match="unknown status"):
        task_stats(["passed", "timeout"], 1)  # type: ignore[list-item]
    d = task_stats(["passed", "failed", "failed"], 2).to_dict()
    assert d["pass_at_k"] == 0.6667 and d["pass_hat_k"] == 0.0
    assert json.loads(json.dumps(d)) == d


# --------------------------------------------------------------------------------------------
# paired_comparison


def _arms(b: int, c: int, same: int = 0) -> tuple[dict[str, float], dict[str, float]]:
    """b tasks improved (0 -> 1), c regressed (1 -> 0), `same` concordant passes."""
    cand, base = {}, {}
    for i in range(b):
        cand[f"up{i}"], base[f"up{i}"] = 1.0, 0.0
    for i in range(c):
        cand[f"down{i}"], base[f"down{i}"] = 0.0, 1.0
    for i in range(same):
        cand[f"same{i}"], base[f"same{i}"] = 1.0, 1.0
    return cand, base


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(5, 0, 0.0625), (10, 2, 0.038574), (0, 0, 1.0), (3, 3, 1.0), (1, 0, 1.0), (6, 1, 0.125)],
)
def test_mcnemar_exact_p_values(b, c, p):
    assert binomial_two_sided_p(b, c) == pytest.approx(p, abs=1e-6)
    comparison = paired_comparison(*_arms(b, c, same=4))
    assert comparison.mcnemar_p == pytest.approx(p, abs=1e-6)
    assert "McNemar" in comparison.method
    assert len(comparison.improved) == b and len(comparison.regressed) == c


@pytest.mark.parametrize("score", [0.0, 1.0, 2 / 3])
def test_identical_arms_give_delta_zero_and_an_interval_around_zero(score):
    arm = {f"t{i}": score for i in range(20)}
    c = paired_comparison(arm, dict(arm), samples=3)
    assert c.delta == 0.0 and c.n_tasks == 20
    low, high = c.interval
    assert low < 0 < high and low == pytest.approx(-high)  # not the degenerate [0, 0]
    assert conclusion(c) == "inconclusive"
    assert c.mcnemar_p == 1.0 and c.improved == () and c.regressed == ()


def test_identical_arms_with_bootstrap_never_exclude_zero():
    arm = {f"t{i}": float(i % 2) for i in range(12)}
    c = paired_comparison(arm, dict(arm), interval_method="bootstrap", resamples=200)
    assert c.interval == (0.0, 0.0)  # why the bootstrap is not the default
    assert conclusion(c) == "inconclusive"


def test_all_improved_is_better():
    c = paired_comparison(*_arms(10, 0))
    assert c.delta == 1.0 and c.candidate_rate == 1.0 and c.baseline_rate == 0.0
    assert c.interval[0] > 0 and c.interval[1] == 1.0
    assert conclusion(c) == "better"
    assert c.mcnemar_p == pytest.approx(2 / 1024)
    assert decide_policy("superior", c).passed


def test_all_regressed_is_worse():
    c = paired_comparison(*_arms(0, 10))
    assert c.delta == -1.0 and conclusion(c) == "worse"
    assert not decide_policy("non-inferior", c).passed


def test_tasks_missing_or_errored_in_one_arm_are_excluded():
    c = paired_comparison({"a": 1.0, "b": None, "c": 1.0}, {"a": 0.0, "c": 1.0, "d": 0.0})
    assert c.n_tasks == 2 and c.excluded == ("b", "d")
    assert c.differences == {"a": 1.0, "c": 0.0}
    assert c.delta == 0.5 and c.improved == ("a",)


def test_no_paired_tasks():
    c = paired_comparison({"a": None}, {"b": 1.0})
    assert (c.n_tasks, c.delta, c.interval, c.mcnemar_p) == (0, None, None, 1.0)
    assert conclusion(c) == "inconclusive"
    for policy in POLICIES:
        d = decide_policy(policy, c)
        assert not d.passed and "nothing to compare" in d.reasoning


def test_one_task_gives_almost_the_full_range():
    # One improved 0/1 task: exact, the interval is where a single improvement is not rare
    # (P(improved) = (1 + delta) / 2 >= 2.5%); one task's pass rates say nothing at all.
    low, high = paired_comparison({"a": 1.0}, {"a": 0.0}).interval
    assert low == pytest.approx(-0.95, abs=1e-4) and high == 1.0
    assert paired_comparison({"a": 2 / 3}, {"a": 0.0}, samples=3).interval == (-1.0, 1.0)


def test_fractional_scores_use_a_sign_test():
    cand = {"a": 2 / 3, "b": 1.0, "c": 1 / 3, "d": 0.5}
    base = {"a": 1 / 3, "b": 2 / 3, "c": 1 / 3, "d": 1.0}
    c = paired_comparison(cand, base, samples=3)
    assert "sign test" in c.method and "1/3" in c.method
    assert c.improved == ("a", "b") and c.regressed == ("d",)
    assert c.mcnemar_p == binomial_two_sided_p(2, 1) == 1.0
    assert c.delta == pytest.approx((1 / 3 + 1 / 3 + 0 - 0.5) / 4)


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_scores_outside_unit_interval_are_rejected(bad):
    with pytest.raises(ValueError, match="outside"):
        paired_comparison({"a": bad}, {"a": 0.5})


def test_unknown_interval_method_is_rejected():
    with pytest.raises(ValueError, match="t-floor or bootstrap"):
        paired_comparison({"a": 1.0}, {"a": 0.5}, interval_method="wald")  # type: ignore[arg-type]


def test_bootstrap_is_deterministic_for_a_seed():
    rng = random.Random(3)
    cand = {f"t{i}": float(rng.random() < 0.7) for i in range(15)}
    base = {f"t{i}": float(rng.random() < 0.5) for i in range(15)}
    runs = [
        paired_comparison(cand, base, interval_method="bootstrap", seed=s, resamples=500).interval
        for s in (7, 7, 8)
    ]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert paired_comparison(cand, base) == paired_comparison(cand, base)


@pytest.mark.parametrize(
    ("confidence", "df", "q"),
    [
        (0.95, 1, 12.7062),
        (0.95, 2, 4.3027),
        (0.95, 10, 2.2281),
        (0.95, 19, 2.0930),
        (0.95, 30, 2.0423),
        (0.99, 10, 3.1693),
        (0.90, 5, 2.0150),
        (0.95, 10**6, 1.9600),
    ],
)
def test_t_quantile_table(confidence, df, q):
    assert t_quantile(confidence, df) == pytest.approx(q, abs=1e-3)


def _trinomial_coverage(n: int, p_up: float, p_down: float) -> float:
    """Exact coverage of the default interval for n 0/1 tasks with discordance p_up, p_down."""
    covered = 0.0
    true_delta = p_up - p_down
    for b in range(n + 1):
        for c in range(n + 1 - b):
            prob = (
                math.factorial(n)
                / (math.factorial(b) * math.factorial(c) * math.factorial(n - b - c))
                * p_up**b
                * p_down**c
                * (1 - p_up - p_down) ** (n - b - c)
            )
            low, high = paired_comparison(*_arms(b, c, same=n - b - c)).interval
            covered += prob * (low <= true_delta <= high)
    return covered


@pytest.mark.parametrize(("p_up", "p_down"), [(0.1, 0.0), (0.05, 0.05), (0.3, 0.1), (0.0, 0.2)])
def test_exact_coverage_for_paired_binary_tasks(p_up, p_down):
    assert _trinomial_coverage(20, p_up, p_down) >= 0.94


def test_simulated_coverage_of_a_known_delta_with_fractional_scores():
    rng = random.Random(2024)
    base_p = [rng.uniform(0.2, 0.8) for _ in range(20)]
    cand_p = [min(1.0, p + 0.1) for p in base_p]
    true_delta = sum(cand_p) / 20 - sum(base_p) / 20
    covered = 0
    for _ in range(200):
        cand = {f"t{i}": sum(rng.random() < p for _ in range(3)) / 3 for i, p in enumerate(cand_p)}
        base = {f"t{i}": sum(rng.random() < p for _ in range(3)) / 3 for i, p in enumerate(base_p)}
        low, high = paired_comparison(cand, base, samples=3).interval
        covered += low <= true_delta <= high
    assert covered / 200 >= 0.9


def test_comparison_to_dict_is_json_ready():
    c = paired_comparison({"a": 1.0, "b": 1 / 3}, {"a": 0.0, "b": 0.0}, samples=3)
    d = c.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert isinstance(d["interval"], list) and d["differences"]["b"] == 0.3333
    assert d["improved"] == ["a", "b"]


# --------------------------------------------------------------------------------------------
# non_discriminating and power_hint


def test_non_discriminating():
    cand = {
        "all_pass": ["passed", "error", "passed"],
        "all_fail": ["failed", "failed"],
        "pass_vs_fail": ["passed"],
        "flaky": ["passed", "failed"],
        "only_errors": ["error"],
        "only_candidate": ["passed"],
    }
    base = {
        "all_pass": ["passed"],
        "all_fail": ["failed", "error"],
        "pass_vs_fail": ["failed"],
        "flaky": ["passed", "passed"],
        "only_errors": ["error"],
    }
    assert non_discriminating(cand, base) == ["all_pass", "all_fail"]


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((0.5,), {"n_tasks": 20}, "needs about 391 tasks × 1 sample (this suite has 20)"),
        (
            (0.5,),
            {"discordance": 0.15},
            "needs about 116 tasks × 1 sample, assuming the arms "
            "disagree on 15% of paired attempts",
        ),
        ((0.5,), {"samples": 3}, "needs about 131 tasks × 3 samples"),
        ((0.5, 0.2), {}, "detecting a 20-point lift over a 50% baseline at 80% power"),
        ((0.95, 0.1), {}, "detecting a 5-point lift"),  # the candidate cannot pass over 100%
        ((1.0,), {"n_tasks": 8}, "no lift is possible over a 100% baseline (this suite has 8)"),
    ],
)
def test_power_hint(args, kwargs, expected):
    hint = power_hint(*args, **kwargs)
    assert expected in hint and "\n" not in hint


@pytest.mark.parametrize(
    "kwargs", [{"lift": 0.0}, {"discordance": 0.05}, {"samples": 0}, {"baseline_rate": 1.2}]
)
def test_power_hint_rejects_impossible_inputs(kwargs):
    with pytest.raises(ValueError):
        power_hint(**{"baseline_rate": 0.5, **kwargs})
