"""all / any / weighted: nested judges, nested validation, and error propagation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config

HAS_A = {"type": "contains", "expected": ["alpha"]}
HAS_B = {"type": "contains", "expected": ["beta"]}
NO_C = {"type": "not-contains", "expected": ["gamma"]}


def judge(config: dict[str, Any], output: str, ctx: JudgeContext | None = None) -> JudgeResult:
    ctx = ctx or JudgeContext(suite_dir=Path("/nonexistent"))
    assert validate_judge_config(config, ctx.suite_dir) == []
    return run_judge(build_judge(config), Task(id="t", prompt="p", judge=config), Work(output), ctx)


@pytest.mark.parametrize(
    "output, passed, score",
    [
        ("alpha beta", True, 1.0),
        ("alpha", False, 2 / 3),
        ("alpha beta gamma", False, 2 / 3),
        ("nothing", False, 1 / 3),
    ],
)
def test_all(output: str, passed: bool, score: float) -> None:
    result = judge({"type": "all", "judges": [HAS_A, HAS_B, NO_C]}, output)
    assert (result.passed, result.error) == (passed, None)
    assert result.score == pytest.approx(score)
    assert len(result.data["judges"]) == 3


@pytest.mark.parametrize(
    "output, passed, score",
    [
        ("beta", True, 1.0),
        ("neither", False, 0.0),
    ],
)
def test_any(output: str, passed: bool, score: float) -> None:
    result = judge({"type": "any", "judges": [HAS_A, HAS_B]}, output)
    assert (result.passed, result.score, result.error) == (passed, score, None)


def test_details_show_each_nested_verdict() -> None:
    details = judge({"type": "all", "judges": [HAS_A, HAS_B]}, "alpha").details
    assert "[0] contains pass" in details and "[1] contains FAIL" in details
    assert "missing: 'beta'" in details


WEIGHTED = {
    "type": "weighted",
    "judges": [
        {"weight": 3, "judge": HAS_A},
        {"weight": 1, "judge": HAS_B},
    ],
}


@pytest.mark.parametrize(
    "config, output, passed, score",
    [
        (WEIGHTED, "alpha", True, 0.75),
        (WEIGHTED, "beta", False, 0.25),
        ({**WEIGHTED, "pass_threshold": 0.8}, "alpha", False, 0.75),
        (WEIGHTED, "alpha beta", True, 1.0),
    ],
)
def test_weighted(config: dict[str, Any], output: str, passed: bool, score: float) -> None:
    result = judge(config, output)
    assert (result.passed, result.error) == (passed, None)
    assert result.score == pytest.approx(score)
    assert "weighted score" in result.details


def test_nested_configs_are_validated_with_their_path(tmp_path: Path) -> None:
    config = {
        "type": "all",
        "judges": [
            HAS_A,
            {"type": "any", "judges": [{"type": "regex", "pattern": "("}, {"type": "nope"}]},
            {"type": "contains", "expect": ["x"]},
        ],
    }
    fields = [f for f, _ in validate_judge_config(config, tmp_path)]
    assert "judge.judges[1].judges[0].pattern" in fields
    assert "judge.judges[1].judges[1].type" in fields
    assert "judge.judges[2].expect" in fields


@pytest.mark.parametrize("kind", ["all", "any"])
def test_top_level_and_nested_problems_show_in_one_pass(tmp_path: Path, kind: str) -> None:
    config = {
        "type": kind,
        "threshold": 1,
        "judges": [{"type": "regex", "pattern": "("}, 5, {"type": "contains", "expect": ["x"]}],
    }
    fields = [f for f, _ in validate_judge_config(config, tmp_path)]
    # judges[2]: 'expect' is an unknown key, and 'expected' is missing
    assert fields == [
        "judge.threshold",
        "judge.judges[0].pattern",
        "judge.judges[1]",
        "judge.judges[2].expect",
        "judge.judges[2].expected",
    ]


def test_weighted_top_level_and_nested_problems_show_in_one_pass(tmp_path: Path) -> None:
    config = {
        "type": "weighted",
        "pass_threshold": 5,
        "judges": [
            {"weight": 0, "judge": {"type": "regex", "pattern": "("}},
            {"weight": 1},
            {"weight": 1, "judge": "contains"},
            {"weight": 1, "judge": {"type": "nope"}},
        ],
    }
    problems = validate_judge_config(config, tmp_path)
    assert [f for f, _ in problems] == [
        "judge.judges[0].weight",
        "judge.judges[1].judge",
        "judge.judges[2].judge",
        "judge.pass_threshold",
        "judge.judges[0].judge.pattern",
        "judge.judges[3].judge.type",
    ]


@pytest.mark.parametrize(
    "config, field, message",
    [
        ({"type": "all", "judges": []}, "judge.judges", "non-empty list of judge configs"),
        ({"type": "any"}, "judge.judges", "is required"),
        (
            {"type": "weighted", "judges": [{"weight": 0, "judge": HAS_A}]},
            "judge.judges[0].weight",
            "> 0",
        ),
        (
            {"type": "weighted", "judges": [{"judge": HAS_A}]},
            "judge.judges[0].weight",
            "is required",
        ),
        ({"type": "weighted", "judges": [HAS_A]}, "judge.judges[0].type", "unknown key"),
        (
            {"type": "weighted", "judges": [{"weight": 1, "judge": {"type": "regex"}}]},
            "judge.judges[0].judge.pattern",
            "is required",
        ),
        (
            {"type": "weighted", "judges": [{"weight": 1, "judge": HAS_A}], "pass_threshold": 2},
            "judge.pass_threshold",
            "between 0 and 1",
        ),
    ],
)
def test_combinator_config_problems(
    tmp_path: Path, config: dict[str, Any], field: str, message: str
) -> None:
    problems = validate_judge_config(config, tmp_path)
    assert any(f == field and message in m for f, m in problems), problems


def test_a_nested_judge_error_is_an_error_not_a_failure(tmp_path: Path) -> None:
    # The test file passes validation, then disappears: the pytest judge cannot judge.
    (tmp_path / "fixtures").mkdir()
    test_file = tmp_path / "fixtures" / "test_x.py"
    test_file.write_text("def test_x():\n    pass\n", encoding="utf-8")
    broken = {"type": "pytest", "test_file": "fixtures/test_x.py"}
    ctx = JudgeContext(suite_dir=tmp_path)
    for kind in ("all", "any"):
        config = {"type": kind, "judges": [HAS_A, broken]}
        assert validate_judge_config(config, tmp_path) == []
        test_file.unlink()
        result = run_judge(
            build_judge(config), Task(id="t", prompt="p", judge=config), Work("alpha"), ctx
        )
        test_file.write_text("def test_x():\n    pass\n", encoding="utf-8")
        assert result.error is not None and "judges[1] (pytest)" in result.error
        assert result.passed is False
