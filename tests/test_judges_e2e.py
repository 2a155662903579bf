"""Every judge type through the real runner: `skill-eval run --standalone --executor mock
--mock-outputs F` on a suite in tmp_path, checking the per-task results in the artifact.
llm-rubric runs with `--judge-executor anthropic` against the loopback Messages API."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.engine import artifact
from skill_eval.judges.llm_rubric import TOOL_NAME
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli, write_outputs, write_skill, write_suite

TEST_REPORT = """
import json, os

def test_status_ok():
    data = json.load(open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8"))
    assert data["status"] == "ok", "status must be ok"

def test_no_api_key():
    assert "ANTHROPIC_API_KEY" not in os.environ
"""

# task id -> (judge config, candidate output that passes, baseline output that fails)
CASES: dict[str, tuple[dict[str, Any], str, str]] = {
    "contains-one-string": ({"type": "contains", "expected": "## Added"}, "## Added: x", "none"),
    "not-contains": ({"type": "not-contains", "expected": ["TODO"]}, "done", "TODO: later"),
    "regex": (
        {"type": "regex", "pattern": r"^v\d+$", "flags": ["multiline"]},
        "x\nv12\ny",
        "version twelve",
    ),
    "equals": (
        {"type": "equals", "expected": "42", "normalize": ["whitespace"]},
        " 42\n",
        "forty-two",
    ),
    "json-schema": (
        {"type": "json-schema", "schema_file": "fixtures/report.schema.json"},
        '```json\n{"status": "ok"}\n```',
        '{"state": "ok"}',
    ),
    "threshold": (
        {"type": "threshold", "key": "metrics.f1", "threshold": 0.8},
        '{"metrics": {"f1": 0.9}}',
        '{"metrics": {"f1": 0.2}}',
    ),
    "pytest": (
        {"type": "pytest", "test_file": "fixtures/test_report.py", "timeout": 60},
        '{"status": "ok"}',
        '{"status": "broken"}',
    ),
    "all": (
        {
            "type": "all",
            "judges": [
                {"type": "contains", "expected": ["a"]},
                {"type": "not-contains", "expected": ["z"]},
            ],
        },
        "a",
        "a z",
    ),
    "weighted": (
        {
            "type": "weighted",
            "pass_threshold": 0.6,
            "judges": [
                {"weight": 2, "judge": {"type": "contains", "expected": ["x"]}},
                {"weight": 1, "judge": {"type": "contains", "expected": ["y"]}},
            ],
        },
        "x",
        "y",
    ),
    "llm-rubric": (
        {"type": "llm-rubric", "rubric": "Must recommend GOODIDEA."},
        "I recommend GOODIDEA.",
        "No idea.",
    ),
}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        server.set_rules(
            [
                {
                    "tool_choice_name": TOOL_NAME,
                    "messages_contain": "I recommend GOODIDEA.",
                    "tool_input": {"reasoning": "recommends it", "score": 0.9},
                },
                {
                    "tool_choice_name": TOOL_NAME,
                    "tool_input": {"reasoning": "no recommendation", "score": 0.2},
                },
            ]
        )
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        yield server


def make_suite(tmp_path: Path, cases: dict[str, tuple[dict[str, Any], str, str]]) -> Path:
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True, exist_ok=True)
    (suite_dir / "fixtures" / "test_report.py").write_text(TEST_REPORT, encoding="utf-8")
    (suite_dir / "fixtures" / "report.schema.json").write_text(
        '{"type": "object", "required": ["status"]}', encoding="utf-8"
    )
    tasks = [
        {"id": name, "prompt": f"Task {name}", "judge": judge, "timeout_seconds": 60}
        for name, (judge, _, _) in cases.items()
    ]
    return write_suite(suite_dir, tasks)


def run(
    tmp_path: Path, cases: dict[str, tuple[dict[str, Any], str, str]], *extra: str
) -> dict[str, Any]:
    suite = make_suite(tmp_path, cases)
    outputs = write_outputs(
        tmp_path / "outputs.yaml",
        {
            "candidate": {name: good for name, (_, good, _) in cases.items()},
            "baseline": {name: bad for name, (_, _, bad) in cases.items()},
        },
    )
    skill = write_skill(tmp_path / "skill")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "mock",
        "--mock-outputs",
        str(outputs),
        "--max-retries",
        "0",
        "-q",
        "--policy",
        "delta",
        *extra,
    )
    assert out.strip(), err
    data = read_json(out.strip())
    artifact.validate(data)
    return data


def by_task(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["task_id"]: r for r in results}


def test_every_judge_type_passes_and_fails_through_the_runner(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    data = run(tmp_path, CASES, "--judge-executor", "anthropic")
    candidate, baseline = by_task(data["candidate_results"]), by_task(data["baseline_results"])
    for name in CASES:
        assert candidate[name]["passed"] is True, (name, candidate[name])
        assert candidate[name]["error"] is None, (name, candidate[name])
        assert baseline[name]["passed"] is False, (name, baseline[name])
        assert baseline[name]["error"] is None, (name, baseline[name])
    assert "status must be ok" in baseline["pytest"]["details"]
    assert "recommends it" in candidate["llm-rubric"]["details"]
    assert baseline["llm-rubric"]["score"] == 0.2
    assert "$: 'status' is a required property" in baseline["json-schema"]["details"]
    assert data["evaluation"]["execution_pass_rate"] == 1.0
    assert data["evaluation"]["baseline_pass_rate"] == 0.0
    assert len(fake.requests_to("/v1/messages")) == 2


def test_second_run_makes_no_judge_calls(tmp_path: Path, fake: FakeAnthropic) -> None:
    cases = {"llm-rubric": CASES["llm-rubric"]}
    run(tmp_path, cases, "--judge-executor", "anthropic")
    assert fake.count == 2
    data = run(
        tmp_path / "again",
        cases,
        "--judge-executor",
        "anthropic",
        "--judge-cache-dir",
        str(tmp_path / "state" / "judge-cache"),
    )
    assert fake.count == 2
    assert by_task(data["candidate_results"])["llm-rubric"]["passed"] is True
    run(tmp_path / "fresh", cases, "--judge-executor", "anthropic", "--no-judge-cache")
    assert fake.count == 4


def test_mock_judges_give_the_fixed_score(tmp_path: Path, fake: FakeAnthropic) -> None:
    strict = {
        "llm-rubric": ({"type": "llm-rubric", "rubric": "r", "pass_threshold": 0.9}, "a", "b")
    }
    data = run(
        tmp_path,
        {"llm-rubric": CASES["llm-rubric"], "strict": strict["llm-rubric"]},
        "--judge-executor",
        "mock",
    )
    candidate = by_task(data["candidate_results"])
    assert (candidate["llm-rubric"]["passed"], candidate["llm-rubric"]["score"]) == (True, 0.8)
    assert (candidate["strict"]["passed"], candidate["strict"]["score"]) == (False, 0.8)
    assert fake.count == 0


def test_judge_errors_are_errors_and_output_hangs_are_failures(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.set_rules([{"tool_choice_name": TOOL_NAME, "tool_input": {"reasoning": "no score"}}])
    cases = {
        "llm-rubric": CASES["llm-rubric"],
        "hang": ({"type": "pytest", "test_file": "fixtures/test_hang.py", "timeout": 1}, "x", "y"),
    }
    suite_dir = tmp_path / "suite" / "fixtures"
    suite_dir.mkdir(parents=True)
    (suite_dir / "test_hang.py").write_text(
        textwrap.dedent("""
        import time

        def test_hangs():
            time.sleep(60)
        """),
        encoding="utf-8",
    )
    data = run(tmp_path, cases, "--judge-executor", "anthropic", "--max-error-rate", "1")
    for results in (data["candidate_results"], data["baseline_results"]):
        rows = by_task(results)
        assert "no numeric score" in rows["llm-rubric"]["error"]
        # a test that hangs on the output is the output's failure, not the judge's error
        assert rows["hang"]["error"] is None and rows["hang"]["status"] == "failed"
        assert "timed out after 1s" in rows["hang"]["details"]
        assert rows["hang"]["passed"] is False


def test_suite_with_an_escaping_fixture_stops_before_any_call(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    evil = {"evil": ({"type": "pytest", "test_file": "fixtures/../../outside.py"}, "a", "b")}
    (tmp_path / "outside.py").write_text("def test_x():\n    pass\n")
    suite = make_suite(tmp_path, evil)
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "mock",
        "--judge-executor",
        "anthropic",
        "-q",
    )
    assert code != 0 and out == ""
    assert 'tasks[0] (id "evil").judge.test_file' in err and "inside fixtures/" in err
    assert fake.count == 0


def test_rejudge_with_changed_judges_and_the_judge_cache(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    cases = {name: CASES[name] for name in ("pytest", "llm-rubric")}
    first = run(tmp_path, cases, "--judge-executor", "anthropic")
    assert fake.count == 2
    run_dir = first["manifest"]["run_dir"]

    code, out, err = run_cli("rejudge", run_dir)  # same judges: every judgement from the cache
    assert code == 0, err
    assert fake.count == 2
    same = read_json(out.strip())
    assert same["evaluation"]["execution_pass_rate"] == 1.0

    # the author relaxes both judges; the outputs are judged again, nothing is executed
    relaxed = {
        "pytest": ({"type": "pytest", "test_file": "fixtures/test_report.py"}, "", ""),
        "llm-rubric": ({**CASES["llm-rubric"][0], "pass_threshold": 0.1}, "", ""),
    }
    (tmp_path / "suite" / "fixtures" / "test_report.py").write_text(
        "def test_anything():\n    pass\n", encoding="utf-8"
    )
    tasks = [
        {"id": n, "prompt": f"Task {n}", "judge": j, "timeout_seconds": 60}
        for n, (j, _, _) in relaxed.items()
    ]
    write_suite(tmp_path / "suite", tasks)
    code, out, err = run_cli("rejudge", run_dir)
    assert code == 0, err
    data = read_json(out.strip())
    artifact.validate(data)
    assert fake.count == 4  # a changed judge config is a new cache key
    baseline = by_task(data["baseline_results"])
    assert baseline["pytest"]["passed"] and baseline["llm-rubric"]["passed"]
    assert baseline["llm-rubric"]["score"] == 0.2


def test_the_rule_following_mock_reads_one_expected_string(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t1", "prompt": "p", "judge": {"type": "contains", "expected": "ACME-7"}}],
    )
    skill = write_skill(tmp_path / "skill", body="- [rule:t1] name every term")
    code, out, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill), "--no-baseline"),
        *("--state-root", str(tmp_path / "state"), "--mock", "--mock-rules", "-q"),
    )
    assert code == 0, err
    [result] = read_json(out.strip())["candidate_results"]
    assert result["passed"] is True
