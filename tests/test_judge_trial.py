"""`validate --judges`: model-graded judges tried on their reference and an empty output
`--repeat` times through a judge model (the real anthropic SDK against the loopback Messages
API), with per-task pass rates, agreement between repeats, and a report beside the suite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.judges.llm_rubric import TOOL_NAME
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import run_cli, write_suite


def rubric_task(task_id: str, reference: str | None = None) -> dict[str, Any]:
    task: dict[str, Any] = {
        "id": task_id,
        "prompt": f"Write the notes of {task_id}.",
        "judge": {"type": "llm-rubric", "rubric": "An Added section lists the change."},
    }
    if reference is not None:
        task["reference"] = reference
    return task


def answer(score: float, **match: Any) -> dict[str, Any]:
    return {
        "tool_choice_name": TOOL_NAME,
        **match,
        "tool_input": {"reasoning": "r", "score": score},
    }


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A judge model that grades STEADY-REF 0.9 every time, FLAKY-REF 0.9, 0.2, 0.9 (one
    call each, in whatever order they come), anything else of task `lenient` 0.8 and every
    other output 0.1."""
    with FakeAnthropic() as server:
        server.set_rules(
            [
                answer(0.9, messages_contain="STEADY-REF"),
                answer(0.9, messages_contain="FLAKY-REF", times=1),
                answer(0.2, messages_contain="FLAKY-REF", times=1),
                answer(0.9, messages_contain="FLAKY-REF"),
                answer(0.8, messages_contain="notes of lenient"),
                answer(0.1),
            ]
        )
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        yield server


def suite_of(tmp_path: Path) -> Path:
    return write_suite(
        tmp_path / "suite",
        [
            rubric_task("steady", "## Added\n- STEADY-REF"),
            rubric_task("flaky", "## Added\n- FLAKY-REF"),
            rubric_task("lenient"),
            {
                "id": "plain",
                "prompt": "p",
                "judge": {"type": "contains", "expected": ["x"]},
                "reference": "x",
            },
        ],
    )


def test_repeats_report_pass_rates_agreement_and_a_judge_that_disagrees_with_itself(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    suite = suite_of(tmp_path)
    code, out, err = run_cli(
        "validate", "--judges", "--repeat", "3", "--judge-executor", "anthropic", str(suite)
    )
    # 2 tasks with a reference (2 outputs) + 1 without (the empty output), 3 calls each
    assert len(fake.requests_to("/v1/messages")) == 15
    assert code == 2  # the flaky judge failed its reference once: an error
    problems = [line.split(".judge: ", 1) for line in err.splitlines()]
    # the scores in the order the calls came back: 0.2 is one of the three
    assert [
        (where.split("(id ")[1], message.split(" (scores")[0]) for where, message in problems
    ] == [
        ('"flaky")', "fails the task's reference in 1 of 3 judgements"),
        ('"flaky")', "disagrees with itself on the reference: passed 2 of 3"),
        ('"lenient")', "passes on an empty output in 3 of 3 judgements"),
    ]
    assert sorted(problems[0][1].split("(scores ")[1].rstrip(")").split(", ")) == [
        "0.20",
        "0.90",
        "0.90",
    ]
    assert err.splitlines()[2].startswith("warning: ")
    report = json.loads((suite.parent / "judge-check.json").read_text())
    assert (report["kind"], report["repeat"], report["judge_executor"]) == (
        "skill-eval judge check",
        3,
        "anthropic",
    )
    assert report["flagged_tasks"] == ["flaky", "lenient"]
    assert report["deterministic_tasks"] == 1
    tasks = {t["task_id"]: t for t in report["tasks"]}
    assert set(tasks) == {"steady", "flaky", "lenient"}
    steady, flaky = tasks["steady"], tasks["flaky"]
    assert (steady["reference"]["pass_rate"], steady["empty"]["pass_rate"]) == (1.0, 0.0)
    assert steady["reference"]["agreement"]["agreement"] == 1.0 and steady["flags"] == []
    assert sorted(flaky["reference"]["scores"]) == [0.2, 0.9, 0.9]
    assert flaky["reference"]["pass_rate"] == pytest.approx(2 / 3, abs=1e-4)
    # of 3 pairs of judgements of the reference, one agrees (0.9 and 0.9)
    assert flaky["reference"]["agreement"] == {
        "outputs": 1,
        "judgements": 3,
        "pairs": 3,
        "agreement": pytest.approx(1 / 3, abs=1e-4),
        "score_spread": pytest.approx(0.7),
        "disagreeing_outputs": 1,
    }
    assert tasks["lenient"]["reference"] is None and tasks["lenient"]["empty"]["passed"] == 3
    # the readable report is on stdout and beside the suite
    text = (suite.parent / "judge-check.txt").read_text()
    assert text.rstrip("\n") in out
    rows = [line.split() for line in text.splitlines() if line.startswith(("steady", "flaky"))]
    assert rows[0][:6] == ["steady", "llm-rubric", "reference", "3", "of", "3"]
    assert rows[0][6] == "100%"
    assert rows[2][:7] == ["flaky", "llm-rubric", "reference", "2", "of", "3", "33%"]
    assert "warning: flaky: disagrees with itself on the reference" in text
    assert f"judge report: {suite.parent / 'judge-check.json'} and judge-check.txt" in out


def test_every_repeat_is_a_call_of_its_own(tmp_path: Path, fake: FakeAnthropic) -> None:
    suite = write_suite(tmp_path / "suite", [rubric_task("steady", "STEADY-REF")])
    code, out, err = run_cli(
        "validate", "--judges", "--repeat", "5", "--judge-executor", "anthropic", str(suite)
    )
    assert code == 0, err
    prompts = [r.body["messages"][0]["content"] for r in fake.requests_to("/v1/messages")]
    assert len(prompts) == 10 and sum("STEADY-REF" in str(p) for p in prompts) == 5


def test_mock_judges_offline_and_the_report_goes_where_asked(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [rubric_task("graded", "ref")])
    target = tmp_path / "kept" / "checks.json"
    code, out, err = run_cli(
        "validate", "--judges", "--mock", "--judges-report", str(target), str(suite)
    )
    # the mock grader scores everything 0.8: the empty output passes, and is flagged
    assert code == 0 and "passes on an empty output in 3 of 3" in err
    assert json.loads(target.read_text())["judge_model"] == "mock"
    assert (tmp_path / "kept" / "checks.txt").is_file()
    assert not (suite.parent / "judge-check.json").exists()
    code, _, strict_err = run_cli("validate", "--judges", "--mock", "--strict", str(suite))
    assert code == 2 and not strict_err.startswith("warning")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--mock"],
            "--judge-executor, --judge-model, --mock and --judges-report go with --judges",
        ),
        (["--judges", "--judge-executor", "nope"], "--judge-executor 'nope': not an executor"),
    ],
)
def test_bad_flags_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    suite = write_suite(tmp_path / "suite", [rubric_task("graded", "ref")])
    code, out, err = run_cli("validate", *args, str(suite))
    assert code == 2 and out == ""
    assert err.startswith(f"Error: {message}") and len(err.splitlines()) == 1


def test_one_report_path_for_one_suite(tmp_path: Path) -> None:
    a = write_suite(tmp_path / "a", [rubric_task("graded", "ref")])
    b = write_suite(tmp_path / "b", [rubric_task("graded", "ref")])
    code, _, err = run_cli(
        "validate",
        "--judges",
        "--mock",
        "--judges-report",
        str(tmp_path / "r.json"),
        str(a),
        str(b),
    )
    assert code == 2 and "--judges-report names one report: give one suite with it" in err
