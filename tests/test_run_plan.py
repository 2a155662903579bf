"""The run plan: `RunPlan.from_flags` groups the flags of `skill-eval run` by owner and checks
them; the plan goes into run.json as it is and comes back for `rejudge` and `merge`; runs
written before the plan (the flat `options` of run.json schema_version 1) still resume,
rejudge and merge."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from skill_eval import RunPlan, run_evaluation
from skill_eval.errors import UsageError
from skill_eval.plan.flags import FLAGS
from skill_eval.plan.kinds import RUNNERS
from skill_eval.plan.stored import plan_from_dict
from tests.artifact_compare import comparable
from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_SKILL_IMPROVED,
    DEMO_SUITE,
    REPO,
    journal_records,
    read_json,
    run_cli,
)

LEGACY = json.loads((REPO / "tests/data/legacy/run_options_v1.json").read_text(encoding="utf-8"))


def demo_flags(tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {
        "task_suite": str(DEMO_SUITE),
        "state_root": str(tmp_path / "state"),
        "standalone": True,
        "skill_path": str(DEMO_SKILL_IMPROVED),
        "mock": True,
        "mock_outputs": str(DEMO_OUTPUTS),
        "progress": False,
        **more,
    }


def test_from_flags_groups_the_flags_by_owner(tmp_path: Path) -> None:
    plan = RunPlan.from_flags(**demo_flags(tmp_path, samples=3, pass_k=2, runner="threads"))
    assert plan.inputs.mode == "standalone" and plan.inputs.skill_path == str(DEMO_SKILL_IMPROVED)
    assert plan.executor.name == "mock" and plan.judging.executor == "mock"
    assert dict(plan.executor.options) == {"mock_outputs": str(DEMO_OUTPUTS)}
    assert (plan.decision.pass_k, plan.sample_count) == (2, 3)
    assert plan.records.state_root == str(tmp_path / "state") and not plan.records.progress
    assert plan.execution.runner == "threads"


def test_shorthands_become_the_executors_own_options() -> None:
    plan = RunPlan.from_flags(
        task_suite="s.yaml",
        standalone=True,
        skill_path="skill",
        executor="anthropic",
        max_tokens=100,
        fixed_concurrency=True,
        batch=True,
        executor_options={"max_tool_turns": 3},
    )
    assert dict(plan.executor.options) == {
        "max_tokens": 100,
        "adaptive_concurrency": False,
        "batch": True,
        "max_tool_turns": 3,
    }
    with pytest.raises(UsageError, match="'anthropic' executor has no option 'max_turns'"):
        RunPlan.from_flags(
            task_suite="s.yaml",
            standalone=True,
            skill_path="skill",
            executor="anthropic",
            executor_options={"max_turns": 3},
        )


def test_no_section_has_more_than_20_fields_and_every_flag_has_a_home() -> None:
    plan = RunPlan.from_flags(task_suite="s.yaml", standalone=True, skill_path="skill")
    for section in fields(plan):
        assert len(fields(getattr(plan, section.name))) <= 20, section.name
    assert "mock_outputs" in FLAGS and "runner" in FLAGS and "backend" not in FLAGS
    with pytest.raises(TypeError, match=r"unknown flag 'sampels' \(did you mean 'samples'\?\)"):
        RunPlan.from_flags(task_suite="s.yaml", sampels=3)


def test_the_runners_are_the_backends() -> None:
    from skill_eval.backends import BACKENDS

    assert tuple(RUNNERS) == tuple(BACKENDS)


def test_a_plan_round_trips_through_its_stored_form(tmp_path: Path) -> None:
    plan = RunPlan.from_flags(
        **demo_flags(tmp_path, evaluators_dirs=("a", "b"), policy="delta", margin=0.05)
    )
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["version"] == 1 and list(data)[1:] == [
        "inputs",
        "execution",
        "executor",
        "judging",
        "decision",
        "records",
    ]
    assert plan_from_dict(data, where="run.json: plan", warn=pytest.fail) == plan


def test_the_python_api_runs_a_plan(tmp_path: Path) -> None:
    outcome = run_evaluation(RunPlan.from_flags(**demo_flags(tmp_path)), log=lambda m: None)
    assert outcome.verdict == "pass" and outcome.path.is_file()  # 3 of 5 improved, none worse
    assert outcome.run_dir is not None
    meta = read_json(outcome.run_dir / "run.json")
    assert meta["schema_version"] == 2 and "options" not in meta
    assert meta["plan"]["executor"] == {
        "name": "mock",
        "model": None,
        "skill_mode": "system",
        "options": {"mock_outputs": str(DEMO_OUTPUTS)},
    }


# -- runs written before the plan -------------------------------------------------------------


def as_legacy(run_dir: Path) -> None:
    """Rewrite a run's run.json the way skill-eval wrote it before the run plan: the flat
    `options` (tests/data/legacy, recorded from that version) with this run's settings."""
    meta = read_json(run_dir / "run.json")
    plan = meta.pop("plan")
    sections = {**plan["inputs"], **plan["execution"], **plan["decision"], **plan["records"]}
    options = {k: sections.get(k, v) for k, v in LEGACY["options"].items()}
    executor, judging = plan["executor"], plan["judging"]
    mock = executor["name"] == "mock"
    options.update(
        standalone=plan["inputs"]["mode"] == "standalone",
        input=plan["inputs"]["ranking"],
        backend=plan["execution"]["runner"],
        mock=mock,
        executor=None if mock else executor["name"],
        model=executor["model"],
        skill_mode=executor["skill_mode"],
        mock_outputs=executor["options"].get("mock_outputs"),
        judge_executor=None if mock else judging["executor"],
        judge_model=judging["model"],
        judge_cache_dir=judging["cache_dir"],
        no_judge_cache=not judging["cache"],
        evaluators_dirs=judging["evaluators_dirs"],
    )
    meta["schema_version"] = LEGACY["schema_version"]
    meta["options"] = options
    (run_dir / "run.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")


def demo_run(state: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(
        "run",
        "--task-suite",
        str(DEMO_SUITE),
        "--skill-path",
        str(DEMO_SKILL_IMPROVED),
        "--mock",
        "--mock-outputs",
        str(DEMO_OUTPUTS),
        "--state-root",
        str(state),
        "-q",
        *extra,
    )


def test_a_run_written_before_the_plan_rejudges(tmp_path: Path) -> None:
    code, out, err = demo_run(tmp_path / "state", "--policy", "delta")
    assert code == 0, err
    first = read_json(out.strip())
    run_dir = Path(first["manifest"]["run_dir"])
    as_legacy(run_dir)
    assert "options" in read_json(run_dir / "run.json")
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 0 and "warning" not in err, err
    again = read_json(out.strip())
    assert again["evaluation"] == first["evaluation"]  # the delta policy came back
    assert comparable(again["candidate_results"]) == comparable(first["candidate_results"])


def test_a_run_written_before_the_plan_resumes(tmp_path: Path) -> None:
    code, out, err = demo_run(tmp_path / "state")
    assert code == 0, err
    run_dir = Path(read_json(out.strip())["manifest"]["run_dir"])
    as_legacy(run_dir)
    code, _, err = demo_run(tmp_path / "state", "--resume")
    assert code == 0, err
    assert f"resume: 10 finished attempts kept from {run_dir}" in err
    assert len(journal_records(run_dir / "attempts.jsonl")) == 10  # none ran again


def test_shards_written_before_the_plan_merge(tmp_path: Path) -> None:
    code, out, err = demo_run(tmp_path / "whole")
    whole = read_json(out.strip())
    state = tmp_path / "sharded"
    for i in (1, 2):
        code, _, err = demo_run(state, "--shard", f"{i}/2")
        assert code == 0, err
    runs = sorted((state / "runs").iterdir())
    as_legacy(runs[0])  # one shard from before, one from now: still one run
    code, out, err = run_cli("merge", *map(str, runs), "-o", str(tmp_path / "m.json"))
    assert code == 0, err
    assert comparable(read_json(out.strip())) == comparable(whole)


def test_a_mistyped_legacy_option_is_one_clear_line(tmp_path: Path) -> None:
    code, out, err = demo_run(tmp_path / "state")
    run_dir = Path(read_json(out.strip())["manifest"]["run_dir"])
    as_legacy(run_dir)
    meta = read_json(run_dir / "run.json")
    meta["options"]["pass_k"] = "two"
    meta["options"]["from_the_future"] = 1
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        f"Error: {run_dir / 'run.json'}: options.pass_k: must be int, got 'two'"
    )
    assert "from_the_future" in err  # named in the warning before it
