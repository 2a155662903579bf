"""Observers: non-gating judges recorded per attempt and summarised per arm (issue 13)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from skill_eval.core.model import Attempt, Task
from skill_eval.engine.artifact import validate
from skill_eval.errors import SuiteError
from skill_eval.inputs.suite import load_suite
from skill_eval.judges import JudgeContext, observers
from tests.helpers import REPO, read_json, run_cli

DEMO = REPO / "task_suites" / "demo"
FAILING = {"name": "never", "type": "contains", "expected": ["no output says this"]}


def demo_with(
    tmp_path: Path,
    suite_observers: list[Any] | None,
    task_observers: dict[str, list[Any]] | None = None,
) -> Path:
    """A copy of the demo suite with these observers added."""
    data = yaml.safe_load((DEMO / "task_suite.yaml").read_text(encoding="utf-8"))
    if suite_observers is not None:
        data["observers"] = suite_observers
    for task in data["tasks"]:
        if task_observers and task["id"] in task_observers:
            task["observers"] = task_observers[task["id"]]
    folder = tmp_path / "suite"
    folder.mkdir(parents=True)
    shutil.copy(DEMO / "mock_outputs.yaml", folder / "mock_outputs.yaml")
    (folder / "task_suite.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def run(tmp_path: Path, suite: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(REPO / "fixtures" / "demo-skill-improved"),
        "--mock",
        "--mock-outputs",
        str(suite / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "state"),
        "--policy",
        "delta",
        "-q",
        *extra,
    )
    assert code == 0, err
    data = read_json(out.strip())
    validate(data)
    return data  # type: ignore[no-any-return]


def attempts_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        a
        for key in ("candidate_results", "baseline_results")
        for r in data[key]
        for a in r["attempts"]
    ]


def test_a_failing_observer_leaves_every_status_and_the_verdict_unchanged(tmp_path: Path) -> None:
    plain = run(tmp_path / "a", demo_with(tmp_path / "a", None))
    watched = run(
        tmp_path / "b",
        demo_with(
            tmp_path / "b",
            [
                FAILING,
                {"type": "latency", "budget_seconds": 0},
                {"type": "cost"},
                {"type": "length", "unit": "words"},
            ],
        ),
    )
    assert watched["evaluation"]["verdict"] == plain["evaluation"]["verdict"]
    assert watched["evaluation"]["delta"] == plain["evaluation"]["delta"]
    assert [a["status"] for a in attempts_of(watched)] == [a["status"] for a in attempts_of(plain)]
    assert "observers" not in plain and all("observations" not in a for a in attempts_of(plain))
    for attempt in attempts_of(watched):
        seen = attempt["observations"]
        assert seen["never"]["passed"] is False and seen["never"]["value"] == 0.0
        assert seen["latency"]["unit"] == "s" and seen["latency"]["budget"] == 0
        assert seen["length"]["value"] == len(attempt["output"].split())
        assert seen["cost"] == {"type": "cost", "value": 0.0, "unit": "USD"}
    summary = watched["observers"]["candidate"]
    assert summary["never"]["failed"] == summary["never"]["observed"] == 5
    assert summary["length"]["mean"] > 0 and summary["cost"]["errors"] == 0


def test_a_crashing_observer_records_its_own_error_and_nothing_else(tmp_path: Path) -> None:
    task = Task(
        "t",
        "p",
        {"type": "contains", "expected": ["x"]},
        observers=({"type": "latency"}, {"type": "length", "file": "out.md"}, {"type": "cost"}),
    )
    attempt = Attempt(
        "candidate",
        "t",
        0,
        "passed",
        "x",
        None,
        None,
        duration_ms=0,
        meta={"latency_ms": "not a number"},
    )
    seen = observers.observe(task, attempt, JudgeContext(suite_dir=tmp_path))
    assert seen["latency"]["error"].startswith("observer crashed: ValueError")
    assert seen["length"]["error"] == "the attempt wrote no file 'out.md'"
    assert seen["cost"] == {"type": "cost", "value": 0.0, "unit": "USD"}
    # end to end: an observer whose judge crashes leaves the attempts as they were
    data = run(
        tmp_path,
        demo_with(
            tmp_path,
            [
                {"type": "length", "file": "nowhere.md"},
                {"name": "boom", "type": "python", "callable": "math:sqrt"},
            ],
        ),
    )
    for attempt_data in attempts_of(data):
        assert attempt_data["error"] is None and attempt_data["status"] != "error"
        assert attempt_data["observations"]["boom"]["error"]
        assert attempt_data["observations"]["length"]["value"] is None
    assert data["observers"]["baseline"]["boom"]["errors"] == 5
    assert data["errors"] == []


def test_targeting_by_category_id_pattern_and_kind(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("x")
    text = {
        "id": "fix-1",
        "prompt": "p",
        "judge": {"type": "contains", "expected": ["a"]},
        "category": "docs",
    }
    other = {
        "id": "write-2",
        "prompt": "p",
        "judge": {"type": "contains", "expected": ["a"]},
        "category": "code",
        "observers": [{"type": "latency", "budget_seconds": 9}],
    }
    agent = {
        "id": "fix-3",
        "prompt": "p",
        "judge": {"type": "file-exists", "paths": ["a"]},
        "files": ["in.txt"],
    }
    path = tmp_path / "task_suite.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "skill_id": "s",
                "version": "1.0",
                "observers": [
                    {"type": "latency"},
                    {"name": "docs-only", "type": "cost", "target": {"category": ["docs"]}},
                    {"name": "fixes", "type": "length", "target": {"id": "fix-*"}},
                    {"name": "agents", "type": "consistency", "target": {"kind": "agent"}},
                    {
                        "name": "text-fixes",
                        "type": "cost",
                        "target": {"kind": "text", "id": "fix-*"},
                    },
                ],
                "tasks": [text, other, agent],
            }
        )
    )
    tasks = {t.id: [observers.name_of(s) for s in t.observers] for t in load_suite(path).tasks}
    assert tasks == {
        "fix-1": ["latency", "docs-only", "fixes", "text-fixes"],
        "write-2": ["latency"],
        "fix-3": ["latency", "fixes", "agents"],
    }
    # the task's own latency replaces the suite's
    assert load_suite(path).task("write-2").observers[0]["budget_seconds"] == 9


def test_consistency_over_three_samples_compares_each_with_the_earlier_ones() -> None:
    def attempt(index: int, output: str) -> Attempt:
        return Attempt("candidate", "t", index, "passed", output, None, None, 1)

    found = observers.consistency(
        [attempt(2, "x y z"), attempt(0, "a b c d"), attempt(1, "a b c d")]
    )
    assert found["attempts"] == {"0": None, "1": 1.0, "2": 0.0}
    assert found["value"] == 0.5
    task = Task("t", "p", {}, observers=({"type": "consistency"},))
    summary = observers.summarise([task], [attempt(0, "a b"), attempt(1, "a c"), attempt(2, "a b")])
    assert summary is not None
    got = summary["candidate"]["consistency"]
    assert got["tasks"]["t"]["attempts"] == {"0": None, "1": 0.5, "2": 0.75}
    assert got["mean"] == 0.625 and got["observed"] == 1


def test_consistency_compares_whole_stored_outputs_not_their_previews(tmp_path: Path) -> None:
    from skill_eval.core.blobs import BlobStore
    from skill_eval.engine.attempt_store import store_attempt

    ends = "same start " * 50, " same end" * 50
    outputs = [
        ends[0] + " ".join(f"alpha{i}" for i in range(400)) + ends[1],
        ends[0] + " ".join(f"beta{i}" for i in range(400)) + ends[1],
    ]
    stored = [
        store_attempt(
            Attempt("candidate", "t", i, "passed", text, None, None, 1), BlobStore(tmp_path), 1000
        )
        for i, text in enumerate(outputs)
    ]
    assert all(a.output_ref and a.output_ref.blob for a in stored)  # previews in the record
    found = observers.consistency(stored)["attempts"]["1"]
    assert found == round(observers.similarity(*outputs), 4) and found < 0.5


def test_consistency_end_to_end_with_samples(tmp_path: Path) -> None:
    data = run(tmp_path, demo_with(tmp_path, [{"type": "consistency"}]), "--samples", "3")
    summary = data["observers"]["candidate"]["consistency"]
    assert summary["mean"] == 1.0  # the mock answers each sample alike
    assert all(t["attempts"] == {"0": None, "1": 1.0, "2": 1.0} for t in summary["tasks"].values())


@pytest.mark.parametrize(
    ("observer", "message"),
    [
        ({"type": "length", "unit": "pages"}, "observers[0].unit: must be one of chars, words"),
        ({"type": "latency", "target": {"kind": "robot"}}, "observers[0].target.kind: must be"),
        ({"type": "latency", "budget_usd": 1}, "observers[0].budget_usd: is not a field of a"),
        ({"type": "no-such-judge"}, "observers[0].type: unknown"),
        ({"name": "x"}, "observers[0].type: is required"),
    ],
)
def test_bad_observers_are_reported_with_file_line_and_field(
    tmp_path: Path, observer: dict[str, Any], message: str
) -> None:
    path = tmp_path / "task_suite.yaml"
    path.write_text(
        'skill_id: s\nversion: "1.0"\ntasks:\n  - id: t\n    prompt: p\n'
        "    judge: {type: contains, expected: [a]}\n"
        f"    observers:\n      - {yaml.safe_dump(observer, default_flow_style=True)}"
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    shown = [str(p) for p in caught.value.problems]
    assert any(f"{path}:8:" in s and message.lower() in s.lower() for s in shown), shown


def test_duplicate_suite_observer_names_are_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "task_suite.yaml"
    path.write_text(
        'skill_id: s\nversion: "1.0"\nobservers:\n  - {type: cost}\n'
        "  - {type: cost}\ntasks:\n  - id: t\n    prompt: p\n"
        "    judge: {type: contains, expected: [a]}\n"
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:5: observers[1].name: duplicate observer name 'cost': observers[0] has it "
        "too; set name:"
    ]


def test_show_lists_readings_apart_from_the_judgement(tmp_path: Path) -> None:
    data = run(tmp_path, demo_with(tmp_path, [FAILING, {"type": "length", "unit": "words"}]))
    artifact = data["truth_anchor"]
    code, out, _ = run_cli("show", artifact, "--plain")
    assert code == 0
    assert "observers candidate: never mean 0 (5 failed) · length mean" in out
    assert "~ never 0.00 fail · length " in out
    code, out, _ = run_cli("show", artifact, "--plain", "--task", "breaking-change")
    assert code == 0
    assert "== baseline #0: failed, score 0.00 - observers (not gating)\nnever 0.00 fail" in out


def test_the_html_report_shows_observers_as_text(tmp_path: Path) -> None:
    from skill_eval.report.html import render_html

    data = run(
        tmp_path,
        demo_with(tmp_path, [{"name": "<script>x</script>", "type": "cost"}, {"type": "latency"}]),
    )
    page = render_html(data)
    assert "observers (recorded, never gating)" in page
    assert "observers candidate: &lt;script&gt;x&lt;/script&gt; mean 0" in page
    assert "<script>x</script>" not in page and "latency " in page
    assert page.count('class="muted observed"') == 10  # every attempt of both arms


def test_length_of_a_file_the_agent_wrote_is_read_before_the_workspace_goes(tmp_path: Path) -> None:
    from skill_eval.core.model import Arm, Skill
    from skill_eval.engine.jobs import WorkspaceSettings
    from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
    from skill_eval.executors.base import create_executor
    from skill_eval.judges import build_judge

    (tmp_path / "in.txt").write_text("x")
    task = Task(
        "t1",
        "p",
        {"type": "file-exists", "paths": ["report.md"]},
        files=("in.txt",),
        observers=(
            {"type": "length", "unit": "lines", "file": "report.md"},
            {"name": "has-notes", "type": "file-exists", "paths": ["notes.md"]},
        ),
    )
    executor = create_executor(
        "mock", {"mock_outputs": {"t1": {"text": "done", "files": {"report.md": "# R\na\nb\n"}}}}
    )
    runner = Runner(
        executor,
        {"t1": build_judge(task.judge)},
        JudgeContext(suite_dir=tmp_path),
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(sleep=lambda s: None, workspaces=WorkspaceSettings(parent=tmp_path)),
    )
    [attempt] = runner.run(plan_jobs([Arm("candidate", Skill("s", "s"), "c")], [task], 1))
    assert attempt.status == "passed" and attempt.error is None
    assert attempt.observations["length"] == {"type": "length", "value": 3, "unit": "lines"}
    assert attempt.observations["has-notes"]["passed"] is False
    assert Attempt.from_dict(attempt.to_dict()).observations == attempt.observations
