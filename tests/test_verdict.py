"""Verdict rules, table-driven."""

from __future__ import annotations

import pytest

from skill_eval.stats.verdict import (
    NOTHING_PASSED,
    RunHealth,
    decide_verdict,
    skip_verdict,
)

HEALTHY = RunHealth(attempts=20, errors=0, max_error_rate=0.1)


@pytest.mark.parametrize(
    "score,threshold,expected",
    [
        (0.4, 1.0, "skipped"),
        (1.0, 1.0, None),
        (3.2, 1.0, None),
        (None, 1.0, None),
        (0.4, None, None),
    ],
)
def test_skip(score, threshold, expected) -> None:
    verdict = skip_verdict(score, threshold)
    assert (verdict.verdict if verdict else None) == expected


@pytest.mark.parametrize(
    "kw,verdict,reason",
    [
        (
            dict(
                candidate_rate=0.8, baseline_rate=0.6, baseline_kind="original", policy_passed=True
            ),
            "pass",
            None,
        ),
        (
            dict(
                candidate_rate=0.5, baseline_rate=0.6, baseline_kind="original", policy_passed=False
            ),
            "fail",
            "policy says no",
        ),
        (
            dict(
                candidate_rate=0.8, baseline_rate=0.1, baseline_kind="original", policy_passed=True
            ),
            "error",
            "baseline pass rate 0.1 < 0.2",
        ),
        (
            dict(candidate_rate=0.8, baseline_rate=0.1, baseline_kind="skill", policy_passed=True),
            "error",
            "baseline pass rate 0.1 < 0.2",
        ),
        (
            dict(candidate_rate=0.8, baseline_rate=0.1, baseline_kind="none", policy_passed=True),
            "pass",
            None,
        ),
        (
            dict(
                candidate_rate=0.6, baseline_rate=None, baseline_kind="absent", policy_passed=None
            ),
            "pass",
            None,
        ),
        (
            dict(
                candidate_rate=0.4, baseline_rate=None, baseline_kind="absent", policy_passed=None
            ),
            "fail",
            "pass rate 0.4 < min pass rate 0.5",
        ),
        (
            dict(
                candidate_rate=None, baseline_rate=0.5, baseline_kind="original", policy_passed=None
            ),
            "error",
            "no task of the candidate could be evaluated (every attempt ended in error)",
        ),
    ],
)
def test_decide(kw, verdict, reason) -> None:
    result = decide_verdict(health=HEALTHY, min_pass_rate=0.5, policy_reason="policy says no", **kw)
    assert (result.verdict, result.reason) == (verdict, reason)


def test_no_skill_baseline_low_rate_warns() -> None:
    result = decide_verdict(
        candidate_rate=0.8,
        baseline_rate=0.1,
        baseline_kind="none",
        health=HEALTHY,
        min_pass_rate=0.5,
        policy_passed=True,
        policy_reason="",
    )
    assert result.warnings and "0.1" in result.warnings[0]


@pytest.mark.parametrize("errors,verdict", [(2, "pass"), (3, "error")])
def test_error_rate_above_the_limit_is_an_error(errors, verdict) -> None:
    result = decide_verdict(
        candidate_rate=1.0,
        baseline_rate=0.5,
        baseline_kind="original",
        health=RunHealth(20, errors, 0.1),
        min_pass_rate=0.5,
        policy_passed=True,
        policy_reason="",
    )
    assert result.verdict == verdict
    if verdict == "error":
        assert result.reason.startswith("3 of 20 attempts ended in error (0.15 > max error")


@pytest.mark.parametrize(
    "baseline_kind,baseline_rate,policy_passed",
    [
        ("none", 0.0, True),
        ("absent", None, None),
    ],
)
def test_nothing_passed_in_either_arm_is_never_a_pass(
    baseline_kind, baseline_rate, policy_passed
) -> None:
    # 0/N against 0/N is delta 0, which the delta policy passes: it must fail, and say why.
    result = decide_verdict(
        candidate_rate=0.0,
        baseline_rate=baseline_rate,
        baseline_kind=baseline_kind,
        health=HEALTHY,
        min_pass_rate=0.0,
        policy_passed=policy_passed,
        policy_reason="",
        first_failures=("candidate t1: SyntaxError", "baseline t1: boom"),
    )
    assert result.verdict == "fail"
    assert result.reason == f"{NOTHING_PASSED} (candidate t1: SyntaxError; baseline t1: boom)"


def test_an_original_baseline_at_zero_stays_the_broken_suite_error() -> None:
    result = decide_verdict(
        candidate_rate=0.0,
        baseline_rate=0.0,
        baseline_kind="original",
        health=HEALTHY,
        min_pass_rate=0.5,
        policy_passed=True,
        policy_reason="",
    )
    assert (result.verdict, result.reason) == ("error", "baseline pass rate 0 < 0.2")
