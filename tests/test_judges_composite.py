"""The `lint` judge and the `composite` judge (pytest + lint + rubric)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.judges.base import JudgeContext, build_judge, validate_judge_config
from skill_eval.judges.composite import combine
from skill_eval.judges.lint import LintJudge, fenced_blocks, lint_score, python_blocks

TASK = Task(id="add", prompt="Write add(a, b).", judge={"type": "composite"}, category="code")
GOOD = "Here it is:\n\n```python\ndef add(a, b):\n    return a + b\n```\n"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```\n"
SLOPPY = "```py\nimport os\nimport sys\n\n\ndef add(a, b):\n    return a + b\n```\n"
TEST_FILE = """\
import os
import re

SOURCE = open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read()
CODE = "\\n".join(re.findall(r"```(?:python|py)\\n(.*?)```", SOURCE, re.S))
NS = {}
exec(CODE, NS)


def test_small():
    assert NS["add"](1, 2) == 3


def test_zero():
    assert NS["add"](0, 0) == 0
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "test_add.py").write_text(TEST_FILE, encoding="utf-8")
    return tmp_path


def mock_ctx(suite_dir: Path) -> JudgeContext:
    # the mock grader, a context's default
    return JudgeContext(suite_dir=suite_dir, backend_options={"project_dir": str(suite_dir)})


def lint(output: str, **config: Any) -> JudgeResult:
    return LintJudge({"type": "lint", **config}).judge(TASK, Work(output), JudgeContext(Path(".")))


# --- lint -------------------------------------------------------------------------------------


def test_fenced_blocks_follow_commonmark_fences() -> None:
    text = (
        "````python\n```\nstill inside\n```\n````\n~~~ py title\nx = 1\n~~~\n"
        "```javascript\nlet y\n```\n``` python\nz = 2\n```\n"
    )
    assert [(b.lang, b.line) for b in fenced_blocks(text)] == [
        ("python", 2),
        ("py", 7),
        ("javascript", 10),
        ("python", 13),
    ]
    assert fenced_blocks(text)[0].code == "```\nstill inside\n```\n"
    assert [b.code for b in python_blocks(text)] == [
        "```\nstill inside\n```\n",
        "x = 1\n",
        "z = 2\n",
    ]


@pytest.mark.parametrize(("issues", "score"), [(0, 1.0), (1, 0.9), (3, 0.7), (10, 0.0), (25, 0.0)])
def test_lint_score(issues: int, score: float) -> None:
    assert lint_score(issues) == pytest.approx(score)


def test_clean_code_scores_one() -> None:
    result = lint(GOOD)
    assert (result.passed, result.score, result.error) == (True, 1.0, None)
    assert result.data["lint"] == {"applicable": True, "blocks": 1, "issues": 0, "diagnostics": []}


def test_issues_are_counted_and_located() -> None:
    result = lint(SLOPPY + "\n```python\ndef f(:\n```\n")
    codes = [d["code"] for d in result.data["lint"]["diagnostics"]]
    assert result.data["lint"]["issues"] == len(codes) >= 3  # 2 unused imports, a syntax error
    assert codes[:2] == ["F401", "F401"]
    assert all(d["block"] == 2 for d in result.data["lint"]["diagnostics"][2:])
    first = result.data["lint"]["diagnostics"][0]
    assert (first["block"], first["line"], first["output_line"]) == (1, 1, 2)
    assert result.score == pytest.approx(lint_score(len(codes)))
    assert "block 1 line 1: F401" in result.details


def test_select_and_threshold() -> None:
    assert lint(SLOPPY, select=["E9"]).data["lint"]["issues"] == 0
    assert not lint(SLOPPY, pass_threshold=1.0).passed
    assert lint(SLOPPY).passed  # 2 issues: 0.8 ≥ 0.7


def test_no_python_block_is_not_applicable() -> None:
    result = lint("Just prose.\n```bash\nrm -rf /\n```\n")
    assert (result.passed, result.score) == (True, 1.0)
    assert result.data["lint"]["applicable"] is False
    assert "not applicable" in result.details


@pytest.mark.parametrize(
    "suppression",
    [
        "# ruff: noqa\n",
        "# flake8: noqa\n",
        "# ruff: noqa: F401\n",
        "# ruff: disable[F401]\n",
    ],
)
def test_suppression_comments_in_the_output_do_not_count(suppression: str) -> None:
    result = lint(f"```python\n{suppression}import os\nimport sys  # noqa\n```\n")
    assert [d["code"] for d in result.data["lint"]["diagnostics"]] == ["F401", "F401"]
    assert result.score == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("block", "counted"),
    [
        ("import os\n", True),
        ("def f():\n    return undefined_name\n", True),
        ("class A:\n    pass\n", True),
        ('import re\nPATTERN = "\\d+"\n', True),  # an invalid escape warns, nothing more
        ("ls -la\n", False),  # parses as Python (ls - la) but defines nothing
        ("name: demo\nversion: 1\n", False),  # YAML: annotations, parses, defines nothing
        ('{"a": 1}\n', False),
        ("x = 1\nprint(x)\n", False),  # too little to tell from a shell or config snippet
        ("import x from 'y';\n", False),  # JavaScript: does not parse
        ("def foo\n  1\nend\n", False),  # Ruby
    ],
)
def test_untagged_blocks_count_when_they_parse_and_define_something(
    block: str, counted: bool
) -> None:
    for fence in ("```", "~~~"):
        text = f"Intro\n{fence}\n{block}{fence}\n"
        assert len(python_blocks(text)) == int(counted), (fence, block)
    if counted and "import os" in block:
        assert lint(f"```\n{block}```\n").data["lint"]["issues"] == 1


def test_code_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"```python\nopen({str(marker)!r}, 'w').write('x')\n```\n"
    assert lint(code).error is None
    assert not marker.exists()


def test_missing_ruff_is_a_judge_error() -> None:
    judge = LintJudge({"type": "lint"}, ruff=["/nonexistent/ruff"])
    result = judge.judge(TASK, Work(GOOD), JudgeContext(Path(".")))
    assert result.error == "lint: ruff not found at /nonexistent/ruff"
    broken = LintJudge({"type": "lint"}, ruff=[sys.executable, "-c", "import sys; sys.exit(2)"])
    assert "ruff exited 2" in (broken.judge(TASK, Work(GOOD), JudgeContext(Path("."))).error or "")


# --- composite --------------------------------------------------------------------------------

FULL = {
    "type": "composite",
    "pytest": {"test_file": "fixtures/test_add.py"},
    "lint": True,
    "rubric": {"evaluator": "code-review"},
}


def test_all_parts_pass(suite: Path) -> None:
    result = build_judge(FULL).judge(TASK, Work(GOOD), mock_ctx(suite))
    assert result.error is None, result.details
    assert result.passed
    assert result.score == pytest.approx(0.3 * 1.0 + 0.2 * 1.0 + 0.5 * 0.8)
    comp = result.data["composite"]
    assert {n: p["weight"] for n, p in comp["parts"].items()} == {
        "pytest": 0.3,
        "lint": 0.2,
        "rubric": 0.5,
    }
    assert result.data["evaluation"]["evaluator"]["name"] == "code-review"
    assert "data" not in comp["parts"]["rubric"]  # carried once, as data["evaluation"]
    assert result.details.startswith("composite: pass")


def test_a_failing_test_is_a_blocker_whatever_the_score(suite: Path) -> None:
    result = build_judge({**FULL, "pass_threshold": 0.5}).judge(TASK, Work(WRONG), mock_ctx(suite))
    comp = result.data["composite"]
    assert comp["parts"]["pytest"]["passed"] is False
    assert result.score == pytest.approx(0.3 * 0.5 + 0.2 * 1.0 + 0.5 * 0.8)
    assert result.score >= 0.5 and not result.passed and result.error is None
    assert comp["blockers"][0]["title"] == "tests fail"
    assert comp["verdict"] == "1 blocker finding(s)"


def test_weights_renormalise_over_present_and_applicable_parts(suite: Path) -> None:
    only = build_judge({"type": "composite", "lint": True, "rubric": {}})
    result = only.judge(TASK, Work("No code, just words."), mock_ctx(suite))
    comp = result.data["composite"]
    assert comp["parts"]["lint"]["applicable"] is False and comp["parts"]["lint"]["weight"] == 0
    assert comp["parts"]["rubric"]["weight"] == 1.0
    assert result.score == pytest.approx(0.8)
    custom = build_judge(
        {"type": "composite", "lint": True, "rubric": {}, "weights": {"lint": 1, "rubric": 3}}
    )
    result = custom.judge(TASK, Work(SLOPPY), mock_ctx(suite))
    assert result.score == pytest.approx((1 * 0.8 + 3 * 0.8) / 4)
    assert result.data["composite"]["parts"]["lint"]["weight"] == 0.25


def test_a_part_that_cannot_judge_makes_an_error(suite: Path) -> None:
    judge = build_judge({**FULL, "pytest": {"test_file": "fixtures/gone.py"}})
    result = judge.judge(TASK, Work(GOOD), mock_ctx(suite))
    assert result.error is not None and result.error.startswith("composite part error: pytest:")


def _rubric(findings: list[str], score: float = 0.9) -> JudgeResult:
    return JudgeResult(
        True,
        score,
        data={
            "evaluation": {
                "findings": [{"id": f"F{i}", "severity": s} for i, s in enumerate(findings)]
            }
        },
    )


@pytest.mark.parametrize(
    ("parts", "fail_on", "passed", "verdict"),
    [
        ({"rubric": _rubric([])}, "blocker", True, "score 0.90 ≥ threshold 0.70"),
        ({"rubric": _rubric(["important"])}, "blocker", True, "score 0.90 ≥ threshold 0.70"),
        ({"rubric": _rubric(["blocker"])}, "blocker", False, "1 blocker finding(s)"),
        ({"rubric": _rubric(["blocker"])}, "none", True, "score 0.90 ≥ threshold 0.70"),
        (
            {"rubric": _rubric([]), "pytest": JudgeResult(False, 0.9)},
            "none",
            False,
            "1 blocker finding(s)",
        ),
        ({"rubric": _rubric([], 0.5)}, "blocker", False, "score 0.50 below threshold 0.70"),
        (
            {"lint": JudgeResult(True, 1.0, data={"lint": {"applicable": False}})},
            "blocker",
            False,
            "no part could be scored",
        ),
    ],
)
def test_combine(parts: dict[str, JudgeResult], fail_on: str, passed: bool, verdict: str) -> None:
    weights = {"pytest": 0.3, "lint": 0.2, "rubric": 0.5}
    got = combine(parts, weights, 0.7, fail_on)
    assert (got[0], got[3]) == (passed, verdict)


def test_top_level_and_part_problems_show_in_one_pass(suite: Path) -> None:
    config = {
        **FULL,
        "pass_threshold": 3,
        "colour": "blue",
        "pytest": {"test_file": "fixtures/missing.py"},
        "lint": {"select": "E"},
        "rubric": {"fail_on": "sometimes"},
    }
    fields = [f for f, _ in validate_judge_config(config, suite)]
    assert fields == [
        "judge.colour",
        "judge.pass_threshold",
        "judge.pytest.test_file",
        "judge.lint.select",
        "judge.rubric.fail_on",
    ]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (FULL, []),
        ({"type": "composite"}, [("judge", "needs at least one of pytest, lint, rubric")]),
        (
            {"type": "composite", "lint": False},
            [("judge", "needs at least one of pytest, lint, rubric")],
        ),
        ({**FULL, "pytest": {"test_file": "../escape.py"}}, [("judge.pytest.test_file", None)]),
        ({**FULL, "pytest": {}}, [("judge.pytest.test_file", "is required")]),
        (
            {**FULL, "rubric": {"fail_on": "sometimes"}},
            [("judge.rubric.fail_on", "must be 'blocker' (any blocker fails) or 'none'")],
        ),
        (
            {**FULL, "rubric": {"type": "llm-rubric"}},
            [("judge.rubric.type", "must be 'rubric' or left out")],
        ),
        ({**FULL, "lint": {"select": "E"}}, [("judge.lint.select", None)]),
        ({**FULL, "weights": {"tests": 1}}, [("judge.weights.tests", None)]),
        (
            {**FULL, "weights": {"pytest": 0, "lint": 0, "rubric": 0}},
            [("judge.weights", "the parts present all have weight 0")],
        ),
        (
            {**FULL, "rubric": "code-review"},
            [("judge.rubric", "must be a rubric judge config (e.g. {evaluator: code-review})")],
        ),
    ],
)
def test_load_time_validation_names_nested_fields(
    suite: Path, config: dict[str, Any], expected: list[tuple[str, str | None]]
) -> None:
    problems = validate_judge_config(config, suite)
    assert [f for f, _ in problems] == [f for f, _ in expected]
    for (_, got), (_, want) in zip(problems, expected, strict=True):
        if want is not None:
            assert got == want
