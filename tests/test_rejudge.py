"""`skill-eval rejudge`: new judgements of a finished run, no re-execution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.engine import artifact
from skill_eval.engine.rundir import RUN_SCHEMA_VERSION
from skill_eval.judges.base import REGISTRY, JudgeSpec, judge_types, register_judge
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite


def test_rejudge_uses_the_suites_current_judges(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite = write_suite(suite_dir, [contains_task("t1", "alpha"), contains_task("t2", "gamma")])
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(tmp_path / "o.yaml", {"candidate": {"t1": "alpha", "t2": "beta"}})
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
        "--policy",
        "delta",
    )
    first = read_json(out.strip())
    assert first["evaluation"]["execution_pass_rate"] == 0.5
    run_dir = Path(first["manifest"]["run_dir"])
    journal_before = (run_dir / "attempts.jsonl").read_text()

    # the suite author fixes the judge of t2; the outputs were fine all along
    write_suite(suite_dir, [contains_task("t1", "alpha"), contains_task("t2", "beta")])
    code, out2, err = run_cli("rejudge", str(run_dir))
    assert code == 0, err
    second = read_json(out2.strip())
    artifact.validate(second)
    assert out2.strip() != out.strip() and "rejudged" in out2
    assert second["evaluation"]["execution_pass_rate"] == 1.0
    assert second["rejudged"]["run_dir"] == str(run_dir)
    assert second["run_id"] == first["run_id"]
    # nothing executed again, the original journal untouched, the new one beside it
    assert (run_dir / "attempts.jsonl").read_text() == journal_before
    assert len(list(run_dir.glob("rejudged-*.jsonl"))) == 1
    outputs_before = [a["output"] for r in first["candidate_results"] for a in r["attempts"]]
    outputs_after = [a["output"] for r in second["candidate_results"] for a in r["attempts"]]
    assert outputs_before == outputs_after


def test_rejudge_of_a_non_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    code, out, err = run_cli("rejudge", str(tmp_path))
    assert code == 2 and out == "" and "not a run directory" in err


def finished_run(tmp_path: Path, *extra: str) -> tuple[Path, Path, dict]:
    suite_dir = tmp_path / "suite"
    suite = write_suite(suite_dir, [contains_task("t1", "alpha")])
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(tmp_path / "o.yaml", {"candidate": {"t1": "alpha"}})
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
        "--policy",
        "delta",
        *extra,
    )
    assert code == 0, err
    first = read_json(out.strip())
    return Path(first["manifest"]["run_dir"]), suite_dir, first


def test_run_manifest_is_versioned(tmp_path: Path) -> None:
    run_dir, _, _ = finished_run(tmp_path)
    meta = read_json(run_dir / "run.json")
    assert list(meta)[0] == "schema_version" and meta["schema_version"] == RUN_SCHEMA_VERSION


def test_rejudge_of_a_manifest_with_an_unknown_key_warns_and_goes_on(tmp_path: Path) -> None:
    run_dir, _, _ = finished_run(tmp_path)
    meta = read_json(run_dir / "run.json")
    meta["plan"]["decision"]["option_from_the_future"] = 3
    meta["added_by_a_newer_version"] = {"x": 1}
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 0, err
    assert "warning:" in err and "unknown key(s)" in err and "option_from_the_future" in err
    assert read_json(out.strip())["evaluation"]["execution_pass_rate"] == 1.0


def test_rejudge_of_a_manifest_missing_a_required_key_is_one_clear_line(tmp_path: Path) -> None:
    run_dir, _, _ = finished_run(tmp_path)
    meta = read_json(run_dir / "run.json")
    del meta["plan"]["inputs"]["task_suite"]
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 2 and out == ""
    assert err.strip() == f"Error: {run_dir / 'run.json'}: plan.inputs.task_suite: is required"


def test_rejudge_of_an_older_manifest_without_a_version_still_works(tmp_path: Path) -> None:
    run_dir, _, _ = finished_run(tmp_path)
    meta = read_json(run_dir / "run.json")
    del meta["schema_version"]
    del meta["plan"]["records"]["progress"]  # a key added later takes its default
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 0 and "warning:" not in err, err


def test_rejudge_retries_a_judge_error_like_a_run(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A judge (a registered type: a `python` judge runs in a fresh jailed process each call
    and keeps no state between them) whose first judgement of "alpha" is a transient error."""
    run_dir, suite_dir, _ = finished_run(tmp_path, "--max-retries", "1")
    calls: list[str] = []

    class Flaky:
        def __init__(self, config: Any) -> None:
            pass

        def judge(self, task: Task, work: Work, ctx: Any) -> JudgeResult:
            calls.append(work.text)
            if calls.count("alpha") == 1 and work.text == "alpha":
                return JudgeResult.failure("judge model overloaded", transient=True)
            ok = work.text == "alpha"
            return JudgeResult(passed=ok, score=float(ok))

    judge_types()  # the built-ins first, so ours is not overwritten
    register_judge(JudgeSpec(type="test-flaky-rejudge", schema={"type": "object"}, build=Flaky))
    request.addfinalizer(REGISTRY.reset)
    write_suite(
        suite_dir,
        [{"id": "t1", "prompt": "Do t1", "judge": {"type": "test-flaky-rejudge"}}],
    )
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 0, err
    assert read_json(out.strip())["evaluation"]["execution_pass_rate"] == 1.0
    assert calls.count("alpha") == 2  # judged again


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("decision", "pass_k", "two", "plan.decision.pass_k: must be int, got 'two'"),
        ("inputs", "no_baseline", 1, "plan.inputs.no_baseline: must be bool, got 1"),
        (
            "judging",
            "evaluators_dirs",
            "x",
            "plan.judging.evaluators_dirs: must be a list of strings, got 'x'",
        ),
        (
            "decision",
            "policy",
            "best",
            "plan.decision.policy: must be one of delta, no-regression, non-inferior, "
            "superior, got 'best'",
        ),
        ("executor", "options", [1], "plan.executor.options: must be an object, got [1]"),
    ],
)
def test_rejudge_of_a_manifest_with_a_mistyped_setting_is_one_clear_line(
    tmp_path: Path, section: str, key: str, value: object, expected: str
) -> None:
    run_dir, _, _ = finished_run(tmp_path)
    meta = read_json(run_dir / "run.json")
    meta["plan"][section][key] = value
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 2 and out == ""
    assert err.strip() == f"Error: {run_dir / 'run.json'}: {expected}"
