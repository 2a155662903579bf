"""`skill-eval export-benchmark`: an artifact of a real --mock run as skill-creator's
benchmark.json, checked against the field list of its documented schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import read_json, run_cli, write_outputs, write_skill, write_suite

# skill-creator references/schemas.md, "benchmark.json" (anthropics/skills, skills/
# skill-creator): the viewer reads these names exactly. Written down here on purpose: a
# change on either side must show up as a failing test, not as an empty viewer.
TOP_FIELDS = {"metadata", "runs", "run_summary", "notes"}
METADATA_FIELDS = {
    "skill_name",
    "skill_path",
    "executor_model",
    "analyzer_model",
    "timestamp",
    "evals_run",
    "runs_per_configuration",
}
RUN_FIELDS = {
    "eval_id",
    "eval_name",
    "configuration",
    "run_number",
    "result",
    "expectations",
    "notes",
}
RESULT_FIELDS = {
    "pass_rate",
    "passed",
    "failed",
    "total",
    "time_seconds",
    "tokens",
    "tool_calls",
    "errors",
}
EXPECTATION_FIELDS = {"text", "passed", "evidence"}
CONFIGURATIONS = {"with_skill", "without_skill"}  # "Must be" one of these (the viewer groups)
SUMMARY_METRICS = {"pass_rate", "time_seconds", "tokens"}
STAT_FIELDS = {"mean", "stddev", "min", "max"}
DELTA_PATTERN = r"^[+-]\d+(\.\d+)?$"  # "+0.50", "+13.0", "+1700"

TASKS = [
    {
        "id": "eval-1",
        "prompt": "Write the notes.",
        "judge": {"type": "expectations", "expectations": ["Has a title", "Has a list"]},
    },
    {"id": "sales", "prompt": "Say DONE.", "judge": {"type": "contains", "expected": ["DONE"]}},
    {"id": "flaky", "prompt": "Say DONE too.", "judge": {"type": "contains", "expected": ["DONE"]}},
]
# candidate says DONE; the baseline does not, and its "flaky" attempts end in error (files
# scripted for a text task: the mock refuses them)
OUTPUTS = {
    "candidate": {"sales": "DONE", "flaky": "DONE"},
    "baseline": {"sales": "no", "flaky": {"text": "x", "files": {"a.txt": "a"}}},
}


def check_documented_shape(doc: dict[str, Any]) -> None:
    import re

    assert set(doc) == TOP_FIELDS
    assert set(doc["metadata"]) == METADATA_FIELDS
    assert isinstance(doc["metadata"]["evals_run"], list)
    assert isinstance(doc["metadata"]["runs_per_configuration"], int)
    for run in doc["runs"]:
        assert set(run) == RUN_FIELDS
        assert run["configuration"] in CONFIGURATIONS
        assert isinstance(run["eval_id"], int) and isinstance(run["run_number"], int)
        assert set(run["result"]) == RESULT_FIELDS
        assert 0.0 <= run["result"]["pass_rate"] <= 1.0
        for expectation in run["expectations"]:
            assert set(expectation) == EXPECTATION_FIELDS
        assert all(isinstance(n, str) for n in run["notes"])
    summary = doc["run_summary"]
    assert set(summary) - {"delta"} <= CONFIGURATIONS and "with_skill" in summary
    for config in set(summary) - {"delta"}:
        assert set(summary[config]) == SUMMARY_METRICS
        for metric in SUMMARY_METRICS:
            assert set(summary[config][metric]) == STAT_FIELDS
    if "delta" in summary:
        assert list(summary) == ["with_skill", "without_skill", "delta"]  # viewer: A, B
        assert set(summary["delta"]) == SUMMARY_METRICS
        assert all(re.match(DELTA_PATTERN, v) for v in summary["delta"].values())
    assert all(isinstance(n, str) for n in doc["notes"])


def mock_run(tmp_path: Path, *extra: str) -> Path:
    suite = write_suite(tmp_path / "suite", TASKS)
    skill = write_skill(tmp_path / "notes-skill")
    outputs = write_outputs(tmp_path / "outputs.yaml", OUTPUTS)
    state = tmp_path / "state"
    code, _, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--standalone",
        "--skill-path",
        str(skill),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--samples",
        "2",
        "--max-retries",
        "0",
        "--state-root",
        str(state),
        *extra,
    )
    assert code in (0, 1, 3, 4), err  # 3: the baseline's errors make the verdict ERROR
    return next((state / "evaluations").glob("*.json"))


def test_export_benchmark_matches_the_documented_schema(tmp_path: Path) -> None:
    artifact = mock_run(tmp_path)
    out = tmp_path / "benchmark.json"
    code, stdout, err = run_cli("export-benchmark", str(artifact), "-o", str(out))
    assert code == 0, err
    assert stdout.strip() == str(out)
    doc = read_json(out)
    check_documented_shape(doc)
    meta = doc["metadata"]
    assert (meta["skill_name"], meta["runs_per_configuration"]) == ("notes-skill", 2)
    assert meta["evals_run"] == [1, 2, 3]  # eval-1 keeps 1; the others get the next numbers
    runs = {(r["eval_name"], r["configuration"], r["run_number"]): r for r in doc["runs"]}
    assert len(runs) == 12  # 3 tasks x 2 arms x 2 samples
    graded = runs[("eval-1", "with_skill", 1)]
    assert graded["eval_id"] == 1
    assert graded["result"] | {"time_seconds": 0} == {
        "pass_rate": 1.0,
        "passed": 2,
        "failed": 0,
        "total": 2,
        "time_seconds": 0,
        "tokens": 0,
        "tool_calls": 0,
        "errors": 0,
    }
    assert [e["text"] for e in graded["expectations"]] == ["Has a title", "Has a list"]
    lost = runs[("sales", "without_skill", 2)]
    assert (lost["result"]["pass_rate"], lost["result"]["total"]) == (0.0, 1)
    assert lost["expectations"][0]["passed"] is False
    crashed = runs[("flaky", "without_skill", 1)]
    assert crashed["result"]["errors"] == 1 and crashed["notes"][0].startswith("error: ")
    summary = doc["run_summary"]
    # errors are left out: with_skill 6 runs all pass; without_skill 2 + 2 counted runs
    assert summary["with_skill"]["pass_rate"] == {
        "mean": 1.0,
        "stddev": 0.0,
        "min": 1.0,
        "max": 1.0,
    }
    assert summary["without_skill"]["pass_rate"]["mean"] == 0.5
    assert summary["without_skill"]["pass_rate"]["stddev"] == pytest.approx(0.5774, abs=1e-4)
    assert summary["delta"]["pass_rate"] == "+0.50"
    assert any("2 run(s) ended in error" in n for n in doc["notes"])


def test_a_run_without_baseline_has_only_with_skill(tmp_path: Path) -> None:
    artifact = mock_run(tmp_path, "--no-baseline")
    out = tmp_path / "benchmark.json"
    assert run_cli("export-benchmark", str(artifact), "-o", str(out))[0] == 0
    doc = read_json(out)
    check_documented_shape(doc)
    assert set(doc["run_summary"]) == {"with_skill"}
    assert {r["configuration"] for r in doc["runs"]} == {"with_skill"}


def test_bad_artifacts_and_existing_outputs(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    code, out, err = run_cli("export-benchmark", str(missing), "-o", str(tmp_path / "b.json"))
    assert (code, out) == (2, "") and err == f"Error: artifact not found: {missing}\n"
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "1.0"}', encoding="utf-8")
    code, _, err = run_cli("export-benchmark", str(bad), "-o", str(tmp_path / "b.json"))
    assert code == 2 and err.startswith(f"Error: {bad}") and "Traceback" not in err
    taken = tmp_path / "taken.json"
    taken.write_text("{}", encoding="utf-8")
    code, _, err = run_cli("export-benchmark", str(bad), "-o", str(taken))
    assert code == 2 and "already exists (use --force" in err


def test_a_viewer_workspace_holds_one_run_folder_per_attempt(tmp_path: Path) -> None:
    artifact = mock_run(tmp_path)
    out, workspace = tmp_path / "benchmark.json", tmp_path / "viewer"
    code, _, err = run_cli(
        "export-benchmark", str(artifact), "-o", str(out), "--workspace", str(workspace)
    )
    assert code == 0, err
    runs = sorted(p.relative_to(workspace).as_posix() for p in workspace.glob("eval-*/*/run-*"))
    assert len(runs) == 12 and runs[0] == "eval-1/with_skill/run-1"
    first = workspace / "eval-1" / "with_skill" / "run-1"
    assert read_json(first / "eval_metadata.json") == {
        "eval_id": 1,
        "eval_name": "eval-1",
        "prompt": "Write the notes.",
        "assertions": ["Has a title", "Has a list"],
    }
    grading = read_json(first / "grading.json")
    assert grading["summary"] == {"passed": 2, "failed": 0, "total": 2, "pass_rate": 1.0}
    assert [e["text"] for e in grading["expectations"]] == ["Has a title", "Has a list"]
    sales = workspace / "eval-2" / "with_skill" / "run-1" / "outputs" / "response.md"
    assert sales.read_text(encoding="utf-8") == "DONE"
    crashed = workspace / "eval-3" / "without_skill" / "run-1" / "outputs" / "response.md"
    assert crashed.read_text(encoding="utf-8").startswith("(this attempt ended in error: ")
    # a second export into the same folder is refused, then allowed with --force
    code, _, err = run_cli(
        "export-benchmark",
        str(artifact),
        "-o",
        str(tmp_path / "b2.json"),
        "--workspace",
        str(workspace),
    )
    assert code == 2 and "not empty (use --force" in err and not (tmp_path / "b2.json").exists()
    assert (
        run_cli(
            "export-benchmark",
            str(artifact),
            "-o",
            str(out),
            "--workspace",
            str(workspace),
            "--force",
        )[0]
        == 0
    )


def test_a_long_output_reaches_the_viewer_whole(tmp_path: Path) -> None:
    long = "DONE " + "the whole of a long answer. " * 400 + "THE END"
    suite = write_suite(tmp_path / "suite", TASKS[1:2])
    outputs = write_outputs(tmp_path / "outputs.yaml", {"candidate": {"sales": long}})
    state = tmp_path / "state"
    code, _, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--state-root",
        str(state),
        "-q",
    )
    assert code in (0, 1, 4), err
    artifact = next((state / "evaluations").glob("*.json"))
    stored = read_json(artifact)["candidate_results"][0]["attempts"][0]
    assert stored["output_blob"] and stored["output"] != long  # the artifact holds a preview
    code, _, err = run_cli(
        "export-benchmark",
        str(artifact),
        "-o",
        str(tmp_path / "b.json"),
        "--workspace",
        str(tmp_path / "viewer"),
    )
    assert code == 0, err
    response = tmp_path / "viewer" / "eval-1" / "with_skill" / "run-1" / "outputs" / "response.md"
    assert response.read_text(encoding="utf-8") == long


def test_eval_ids_and_trigger_tasks_do_not_depend_on_the_suite_file() -> None:
    from skill_eval.interop.benchmark import eval_numbers, trigger_ids

    # an imported eval keeps skill-creator's id; eval-N keeps N; the rest get free numbers
    assert eval_numbers(["named", "eval-2", "x"], {"named": 7}) == {"named": 7, "eval-2": 2, "x": 8}
    # the suite moved away (an artifact from CI): the triggers section still names them
    moved = {
        "task_suite": "/nowhere/task_suite.yaml",
        "triggers": {
            "arms": {
                "candidate": {"queries": [{"id": "q1"}, {"id": "q2"}]},
                "baseline": {"queries": [{"id": "q1"}]},
            }
        },
    }
    assert trigger_ids(moved) == {"q1", "q2"}
