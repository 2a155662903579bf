"""Issue 51: `improve` says what its confirmation can detect before the first iteration (the lift
shown better 4 times in 5 at the chosen sizes, and what would detect 10 points), and a version
not proposed is "not shown better at this size", never "not better"."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.improve.detect import detectable_lines
from skill_eval.stats.power import (
    detectable_lift,
    samples_to_detect,
    standard_error,
    tasks_to_detect,
)
from skill_eval.stats.student_t import t_quantile
from tests.helpers import run_cli
from tests.test_improve_cli import _write_inputs


def test_the_detectable_lift_is_where_the_bound_clears_4_times_in_5() -> None:
    """At the stated lift the estimate lies the one-sided quantile plus 0.84 standard errors
    above the threshold: the bound clears it with probability 0.8 (normal estimate)."""
    for tasks, samples, alpha in ((12, 3, 0.0125), (40, 1, 0.025), (100, 3, 0.0125)):
        se = standard_error(tasks, samples)
        lift = detectable_lift(tasks, samples, alpha)
        quantile = t_quantile(1 - 2 * alpha, tasks - 1)
        assert lift / se - quantile == pytest.approx(0.8416, abs=1e-3)
    # more tasks or samples detect less; the floor keeps few tasks from reaching 0
    assert detectable_lift(100, 3, 0.0125) < detectable_lift(40, 3, 0.0125)
    assert detectable_lift(12, 10, 0.0125) < detectable_lift(12, 3, 0.0125)
    # the sizes named for 10 points are the smallest that detect it
    tasks = tasks_to_detect(0.10, 3, 0.0125)
    assert tasks is not None
    assert detectable_lift(tasks, 3, 0.0125) <= 0.10 < detectable_lift(tasks - 1, 3, 0.0125)
    samples = samples_to_detect(0.10, 12, 0.0125)
    assert samples is not None
    assert detectable_lift(12, samples, 0.0125) <= 0.10 < detectable_lift(12, samples - 1, 0.0125)


def test_a_confirmation_too_small_for_10_points_says_what_would_be_enough() -> None:
    first, second = detectable_lines(12, 3, "superior", 2, 0.4)
    lift = detectable_lift(12, 3, 0.0125)
    assert first.startswith("[confirm] the 12 task(s) set apart to confirm the pick, at 3 ")
    assert f"detect a version about {lift * 100:.0f} points better than the original 4 " in first
    assert "(policy superior at its level / 2; at a 50% pass rate" in first
    more = tasks_to_detect(0.10, 3, 0.0125)
    deeper = samples_to_detect(0.10, 12, 0.0125)
    assert more is not None and deeper is not None
    assert (
        f"it cannot detect a version 10 points better: a suite of about {2 * more / 0.4:.0f} "
        f"tasks ({more} set apart at --holdout 0.4) or --confirm-samples {deeper} would"
    ) in second
    assert "not proposed here is not shown better at this size" in second
    assert "not better" not in second.replace("not shown better", "")
    # big enough: one line, no advice
    assert len(detectable_lines(2000, 3, "superior", 2, 0.4)) == 1
    assert detectable_lines(12, 3, "delta", 2, 0.4) == []  # no bound to detect with


def test_improve_says_what_it_can_detect_before_the_first_iteration(tmp_path: Path) -> None:
    skill, suite = _write_inputs(tmp_path, per=4)  # 16 tasks: 4 set apart to confirm
    code, _out, err = run_cli(
        "improve", "--skill-path", str(skill), "--task-suite", str(suite),
        "--state-root", str(tmp_path / "state"), "--mock", "--improver", "mock",
    )  # fmt: skip
    lines = err.splitlines()
    said = next(i for i, line in enumerate(lines) if "set apart to confirm the pick, at 3" in line)
    assert said < next(i for i, line in enumerate(lines) if line.startswith("[iter 1/"))
    assert "detect a version about" in lines[said] and "4 times in 5" in lines[said]
    assert lines[said + 1].startswith("[confirm] it cannot detect a version 10 points better")
    assert code == 1, err
    assert "not proposed (not shown better at this size)" in err
    assert "NOT proposed" not in err
