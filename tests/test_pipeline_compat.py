"""Issue 25: the original improvement pipeline runs with skill-eval as its evaluator.

Its orchestrator (lanyasheng/auto-improvement-orchestrator-skill,
skills/improvement-orchestrator/scripts/orchestrate.py) runs `scripts/evaluate.py` as a child
process from its own working directory, for a skill kept elsewhere, and reads the artifact
whose path is the child's stdout. `_orchestrator_evaluate` and `_orchestrator_baseline` below
follow its run_evaluator and run_baseline_evaluation line by line; the ranking is written as
its generator (propose.py) and discriminator (score.py) write one.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import Task
from skill_eval.engine.compat import failed_category
from tests.helpers import (
    REPO,
    read_json,
    run_cli,
    run_script,
    write_outputs,
    write_skill,
    write_suite,
)

EVALUATOR_SCRIPT = REPO / "scripts" / "evaluate.py"
SUPPORTED = ("append_markdown_section",)
MANUAL = (
    "unsupported_manual_refactor",
    "unsupported_manual_workflow_change",
    "unsupported_manual_test_addition",
)


def _run_script(cmd: list[str], cwd: Path) -> str:
    """orchestrate._run_script: stdout stripped; a non-zero exit is its RuntimeError."""
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)
    assert result.returncode == 0, result.stderr  # the orchestrator would go on unevaluated
    assert "Traceback" not in result.stderr
    assert len(result.stdout.splitlines()) == 1, result.stdout  # it reads Path(stdout)
    return result.stdout.strip()


def _orchestrator_evaluate(
    cwd: Path, ranking: Path, candidate_id: str, suite: Path, state_root: Path
) -> dict[str, Any]:
    """orchestrate.run_evaluator with eval_threshold=1.0 and mock=True, as run_pipeline calls
    it. Returns the artifact (the orchestrator returns None for `skipped`)."""
    cmd = [
        sys.executable,
        str(EVALUATOR_SCRIPT),
        "--input",
        str(ranking),
        "--candidate-id",
        candidate_id,
        "--task-suite",
        str(suite),
        "--state-root",
        str(state_root),
        "--eval-threshold",
        str(1.0),
        "--mock",
    ]
    path = Path(_run_script(cmd, cwd))
    assert path.is_absolute() and path.is_file()
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert result["truth_anchor"] == str(path)
    return result


def _orchestrator_baseline(
    cwd: Path, target: Path, suite: Path, state_root: Path, *extra: str
) -> dict[str, Any]:
    """orchestrate.run_baseline_evaluation: a standalone run of the current skill."""
    cmd = [
        sys.executable,
        str(EVALUATOR_SCRIPT),
        "--standalone",
        "--task-suite",
        str(suite),
        "--state-root",
        str(state_root),
        "--skill-path",
        str(target),
        "--mock",
        *extra,
    ]
    result: dict[str, Any] = json.loads(Path(_run_script(cmd, cwd)).read_text("utf-8"))
    return result


def _discriminated(candidate: dict[str, Any], score: float, recommendation: str) -> dict[str, Any]:
    """score.score_candidate: the candidate with the discriminator's fields added."""
    return {
        **candidate,
        "lane": "generic-skill",
        "protected_target": False,
        "created_at": "2026-04-01T00:00:00Z",
        "score": score,
        "heuristic_score": score,
        "risk_penalty": 0.0,
        "recommendation": recommendation,
        "blockers": [],
        "judge_notes": ["heuristic"],
        "judge_adapter": {
            "name": "rule-based-heuristic-v1",
            "evaluated_at": "2026-04-01T00:00:00Z",
        },
    }


def _write_pipeline_ranking(state_root: Path, skill: Path) -> Path:
    """A ranking as propose.py + score.py write it: absolute target and target_paths, the
    docs candidate an append_markdown_section plan, the other three manual actions."""
    skill_md = str(skill / "SKILL.md")
    refs = ["users ask for examples", "users expect it to publish"]  # two: +1.0 to each score
    run_id = "demo-skill-20260401T000000Z"
    docs = {
        "id": "cand-01-skill",
        "title": "Add operator notes",
        "target_path": skill_md,
        "category": "docs",
        "risk_level": "low",
        "stage": "proposed",
        "source_refs": refs,
        "executor_support": True,
        "execution_plan": {
            "action": "append_markdown_section",
            "section_heading": "## Operator Notes",
            "content_lines": ["This skill is advisory.", "Say when a request needs an operator."],
        },
    }
    manual = [
        {
            "id": f"cand-0{i + 2}-demo-skill-{kind}",
            "title": kind,
            "target_path": skill_md,
            "category": kind,
            "risk_level": "medium",
            "stage": "proposed",
            "source_refs": refs,
            "executor_support": False,
            "execution_plan": {"action": action, "notes": "left for a person"},
        }
        for i, (kind, action) in enumerate(
            zip(("prompt", "workflow", "tests"), MANUAL, strict=True)
        )
    ]
    # score.heuristic_score: 2.0 + 0.5 per source ref (at most 3) + 0.5 executor support -
    # 1.5 for medium risk; under 2.0 is "reject". Above --eval-threshold 1.0 all the same.
    scored = [
        _discriminated(docs, 3.5, "accept_for_execution"),
        *(_discriminated(c, 1.5, "reject") for c in manual),
    ]
    path = state_root / "rankings" / f"{run_id}.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "schema_version": "1.0",
                "lane": "generic-skill",
                "run_id": run_id,
                "stage": "ranked",
                "status": "success",
                "created_at": "2026-04-01T00:00:00Z",
                "source_candidate_artifact": str(
                    state_root / "candidate_versions" / f"{run_id}.json"
                ),
                "target": {
                    "path": str(skill),
                    "exists": True,
                    "kind": "directory",
                    "name": skill.name,
                    "has_references": False,
                    "markdown_files": [skill_md],
                },
                "critic_mode": "heuristic-only",
                "scored_candidates": scored,
                "summary": {"accept_for_execution": 1, "hold": 0, "reject": 3},
                "next_step": "execute_candidate",
                "next_owner": "executor",
                "truth_anchor": str(path),
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """The orchestrator's checkout (the working directory), the user's skill and the state
    root: three unrelated places."""
    cwd = tmp_path / "orchestrator-checkout"
    cwd.mkdir()
    skill = write_skill(
        tmp_path / "users" / "u" / "skills" / "demo-skill",
        body="Name the quality tier: POWERFUL above 0.85.",
    )
    # The orchestrator finds a suite inside the skill folder (_auto_discover_task_suite).
    suite = write_suite(
        skill,
        [
            {
                "id": "t-tier",
                "prompt": "Accuracy 0.9: which tier?",
                "judge": {"type": "llm-rubric", "rubric": "Names the tier"},
            },
            {
                "id": "t-echo",
                "prompt": "Say anything",
                "judge": {"type": "contains", "expected": ["mock"]},
            },
        ],
        skill_id="demo-skill",
    )
    return {
        "cwd": cwd,
        "skill": skill.resolve(),
        "suite": suite.resolve(),
        "state": (tmp_path / "var" / "state").resolve(),
    }


def test_orchestrator_gets_a_verdict_for_every_candidate(layout: dict[str, Path]) -> None:
    cwd, skill, suite, state = (layout[k] for k in ("cwd", "skill", "suite", "state"))
    before = (skill / "SKILL.md").read_bytes()
    ranking = _write_pipeline_ranking(state, skill)
    ids = [c["id"] for c in read_json(ranking)["scored_candidates"]]

    planned = _orchestrator_evaluate(cwd, ranking, ids[0], suite, state)
    evaluation = planned["evaluation"]
    assert evaluation["verdict"] in ("pass", "fail")  # run_pipeline reverts on "fail"
    assert evaluation["verdict"] == "pass"  # both arms pass both mock tasks: delta 0
    assert evaluation["execution_pass_rate"] == 1.0  # printed by run_evaluator
    assert planned["candidate_id"] == ids[0] and planned["candidate_score"] == 3.5
    assert planned["source_ranking_artifact"] == str(ranking)
    assert planned["target"]["path"] == str(skill)
    assert [r["task_id"] for r in planned["candidate_results"]] == ["t-tier", "t-echo"]
    candidate_dir = Path(planned["manifest"]["arms"]["candidate"]["skill_directory"])
    assert "## Operator Notes\n\n- This skill is advisory." in (
        candidate_dir / "SKILL.md"
    ).read_text(encoding="utf-8")
    assert planned["manifest"]["arms"]["baseline"]["skill_directory"] == str(skill)
    assert (skill / "SKILL.md").read_bytes() == before  # the plan went to a copy

    for candidate_id, action in zip(ids[1:], MANUAL, strict=True):
        skipped = _orchestrator_evaluate(cwd, ranking, candidate_id, suite, state)
        assert skipped["evaluation"]["verdict"] == "skipped"
        assert skipped["candidate_score"] == 1.5  # above the threshold: skipped for the action
        assert action in skipped["evaluation"]["reason"]
        assert "cannot be applied by a program" in skipped["evaluation"]["reason"]
        assert (
            skipped["candidate_results"] == [] and skipped["usage"]["candidate"]["attempts"] == 0
        )  # no model call
    assert not (state / "traces").exists()  # a pipeline-mode run leaves no trace
    assert not list(cwd.iterdir())  # nothing written where the orchestrator runs


def test_orchestrator_baseline_evaluation_reads_task_results(layout: dict[str, Path]) -> None:
    cwd, skill, state = layout["cwd"], layout["skill"], layout["state"]
    suite = write_suite(
        cwd.parent / "suites" / "demo-skill",
        [
            {
                "id": "t-tier",
                "prompt": "Accuracy 0.9: which tier?",
                "judge": {"type": "contains", "expected": ["POWERFUL"]},
            },
            {
                "id": "t-echo",
                "prompt": "Say anything",
                "judge": {"type": "contains", "expected": ["mock"]},
            },
        ],
        skill_id="demo-skill",
    )
    result = _orchestrator_baseline(cwd, skill, suite, state)
    # run_baseline_evaluation: failed tasks feed the generator, pass_rate is printed.
    failed = [r for r in result["task_results"] if not r.get("passed")]
    assert [(t["task_id"], t["score"], t["error"]) for t in failed] == [("t-tier", 0.0, "")]
    assert "POWERFUL" in failed[0]["details"]
    assert result["evaluation"]["pass_rate"] == 0.5
    assert {k: result["evaluation"][k] for k in ("total_tasks", "passed", "failed")} == {
        "total_tasks": 2,
        "passed": 1,
        "failed": 1,
    }
    assert result["evaluation"]["verdict"] == "pass"  # no worse than no skill: no trace
    assert not (state / "traces").exists()


def test_failing_standalone_run_writes_the_original_trace(layout: dict[str, Path]) -> None:
    cwd, skill, state = layout["cwd"], layout["skill"], layout["state"]
    suite = write_suite(
        cwd.parent / "suites" / "s",
        [
            {
                "id": "t-tier",
                "prompt": "tier?",
                "judge": {"type": "contains", "expected": ["POWERFUL"]},
            },
            {
                "id": "t-rubric",
                "prompt": "why?",
                "judge": {"type": "llm-rubric", "rubric": "r", "pass_threshold": 0.9},
            },
            {"id": "t-ok", "prompt": "ok?", "judge": {"type": "contains", "expected": ["ok"]}},
        ],
        skill_id="demo-skill",
    )
    outputs = write_outputs(
        cwd.parent / "outputs.yaml",
        {
            "candidate": {"t-tier": "no", "t-ok": "ok"},
            "baseline": {"t-tier": "POWERFUL", "t-ok": "ok"},
        },
    )
    result = _orchestrator_baseline(cwd, skill, suite, state, "--mock-outputs", str(outputs))
    evaluation = result["evaluation"]
    assert evaluation["verdict"] == "fail"
    assert (
        evaluation["total_tasks"],
        evaluation["passed"],
        evaluation["failed"],
        evaluation["pass_rate"],
    ) == (3, 1, 2, 0.3333)
    trace_path = state / "traces" / f"{result['run_id']}-trace.json"
    trace = read_json(trace_path)
    assert list(trace) == [
        "candidate_id",
        "reason",
        "failed_tasks",
        "failed_dimension",
        "failed_category",
        "scores_before",
        "scores_after",
        "artifact",
    ]
    assert trace["candidate_id"] == "standalone-demo-skill"
    assert trace["reason"] == evaluation["reason"]
    assert [t["task_id"] for t in trace["failed_tasks"]] == ["t-tier", "t-rubric"]
    assert trace["failed_tasks"][0] == {
        "task_id": "t-tier",
        "passed": False,
        "score": 0.0,
        "details": "missing: 'POWERFUL'",
        "error": "",
    }
    assert trace["failed_dimension"] == "execution"
    assert trace["failed_category"] == "accuracy"  # a model-graded judge failed a task
    assert trace["scores_before"] == {"pass_rate": evaluation["baseline_pass_rate"]}
    assert trace["scores_after"] == {"pass_rate": evaluation["execution_pass_rate"]}
    assert trace["artifact"] == result["truth_anchor"]

    # Without a baseline the bar is --min-pass-rate, as the original's 0.5.
    alone = _orchestrator_baseline(
        cwd, skill, suite, state, "--mock-outputs", str(outputs), "--no-baseline"
    )
    trace = read_json(state / "traces" / f"{alone['run_id']}-trace.json")
    assert trace["scores_before"] == {"pass_rate": 0.5}
    assert trace["scores_after"] == {"pass_rate": alone["evaluation"]["execution_pass_rate"]}


def _refusal(tmp_path: Path, target: str, cwd: Path | None = None) -> str:
    """stderr of a pipeline run whose ranking's target.path is `target`; it must fail."""
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["mock"]}}],
    )
    ranking = tmp_path / "state" / "rankings" / "r.json"
    ranking.parent.mkdir(parents=True, exist_ok=True)
    ranking.write_text(
        json.dumps(
            {
                "run_id": "r",
                "target": {"path": target},
                "scored_candidates": [
                    {
                        "id": "c1",
                        "score": 3,
                        "execution_plan": {
                            "action": "append_markdown_section",
                            "section_heading": "## New",
                            "content_lines": ["x"],
                        },
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(EVALUATOR_SCRIPT),
            "--input",
            str(ranking),
            "--candidate-id",
            "c1",
            "--task-suite",
            str(suite),
            "--state-root",
            str(tmp_path / "state"),
            "--mock",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd or tmp_path,
    )
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not (tmp_path / "state" / "evaluations").exists()
    return proc.stderr


def test_proc_environ_as_target_is_refused_in_one_line(tmp_path: Path) -> None:
    err = _refusal(tmp_path, "/proc/self/environ")
    assert "target.path: '/proc/self/environ'" in err and "a system file, never a skill" in err


def test_fifo_as_target_is_refused_without_opening_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")  # opening it would block the run for ever
    assert "target.path: 'pipe' is a FIFO, not a skill" in _refusal(tmp_path, "pipe")
    folder = tmp_path / "skill"
    folder.mkdir()
    os.mkfifo(folder / "SKILL.md")
    err = _refusal(tmp_path, str(folder))
    assert f"target.path: '{folder}': {folder / 'SKILL.md'} is a FIFO" in err


def test_folder_without_skill_md_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("# not a skill\n", encoding="utf-8")
    assert "no SKILL.md in skill directory" in _refusal(tmp_path, str(tmp_path / "notes"))


def test_socket_device_and_oversized_targets_are_refused(tmp_path: Path) -> None:
    assert "'/dev/null'" in _refusal(tmp_path, "/dev/null")
    sock_dir = Path("/tmp") / f"se-{os.getpid()}"  # AF_UNIX paths are short
    sock_dir.mkdir()
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(sock_dir / "SKILL.md"))
            assert "is a socket, not a skill" in _refusal(tmp_path, str(sock_dir / "SKILL.md"))
    finally:
        (sock_dir / "SKILL.md").unlink(missing_ok=True)
        sock_dir.rmdir()
    big = write_skill(tmp_path / "big", body="x" * (1024 * 1024))
    assert "over the 1 MiB limit" in _refusal(tmp_path, str(big))


def test_run_skips_a_manual_candidate_before_any_model_call(tmp_path: Path) -> None:
    """`skill-eval run` too: skipped, exit 0, nothing run; a score under --eval-threshold
    keeps the threshold's reason. A real executor with no key proves no call is tried."""
    skill = write_skill(tmp_path / "skill")
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    entries = [
        {"id": "manual", "score": 3, "execution_plan": {"action": "rewrite_all"}},
        {"id": "low", "score": 0.5, "execution_plan": {"action": "unsupported_manual_refactor"}},
    ]
    ranking = tmp_path / "r.json"
    ranking.write_text(
        json.dumps({"run_id": "r", "target": {"path": str(skill)}, "scored_candidates": entries}),
        encoding="utf-8",
    )
    reasons = []
    for cid in ("manual", "low"):
        code, out, err = run_cli(
            "run",
            "--input",
            str(ranking),
            "--candidate-id",
            cid,
            "--task-suite",
            str(suite),
            "--state-root",
            str(tmp_path / "state"),
            "--executor",
            "anthropic",
            "-q",
        )
        assert code == 0, err
        artifact = read_json(out.strip())
        assert artifact["evaluation"]["verdict"] == "skipped"
        assert artifact["usage"]["candidate"]["attempts"] == 0
        assert artifact["manifest"]["arms"]["candidate"]["skill_sha256"] is None
        assert "task_results" not in artifact  # the standalone fields are standalone's
        reasons.append(artifact["evaluation"]["reason"])
    assert "'rewrite_all' cannot be applied by a program" in reasons[0]
    assert reasons[1] == "candidate score 0.5 < eval threshold 1"


@pytest.mark.parametrize(
    ("judges", "errors", "expected"),
    [
        (["contains", "llm-rubric"], ["", ""], "accuracy"),
        (["rubric"], [""], "accuracy"),
        (["contains", "pytest"], ["", "claude CLI timed out after 30s"], "efficiency"),
        (["contains"], ["Timeout reading the reply"], "efficiency"),
        (["contains", "pytest"], ["", "exit 1"], "execution"),
    ],
)
def test_failed_category_as_the_original_inferred_it(
    judges: list[str], errors: list[str], expected: str
) -> None:
    tasks = {
        f"t{i}": Task(id=f"t{i}", prompt="p", judge={"type": judge})
        for i, judge in enumerate(judges)
    }
    failed = [{"task_id": f"t{i}", "error": error} for i, error in enumerate(errors)]
    assert failed_category(failed, tasks) == expected


@pytest.mark.parametrize("entry", ["script", "run"])
def test_a_low_scored_candidate_is_skipped_before_its_content_is_read(
    tmp_path: Path, entry: str
) -> None:
    """The original skips a candidate under --eval-threshold before anything else: content
    that is not a skill (no frontmatter) is never parsed, the artifact says `skipped`, exit 0."""
    skill = write_skill(tmp_path / "skill")
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    ranking = tmp_path / "r.json"
    entries = [{"id": "low", "score": 0.4, "skill_content": "just prose, no frontmatter\n"}]
    ranking.write_text(
        json.dumps({"run_id": "r", "target": {"path": str(skill)}, "scored_candidates": entries}),
        encoding="utf-8",
    )
    flags = ["--input", str(ranking), "--candidate-id", "low", "--task-suite", str(suite)]
    flags += ["--state-root", str(tmp_path / "state"), "--eval-threshold", "1.0", "--mock"]
    if entry == "script":
        done = run_script(*flags)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        code, out, err = run_cli("run", *flags, "-q")
    assert code == 0, err
    assert "Traceback" not in err
    artifact = read_json(out.strip())
    assert artifact["evaluation"]["verdict"] == "skipped"
    assert artifact["evaluation"]["reason"] == "candidate score 0.4 < eval threshold 1"
    assert artifact["candidate_score"] == 0.4
    assert artifact["usage"]["candidate"]["attempts"] == 0
    assert not list((tmp_path / "state" / "skills").glob("candidate-*"))  # nothing was built
