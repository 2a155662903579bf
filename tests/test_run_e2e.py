"""Both modes end to end through the CLI on the mock executor: verdicts, exit codes,
artifacts checked against the shipped schema, the evaluate.py contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.engine import artifact
from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_RANKING,
    DEMO_SKILL_IMPROVED,
    DEMO_SUITE,
    contains_task,
    journal_records,
    read_json,
    run_cli,
    run_script,
    write_outputs,
    write_ranking,
    write_skill,
    write_suite,
)

COMPAT_KEYS = [
    "schema_version",
    "lane",
    "run_id",
    "stage",
    "status",
    "created_at",
    "source_ranking_artifact",
    "candidate_id",
    "candidate_score",
    "task_suite",
    "task_suite_skill_id",
    "pass_k",
    "evaluation",
    "candidate_results",
    "baseline_results",
    "warnings",
    "target",
    "next_step",
    "next_owner",
    "truth_anchor",
]


def standalone(tmp_path: Path, outputs: dict | None, *extra: str, tasks=None):
    suite = write_suite(
        tmp_path / "suite", tasks or [contains_task("t1", "alpha"), contains_task("t2", "beta")]
    )
    skill = write_skill(tmp_path / "skill")
    args = [
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
        # Two tasks never clear the default no-regression policy's bound; these tests are
        # about the mechanics, so they use the original delta rule unless they say.
        "--policy",
        "delta",
    ]
    if outputs is not None:
        args += ["--mock-outputs", str(write_outputs(tmp_path / "outputs.yaml", outputs))]
    return run_cli(*args, *extra)


def test_demo_standalone_passes_and_writes_a_schema_valid_artifact(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(DEMO_SUITE),
        "--skill-path",
        str(DEMO_SKILL_IMPROVED),
        "--mock",
        "--mock-outputs",
        str(DEMO_OUTPUTS),
        "--state-root",
        str(tmp_path / "state"),
        "--policy",
        "delta",
    )
    assert code == 0, err
    path = Path(out.strip())
    data = read_json(path)
    artifact.validate(data)
    assert list(data)[: len(COMPAT_KEYS)] == COMPAT_KEYS
    assert data["truth_anchor"] == str(path.resolve())
    assert data["candidate_id"] == "standalone"
    assert data["source_ranking_artifact"] is None
    ev = data["evaluation"]
    assert ev["verdict"] == "pass"
    assert ev["execution_pass_rate"] == 1.0
    assert ev["baseline_pass_rate"] == 0.4  # the scripted baseline passes 2 of 5
    assert ev["delta"] == 0.6
    assert data["manifest"]["arms"]["baseline"]["skill_sha256"] is None
    assert data["manifest"]["arms"]["candidate"]["skill_sha256"]
    assert "PASS" in err and f"artifact            {path}" in err
    assert "breaking-change" in err  # the per-task table
    # every attempt was journaled with its full output
    journal = Path(data["manifest"]["run_dir"]) / "attempts.jsonl"
    lines = journal_records(journal)
    assert len(lines) == 10


@pytest.mark.parametrize(
    "outputs,extra,verdict,code",
    [
        ({"candidate": {"t1": "alpha", "t2": "beta"}, "baseline": {"t1": "alpha"}}, [], "pass", 0),
        ({"candidate": {"t1": "alpha"}, "baseline": {"t1": "alpha", "t2": "beta"}}, [], "fail", 1),
        ({"t1": "alpha", "t2": "beta"}, [], "pass", 0),  # same text for both arms: delta 0
        ({"t1": "alpha"}, ["--no-baseline", "--min-pass-rate", "0.5"], "pass", 0),
        ({"t1": "alpha"}, ["--no-baseline", "--min-pass-rate", "0.9"], "fail", 1),
    ],
)
def test_scripted_outputs_decide_the_verdict(tmp_path: Path, outputs, extra, verdict, code) -> None:
    exit_code, out, err = standalone(tmp_path, outputs, *extra)
    assert exit_code == code, err
    data = read_json(out.strip())
    artifact.validate(data)
    assert data["evaluation"]["verdict"] == verdict


def test_original_skill_baseline_under_twenty_percent_is_an_error(tmp_path: Path) -> None:
    baseline = write_skill(tmp_path / "base", "old")
    code, out, err = standalone(
        tmp_path, {"candidate": {"t1": "alpha"}}, "--baseline-skill", str(baseline)
    )
    assert code == 3, err
    ev = read_json(out.strip())["evaluation"]
    assert ev["verdict"] == "error"
    assert ev["reason"] == "baseline pass rate 0 < 0.2"


def test_no_skill_baseline_under_twenty_percent_only_warns(tmp_path: Path) -> None:
    code, out, err = standalone(tmp_path, {"candidate": {"t1": "alpha"}})
    data = read_json(out.strip())
    assert code == 0 and data["evaluation"]["verdict"] == "pass"
    assert any("no-skill baseline pass rate 0" in w for w in data["warnings"])
    assert "warning:" in err


def _pipeline(tmp_path: Path, candidate_id: str, *extra: str, outputs=None):
    out_file = write_outputs(tmp_path / "outputs.yaml", outputs) if outputs else DEMO_OUTPUTS
    return run_cli(
        "run",
        "--input",
        str(DEMO_RANKING),
        "--candidate-id",
        candidate_id,
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(out_file),
        "-q",
        *extra,
    )


def test_pipeline_execution_plan_candidate_passes(tmp_path: Path) -> None:
    code, out, err = _pipeline(tmp_path, "cand-sections", "--policy", "delta")
    assert code == 0, err
    path = Path(out.strip())
    assert (
        path == (tmp_path / "state" / "evaluations" / "demo-run-001-cand-sections.json").resolve()
    )
    data = read_json(path)
    artifact.validate(data)
    assert data["run_id"] == "demo-run-001" and data["lane"] == "release-notes"
    assert data["candidate_id"] == "cand-sections" and data["candidate_score"] == 3.4
    assert data["source_ranking_artifact"] == str(DEMO_RANKING)
    assert data["evaluation"] == {
        "execution_pass_rate": 1.0,
        "baseline_pass_rate": 0.4,
        "delta": 0.6,
        "verdict": "pass",
    } | {
        k: v
        for k, v in data["evaluation"].items()
        if k not in ("execution_pass_rate", "baseline_pass_rate", "delta", "verdict")
    }
    arms = data["manifest"]["arms"]
    # the plan was applied: the candidate's skill differs from the original
    assert arms["candidate"]["skill_sha256"] != arms["baseline"]["skill_sha256"]
    assert data["warnings"] == []


def test_pipeline_candidates_do_not_overwrite_each_other(tmp_path: Path) -> None:
    a = _pipeline(tmp_path, "cand-sections")[1].strip()
    b = _pipeline(tmp_path, "cand-inline")[1].strip()
    assert a != b and Path(a).exists() and Path(b).exists()


def test_pipeline_low_score_is_skipped_without_running(tmp_path: Path) -> None:
    code, out, err = _pipeline(tmp_path, "cand-low-score")
    assert code == 0, err
    data = read_json(out.strip())
    assert data["evaluation"]["verdict"] == "skipped"
    assert data["evaluation"]["reason"] == "candidate score 0.4 < eval threshold 1"
    assert data["candidate_results"] == [] and data["baseline_results"] == []
    artifact.validate(data)


def test_pipeline_missing_candidate_and_missing_suite_are_usage_errors(tmp_path: Path) -> None:
    code, _, err = _pipeline(tmp_path, "nope")
    assert code == 2 and "nope" in err and "cand-sections" in err
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(tmp_path / "x.yaml"),
        "--skill-path",
        str(tmp_path),
        "--state-root",
        str(tmp_path),
        "--mock",
    )
    assert code == 2 and f"Task suite not found: {tmp_path / 'x.yaml'}" in err
    assert "Traceback" not in err


def test_pipeline_missing_original_skill_is_an_error_not_zero(tmp_path: Path) -> None:
    ranking = write_ranking(
        tmp_path / "r.json", [{"id": "c", "score": 5, "skill_content": "# x"}], target="gone"
    )
    code, _, err = run_cli(
        "run",
        "--input",
        str(ranking),
        "--candidate-id",
        "c",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
    )
    assert code == 2 and "gone" in err


def test_hostile_ids_cannot_write_outside_the_state_root(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skill")
    ranking = write_ranking(
        tmp_path / "r.json",
        [
            {
                "id": "../../../escape",
                "score": 5,
                "skill_content": "---\nname: x\ndescription: d\n---\nhi",
            }
        ],
        target=str(skill),
        run_id="../../outside",
    )
    state = tmp_path / "deep" / "state"
    code, out, err = run_cli(
        "run",
        "--input",
        str(ranking),
        "--candidate-id",
        "../../../escape",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(state),
        "--mock",
        "-q",
    )
    assert code in (0, 1, 3, 4), err
    written = Path(out.strip()).resolve()
    assert str(written).startswith(str(state.resolve()))
    assert not any(
        p.name.startswith("escape")
        for p in tmp_path.rglob("*")
        if not str(p.resolve()).startswith(str(state.resolve()))
    )
    assert read_json(written)["run_id"] == "../../outside"  # kept as data, not as a path


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [contains_task("t1", "a")])
    for args in (
        ["--standalone"],
        ["--input", "r.json"],
        ["--standalone", "--skill-path", "s", "--pass-k", "0"],
    ):
        code, _, err = run_cli(
            "run", "--task-suite", str(suite), "--state-root", str(tmp_path / "s"), "--mock", *args
        )
        assert code == 2, args
        assert err.startswith("Error:") and "Traceback" not in err


def test_pass_k_counts_any_of_the_first_k(tmp_path: Path) -> None:
    # the mock gives one text per task, so pass@3 equals pass@1 here; attempts are recorded
    code, out, _ = standalone(tmp_path, {"t1": "alpha"}, "--pass-k", "3")
    data = read_json(out.strip())
    t1 = data["candidate_results"][0]
    assert t1["passed"] is True and len(t1["attempts"]) == 3
    assert data["pass_k"] == 3


def test_evaluate_script_keeps_the_old_contract(tmp_path: Path) -> None:
    proc = run_script(
        "--input",
        str(DEMO_RANKING),
        "--candidate-id",
        "cand-inline",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
    )
    # exit 0 whenever an artifact was written, whatever the verdict
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and Path(lines[0]).is_absolute() and Path(lines[0]).exists()
    data = read_json(lines[0])
    assert data["manifest"]["skill_mode"] == "prepend"
    missing = run_script(
        "--standalone",
        "--skill-path",
        str(tmp_path),
        "--task-suite",
        str(tmp_path / "none.yaml"),
        "--state-root",
        str(tmp_path),
        "--mock",
    )
    assert missing.returncode == 1 and missing.stdout == ""
    assert f"Task suite not found: {tmp_path / 'none.yaml'}" in missing.stderr
    bad = run_script("--pass-k", "x")
    assert bad.returncode == 2 and bad.stdout == ""


def test_rerunning_with_resume_reuses_the_run_and_its_artifact(tmp_path: Path) -> None:
    outputs = {"t1": "alpha", "t2": "beta"}
    _, out1, _ = standalone(tmp_path, outputs)
    first = read_json(out1.strip())
    run_dir = Path(first["manifest"]["run_dir"])
    journal = (run_dir / "attempts.jsonl").read_text()
    _, out2, err = standalone(tmp_path, outputs, "--resume")
    second = read_json(out2.strip())
    assert "4 finished attempts kept" in err
    assert out2 == out1 and second["run_id"] == first["run_id"]
    assert second["manifest"]["run_dir"] == str(run_dir)
    assert (run_dir / "attempts.jsonl").read_text() == journal  # nothing re-run
    assert second["evaluation"] == first["evaluation"]
    # explicit directory, and a directory made with other inputs is refused
    code, _, err = standalone(tmp_path, outputs, "--resume", str(run_dir), "--pass-k", "2")
    assert code == 2 and "other inputs" in err
    code, _, err = standalone(tmp_path, outputs, "--resume", str(tmp_path))
    assert code == 2 and "not a run directory" in err


def test_a_new_run_never_reuses_a_run_directory(tmp_path: Path) -> None:
    a = read_json(_pipeline(tmp_path, "cand-sections")[1].strip())["manifest"]["run_dir"]
    b = read_json(_pipeline(tmp_path, "cand-sections")[1].strip())["manifest"]["run_dir"]
    assert a != b and b.endswith("-2")


@pytest.mark.parametrize(
    "flags,verdict,code",
    [
        # no-regression: 3 improved and none regressed of 5 pass/fail tasks; the exact test
        # rules a 10-point regression out, just (one-sided 96% lower bound -9.6 points)
        ([], "pass", 0),
        (["--policy", "delta"], "pass", 0),  # delta 0.6 >= 0
        (["--policy", "delta", "--min-delta", "0.7"], "fail", 1),  # 0.6 < 0.7
        # superior: 5 tasks cannot show an improvement: not enough evidence, exit 4
        (["--policy", "superior"], "fail", 4),
        (["--policy", "non-inferior", "--margin", "0.5"], "pass", 0),
    ],
)
def test_policies_through_the_cli(tmp_path: Path, flags, verdict, code) -> None:
    exit_code, out, err = _pipeline(tmp_path, "cand-sections", *flags)
    data = read_json(out.strip())
    assert data["evaluation"]["verdict"] == verdict, err
    assert exit_code == code
    assert data["evaluation"]["insufficient"] is (code == 4)
    policy = data["evaluation"]["policy"]
    if not flags:  # the summary says which policy decided and why
        assert "one-sided 96% lower bound -9.6 points" in policy["reasoning"]
        assert "policy no-regression" in err
    assert policy["name"] == (flags[1] if flags and flags[0] == "--policy" else "no-regression")
    assert data["evaluation"]["conclusion"] == "inconclusive"
    comparison = data["comparison"]
    assert comparison["improved"] == ["breaking-change", "issue-credits", "security-section"]
    assert comparison["regressed"] == [] and comparison["mcnemar_p"] == 0.25
    assert data["non_discriminating"] == ["added-and-fixed", "title-heading"]
    assert "tasks" in data["power_hint"]
    stats = data["candidate_results"][0]["stats"]
    assert stats["label"] == "stable_pass" and stats["pass_at_k"] == 1.0


def test_samples_beyond_pass_k_give_pass_at_k_estimates(tmp_path: Path) -> None:
    code, out, err = standalone(
        tmp_path, {"candidate": {"t1": "alpha", "t2": "beta"}}, "--samples", "3"
    )
    data = read_json(out.strip())
    assert data["manifest"]["samples"] == 3 and data["pass_k"] == 1
    assert len(data["candidate_results"][0]["attempts"]) == 3
    assert data["candidate_results"][0]["stats"]["n"] == 3
    assert data["baseline_results"][0]["stats"]["label"] == "stable_fail"


def test_unknown_evaluator_stops_the_run_before_any_call(tmp_path: Path) -> None:
    tasks = [{"id": "t1", "prompt": "p", "judge": {"type": "rubric", "evaluator": "no-such"}}]
    code, out, err = standalone(tmp_path, None, tasks=tasks)
    assert code == 2 and out == ""
    assert "unknown evaluator 'no-such'" in err and "code-review" in err
    assert not (tmp_path / "state" / "runs").exists()


def test_rubric_judge_runs_in_mock_mode(tmp_path: Path) -> None:
    tasks = [{"id": "t1", "prompt": "p", "judge": {"type": "rubric", "evaluator": "general"}}]
    code, out, err = standalone(tmp_path, None, tasks=tasks)
    assert code == 0, err
    attempt = read_json(out.strip())["candidate_results"][0]["attempts"][0]
    evaluation = attempt["judge"]["data"]["evaluation"]
    assert evaluation["score"] == 0.8 and evaluation["findings"] == []
    assert evaluation["evaluator"]["name"] == "general"


def test_errors_in_one_arm_leave_the_task_out_of_both_rates(tmp_path: Path) -> None:
    judge = {"type": "python", "callable": "tests.judge_helpers:alpha_or_boom"}
    tasks = [{"id": f"t{i}", "prompt": "p", "judge": judge} for i in range(10)]
    # the baseline passes t0-t5 and fails t6-t9; the candidate passes t0-t4, fails t5 (a
    # regression) and breaks the judge on t6-t9, which the baseline failed anyway
    outputs = {
        "candidate": {
            **{f"t{i}": "alpha" for i in range(5)},
            "t5": "no",
            **{f"t{i}": "BOOM" for i in range(6, 10)},
        },
        "baseline": {f"t{i}": "alpha" for i in range(6)},
    }
    code, out, err = standalone(
        tmp_path, outputs, "--max-retries", "0", "--max-error-rate", "0.5", tasks=tasks
    )
    data = read_json(out.strip())
    ev = data["evaluation"]
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"]) == (round(5 / 6, 4), 1.0)
    assert ev["verdict"] == "fail" and code == 1
    assert "below the required minimum" in ev["policy"]["reasoning"]
    assert any(
        "left out of both pass rates: 4 in the candidate only (t6, t7, t8, t9)" in w
        for w in data["warnings"]
    )


def test_error_rate_is_judged_per_arm(tmp_path: Path) -> None:
    judge = {"type": "python", "callable": "tests.judge_helpers:alpha_or_boom"}
    tasks = [{"id": f"t{i}", "prompt": "p", "judge": judge} for i in range(10)]
    outputs = {
        "candidate": {"t0": "BOOM", "t1": "BOOM", **{f"t{i}": "alpha" for i in range(2, 10)}},
        "baseline": {f"t{i}": "alpha" for i in range(10)},
    }
    code, out, err = standalone(tmp_path, outputs, "--max-retries", "0", tasks=tasks)
    ev = read_json(out.strip())["evaluation"]
    assert ev["verdict"] == "error" and code == 3
    assert ev["reason"].startswith("2 of 10 attempts of the candidate ended in error (0.2 >")


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--min-delta", "nan"], "--min-delta must be between -1 and 1"),
        (["--margin", "2"], "--margin must be between 0 and 1"),
        (["--temperature", "nan"], "--temperature must be between 0 and 1"),
        (["--max-tokens", "0"], "--max-tokens must be at least 1"),
        (["--max-turns", "-1"], "--max-turns must be at least 1"),
        (["--baseline-ttl", "abc"], "--baseline-ttl: not a duration"),
        (["--baseline-ttl", "nan"], "--baseline-ttl: duration must be positive and finite"),
        (["--judge-executor", "anthropic"], "--mock mocks the judges too"),
    ],
)
def test_bad_flag_values_are_usage_errors(tmp_path: Path, flags, message) -> None:
    code, out, err = standalone(tmp_path, None, *flags)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


def test_bad_output_and_state_root_paths_fail_before_running(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    code, _, err = standalone(tmp_path, None, "--output", str(tmp_path / "adir"))
    assert code == 2 and "is a directory" in err
    assert not (tmp_path / "state").exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    suite = write_suite(tmp_path / "s", [contains_task("t1", "a")])
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "k")),
        "--state-root",
        str(afile),
        "--mock",
    )
    assert code == 2 and "exists and is not a directory" in err


def test_a_python_judge_that_cannot_be_imported_stops_the_run(tmp_path: Path) -> None:
    tasks = [
        {
            "id": "t1",
            "prompt": "p",
            "judge": {"type": "python", "callable": "tests.judge_helpers:no_such_function"},
        }
    ]
    code, out, err = standalone(tmp_path, None, tasks=tasks)
    assert code == 2 and out == "" and "no_such_function" in err
    assert not (tmp_path / "state" / "runs").exists()


def test_lone_surrogates_in_scripted_outputs_are_cleaned(tmp_path: Path) -> None:
    outputs = tmp_path / "o.json"
    outputs.write_text('{"t1": "alpha \\udc80", "t2": "beta"}', encoding="utf-8")
    suite = write_suite(
        tmp_path / "suite", [contains_task("t1", "alpha"), contains_task("t2", "beta")]
    )
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
        "--policy",
        "delta",
    )
    assert code == 0, err
    data = read_json(out.strip())
    assert "\ufffd" in data["candidate_results"][0]["attempts"][0]["output"]
