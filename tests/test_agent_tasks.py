"""Agent tasks: the `files` / `allowed_tools` / `max_turns` format with file:line errors, the
mock executor's scripted work, executors that cannot act, kept workspaces, and the bundled
agent demo end to end through the CLI (rejudge included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from skill_eval.core.model import Arm, Skill, Task
from skill_eval.engine.jobs import WorkspaceSettings
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.errors import SuiteError, UsageError
from skill_eval.executors.base import create_executor
from skill_eval.executors.mock import load_mock_outputs
from skill_eval.inputs.suite import load_suite
from skill_eval.judges import JudgeContext, build_judge
from tests.helpers import REPO, journal_records, read_json, run_cli, write_outputs

DEMO = REPO / "task_suites" / "demo-agent"
JUDGE = {"type": "file-exists", "paths": ["report.md"]}


def suite_file(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "inputs").mkdir(exist_ok=True)
    (directory / "inputs" / "data.csv").write_text("a,b\n1,2\n")
    path = directory / "task_suite.yaml"
    path.write_text('skill_id: "s"\nversion: "1.0"\n' + text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return [str(p) for p in caught.value.problems]


TASK_HEAD = (
    "tasks:\n  - id: t1\n    prompt: p\n    judge: {type: file-exists, paths: [report.md]}\n"
)


def test_agent_fields_load_and_the_suite_default_applies(tmp_path: Path) -> None:
    path = suite_file(
        tmp_path,
        "allowed_tools: [Read, Write]\n"
        + TASK_HEAD
        + "    files: [inputs/data.csv, inputs]\n    max_turns: 5\n"
        "  - id: t2\n    prompt: p\n    judge: {type: contains, expected: [x]}\n"
        "    allowed_tools: [Read, Skill, Bash]\n",
    )
    t1, t2 = load_suite(path).tasks
    assert (t1.files, t1.allowed_tools, t1.max_turns) == (
        ("inputs/data.csv", "inputs"),
        ("Read", "Write"),
        5,
    )
    assert t2.allowed_tools == ("Read", "Skill", "Bash") and t2.files == ()
    assert t1.is_agent_task and t2.is_agent_task
    plain = load_suite(suite_file(tmp_path / "p", TASK_HEAD)).tasks[0]
    assert (plain.files, plain.allowed_tools, plain.max_turns, plain.is_agent_task) == (
        (),
        None,
        None,
        False,
    )


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "    files: [missing.csv]\n",
            "task_suite.yaml:7: tasks[0] (id \"t1\").files[0]: not found: 'missing.csv'",
        ),
        (
            "    files: [../outside.csv]\n",
            "task_suite.yaml:7: tasks[0] (id \"t1\").files[0]: must not contain '..': "
            "'../outside.csv'",
        ),
        (
            "    files: [/etc/passwd]\n",
            'task_suite.yaml:7: tasks[0] (id "t1").files[0]: must be a path relative to the suite '
            "folder, not absolute: '/etc/passwd'",
        ),
        (
            "    files: [link.csv]\n",
            'task_suite.yaml:7: tasks[0] (id "t1").files[0]: must stay inside the suite folder '
            "after resolving symlinks: 'link.csv' leaves it",
        ),
        (
            "    files: []\n",
            'task_suite.yaml:7: tasks[0] (id "t1").files: must be a non-empty list of paths '
            "relative to the suite folder",
        ),
        (
            "    allowed_tools: Read\n",
            'task_suite.yaml:7: tasks[0] (id "t1").allowed_tools: must be a list of distinct tool '
            "names such as [Read, Write, Skill]",
        ),
        (
            "    allowed_tools: [Read, 'rm -rf']\n",
            'task_suite.yaml:7: tasks[0] (id "t1").allowed_tools[1]: must be a tool name such as '
            "Read, Write or Skill",
        ),
        (
            "    max_turns: 0\n",
            'task_suite.yaml:7: tasks[0] (id "t1").max_turns: must be a whole number of turns from '
            "1 to 1000",
        ),
        ("    judge2: 1\n", "task_suite.yaml:7: tasks[0] (id \"t1\").judge2: unknown key 'judge2'"),
    ],
)
def test_bad_agent_fields_are_reported_with_file_and_line(
    tmp_path: Path, line: str, expected: str
) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("secret")
    path = suite_file(tmp_path / "suite", TASK_HEAD + line)
    (tmp_path / "suite" / "link.csv").symlink_to(outside)
    [problem] = problems(path)
    assert problem.startswith(str(path.parent)) and expected in problem, problem


def test_suite_level_allowed_tools_error_has_its_line(tmp_path: Path) -> None:
    [problem] = problems(suite_file(tmp_path, "allowed_tools: [1]\n" + TASK_HEAD))
    assert problem.endswith(
        "task_suite.yaml:3: allowed_tools[0]: must be a tool name such as Read, Write or Skill"
    )


def test_a_symlink_inside_a_files_folder_is_not_copied(tmp_path: Path) -> None:
    from skill_eval.core.task_files import expand_task_files

    path = suite_file(tmp_path / "s", TASK_HEAD + "    files: [inputs]\n")
    (tmp_path / "secret").write_text("secret")
    (tmp_path / "s" / "inputs" / "leak.csv").symlink_to(tmp_path / "secret")
    task = load_suite(path).tasks[0]
    assert list(expand_task_files(task.files, path.parent)) == ["inputs/data.csv"]


# -- the mock executor's scripted work ------------------------------------------------------------


@pytest.mark.parametrize(
    "entry, message",
    [
        (
            {"text": "x", "files": {"../escape.md": "x"}},
            "t1: files: '../escape.md' must not contain '..'",
        ),
        (
            {"files": {"/tmp/abs.md": "x"}},
            "t1: files: '/tmp/abs.md' must be a path relative to the workspace",
        ),
        (
            {"text": "x", "tool": []},
            "t1: unknown key 'tool'; allowed: files, text, tools, triggered",
        ),
        (
            {"tools": [{"input": {}}]},
            "t1: tools[0]: must be a mapping with a name (string) and an input (mapping)",
        ),
        (3, "t1: output must be a string or a mapping with text, files and tools"),
    ],
)
def test_bad_scripted_work_is_a_usage_error(tmp_path: Path, entry: Any, message: str) -> None:
    path = write_outputs(tmp_path / "m.yaml", {"candidate": {"t1": entry}})
    with pytest.raises(UsageError) as caught:
        load_mock_outputs(path)
    assert str(caught.value) == f"{path}: candidate.{message}"


def run_tasks(
    tmp_path: Path, tasks: list[Task], outputs: dict[str, Any], **workspaces: Any
) -> list[Any]:
    """Run `tasks` with the mock executor's `outputs`; `workspaces` are WorkspaceSettings'
    (made under tmp_path)."""
    executor = create_executor("mock", {"mock_outputs": outputs})
    arm = Arm("candidate", Skill("csv-report", "skill"), "candidate")
    judges = {t.id: build_judge(t.judge) for t in tasks}
    runner = Runner(
        executor,
        judges,
        JudgeContext(suite_dir=tmp_path),
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(
            sleep=lambda s: None, workspaces=WorkspaceSettings(parent=tmp_path, **workspaces)
        ),
    )
    return runner.run(plan_jobs([arm], tasks, 1))


def test_mock_writes_files_in_the_workspace_and_records_calls(tmp_path: Path) -> None:
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "data.csv").write_text("a\n1\n")
    task = Task(
        "t1",
        "p",
        {
            "type": "all",
            "judges": [
                JUDGE,
                {"type": "skill-used", "skill": "csv-report"},
                {"type": "file-exists", "paths": ["inputs/data.csv"]},
            ],
        },
        files=("inputs/data.csv",),
    )
    outputs = {
        "t1": {
            "text": "done",
            "files": {"report.md": "# R", "sub/x.txt": "x"},
            "tools": [{"name": "Skill", "input": {"skill": "csv-report"}}],
        }
    }
    [attempt] = run_tasks(tmp_path, [task], outputs)
    assert attempt.status == "passed", attempt.judge
    assert [f.path for f in attempt.files.files] == ["report.md", "sub/x.txt"]  # not the input
    assert attempt.transcript[0].name == "Skill" and attempt.output == "done"
    [record] = journal_records(tmp_path / "attempts.jsonl")
    assert record["transcript"][0]["input"] == {"skill": "csv-report"}


def test_scripted_files_for_a_text_task_are_an_error(tmp_path: Path) -> None:
    text_task = Task("t1", "p", {"type": "contains", "expected": ["x"]})
    [attempt] = run_tasks(tmp_path, [text_task], {"t1": {"files": {"a.md": "x"}}})
    assert attempt.status == "error" and "not an agent task" in attempt.error


def test_executor_that_cannot_act_refuses_an_agent_suite_before_running(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(DEMO),
        "--skill-path",
        str(DEMO / "skill" / "csv-report"),
        "--executor",
        "anthropic",
        "--state-root",
        str(tmp_path / "st"),
    )
    assert code != 0 and "Traceback" not in err
    assert (
        "task 'sales-report' is an agent task" in err
        and "'anthropic' executor cannot act" in err
        and "--executor claude-cli" in err
    )
    assert not (tmp_path / "st" / "runs").exists()  # nothing ran
    assert create_executor("mock", {}).can_act is True


# -- kept workspaces ------------------------------------------------------------------------------


def test_keep_failed_copies_only_failed_workspaces_under_the_keep_root(tmp_path: Path) -> None:
    tasks = [
        Task("good", "p", JUDGE, allowed_tools=("Write",)),
        Task("bad", "p", JUDGE, allowed_tools=()),
    ]
    outputs = {"good": {"files": {"report.md": "x"}}, "bad": {"files": {"other.md": "y"}}}
    attempts = {
        a.task_id: a
        for a in run_tasks(
            tmp_path,
            tasks,
            outputs,
            keep="failed",
            keep_root=tmp_path / "run" / "workspaces",
        )
    }
    kept = tmp_path / "run" / "workspaces" / "candidate" / "bad" / "0"
    assert (kept / "other.md").read_text() == "y"
    assert not (tmp_path / "run" / "workspaces" / "candidate" / "good").exists()
    assert attempts["bad"].files.root == kept and attempts["good"].files.root is None
    assert attempts["bad"].meta["workspace"] == {"kept": str(kept)}
    assert not list(tmp_path.glob("skill-eval-attempt-*"))  # every temp workspace deleted


def test_the_size_cap_leaves_files_out_with_a_note(tmp_path: Path) -> None:
    task = Task("t1", "p", JUDGE, allowed_tools=("Write",))
    outputs = {"t1": {"files": {"a.txt": "a" * 60, "b.txt": "b" * 60}}}
    [attempt] = run_tasks(
        tmp_path,
        [task],
        outputs,
        keep="all",
        keep_root=tmp_path / "ws",
        keep_max_bytes=100,
    )
    kept = tmp_path / "ws" / "candidate" / "t1" / "0"
    assert (kept / "a.txt").exists() and not (kept / "b.txt").exists()
    note = (tmp_path / "ws" / "candidate" / "t1" / "0.left-out.txt").read_text()
    assert "b.txt (60 bytes)" in note
    assert attempt.meta["workspace"]["left_out"] == ["b.txt (60 bytes)"]
    assert "1 file(s) left out" in attempt.meta["workspace"]["note"]


# -- the bundled agent demo, end to end -----------------------------------------------------------


def run_demo(tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(DEMO),
        "--skill-path",
        str(DEMO / "skill" / "csv-report"),
        "--mock",
        "--mock-outputs",
        str(DEMO / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "state"),
        "-q",
        *extra,
    )
    [run_dir] = (tmp_path / "state" / "runs").iterdir()
    return code, out + err, run_dir


def test_agent_demo_runs_end_to_end_with_the_mock(tmp_path: Path) -> None:
    code, text, run_dir = run_demo(tmp_path)
    assert code == 0, text
    [artifact] = (tmp_path / "state" / "evaluations").glob("*.json")
    data = read_json(artifact)
    assert data["evaluation"]["verdict"] == "pass"
    by = {(a["arm"], a["task_id"]): a for a in journal_records(run_dir / "attempts.jsonl")}
    assert all(by[("candidate", t.id)]["status"] == "passed" for t in load_suite(DEMO).tasks)
    assert [
        t for (arm, t), a in sorted(by.items()) if arm == "baseline" and a["status"] == "passed"
    ] == ["input-untouched"]
    assert "was not used" in by[("baseline", "uses-the-skill")]["judge"]["details"]
    assert by[("candidate", "uses-the-skill")]["transcript"][0] == {
        "name": "Skill",
        "input": {"skill": "csv-report"},
        "ok": True,
        "output": "",
    }
    # default --keep-workspaces failed: the baseline's failures are kept, the passes are not
    kept = run_dir / "workspaces"
    assert sorted(p.name for p in (kept / "baseline").iterdir()) == [
        "empty-csv",
        "sales-report",
        "sales-report-tested",
        "uses-the-skill",
    ]
    assert not (kept / "candidate").exists()
    assert (kept / "baseline" / "sales-report" / "0" / "summary.md").exists()
    assert (kept / "baseline" / "sales-report" / "0" / "inputs" / "sales.csv").exists()


def test_agent_demo_rejudges_from_kept_workspaces_after_a_move(tmp_path: Path) -> None:
    code, text, run_dir = run_demo(tmp_path, "--keep-workspaces", "all")
    assert code == 0, text
    moved = tmp_path / "moved-run"
    run_dir.rename(moved)  # the journal's recorded roots now point nowhere
    key = tmp_path / "state" / "journal.key"  # the moved run's journal is checked with it
    code, out, err = run_cli(
        "rejudge", str(moved), "--output", str(tmp_path / "re.json"), "--journal-key", str(key)
    )
    assert code == 0, out + err
    data = read_json(tmp_path / "re.json")
    assert data["evaluation"]["verdict"] == "pass"
    [rejudged] = moved.glob("rejudged-*.jsonl")
    statuses = {(r["arm"], r["task_id"]): r["status"] for r in journal_records(rejudged)}
    assert statuses[("candidate", "sales-report-tested")] == "passed"  # pytest on AI_WORKSPACE
    assert list(statuses.values()).count("passed") == 6


def test_keep_workspaces_none_keeps_nothing(tmp_path: Path) -> None:
    code, text, run_dir = run_demo(tmp_path, "--keep-workspaces", "none")
    assert code == 0, text
    assert not (run_dir / "workspaces").exists()


def test_demo_mock_outputs_cover_both_arms() -> None:
    data = yaml.safe_load((DEMO / "mock_outputs.yaml").read_text())
    ids = {t.id for t in load_suite(DEMO).tasks}
    assert set(data["candidate"]) == set(data["baseline"]) == ids
    assert 4 <= len(ids) <= 5


def test_a_bad_judge_file_option_is_reported_with_its_line(tmp_path: Path) -> None:
    path = suite_file(
        tmp_path,
        "tasks:\n  - id: t1\n    prompt: p\n    files: [inputs]\n"
        "    judge:\n      type: contains\n      expected: [x]\n"
        "      file: ../secret.md\n",
    )
    [problem] = problems(path)
    assert problem == (
        f'{path}:10: tasks[0] (id "t1").judge.file: must be a path or glob '
        "relative to the workspace (no leading /, no '..')"
    )


def test_a_changed_input_file_changes_the_baseline_cache_key(tmp_path: Path) -> None:
    from skill_eval.engine.cache import baseline_key
    from skill_eval.engine.fingerprint import ArmSkill, Inputs
    from skill_eval.plan.run_plan import Decision

    path = suite_file(tmp_path, TASK_HEAD + "    files: [inputs]\n")
    baseline = {"baseline": ArmSkill(None)}
    ingredients = Inputs(baseline, {"kind": "mock"}, "system", Decision(), "mock", "mock")
    before = baseline_key(load_suite(path), ingredients)
    (tmp_path / "inputs" / "data.csv").write_text("a,b\n9,9\n")
    assert baseline_key(load_suite(path), ingredients) != before
