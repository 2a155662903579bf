"""Runner-owned attempt workspaces: made before the executor runs, snapshotted, judged, then
deleted (or kept); the claude-cli executor seeds its jail's workspace from them and copies the
result back, instead of a directory of its own."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core import workspace as workspace_mod
from skill_eval.core.model import Arm, ExecutionRequest, ExecutionResult, JudgeResult, Skill, Task
from skill_eval.core.work import Work
from skill_eval.core.workspace import AttemptWorkspace, KeepPolicy
from skill_eval.engine.jobs import WorkspaceSettings
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.executors.base import ExecutorBase, ExecutorConfig, create_executor
from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.judges.base import JudgeContext, build_judge
from tests.fakes.fake_claude import install
from tests.helpers import jail_missing, journal_records

needs_jail = pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the workspace itself -----------------------------------------------------------------------


def test_workspace_is_private_and_snapshot_lists_only_changes(tmp_path: Path) -> None:
    source = tmp_path / "given.txt"
    source.write_text("given")
    ws = AttemptWorkspace.create(tmp_path)
    assert stat.S_IMODE(ws.root.stat().st_mode) == 0o700 and ws.path.is_dir()
    assert ws.snapshot() is None  # nothing produced yet: a text attempt has no files
    ws.copy_in({"in/given.txt": source, "in/edited.txt": source})
    assert ws.snapshot() is None  # what was copied in is not the attempt's work
    (ws.path / "in" / "edited.txt").write_text("changed")
    (ws.path / "new.md").write_bytes(b"new")
    (ws.path / ".claude" / "skills").mkdir(parents=True)  # harness plumbing, not work
    (ws.path / ".claude" / "skills" / "SKILL.md").write_text("x")
    os.symlink("/etc/passwd", ws.path / "link")  # never followed out of the workspace
    snapshot = ws.snapshot()
    assert snapshot is not None
    assert [(f.path, f.size, f.sha256) for f in snapshot.files] == [
        ("in/edited.txt", 7, sha(b"changed")),
        ("new.md", 3, sha(b"new")),
    ]
    assert snapshot.get("new.md") is not None and snapshot.get("new.md").read_text() == "new"
    assert ws.finish(keep=False) is None and not ws.root.exists()


def test_copy_in_cannot_escape(tmp_path: Path) -> None:
    ws = AttemptWorkspace.create(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="outside the workspace"):
        ws.copy_in({"../escape": tmp_path / "f"})


def test_snapshot_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace_mod, "MAX_FILES", 2)
    ws = AttemptWorkspace.create(tmp_path)
    for name in "abc":
        (ws.path / name).write_text(name)
    snapshot = ws.snapshot()
    assert snapshot is not None and len(snapshot.files) == 2 and snapshot.truncated
    assert ws.finish(keep=True) == ws.path and ws.path.exists()


# -- the runner owns it -------------------------------------------------------------------------


class FileWriter(ExecutorBase):
    """Writes `answer.txt` in the request's workspace and reports call metadata."""

    name = "file-writer"
    uses_workspace = True

    def __init__(self) -> None:
        self.config = ExecutorConfig()
        self.workspaces: list[Path] = []

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        assert request.workspace is not None
        self.workspaces.append(request.workspace)
        (request.workspace / "answer.txt").write_text(f"answer to {request.task.id}")
        return ExecutionResult(
            output="done", meta={"latency_ms": 7, "stop_reason": "end_turn", "model": "fake-1"}
        )


class ReadsFiles:
    """Passes when the attempt's answer.txt holds the expected answer, read while judging."""

    def __init__(self) -> None:
        self.seen: list[Work] = []

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        self.seen.append(work)
        found = work.files.get("answer.txt") if work.files else None
        ok = found is not None and found.read_text() == f"answer to {task.id}"
        return JudgeResult(ok, float(ok), "read answer.txt")


TASK = Task(id="t1", prompt="p", judge={"type": "contains", "expected": ["x"]})
ARM = Arm("candidate", Skill("s", "skill"), "candidate")


def runner_for(tmp_path: Path, executor: Any, judge: Any, keep: KeepPolicy = "none") -> Runner:
    return Runner(
        executor,
        {"t1": judge},
        JudgeContext(suite_dir=tmp_path),
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(sleep=lambda s: None, workspaces=WorkspaceSettings(keep, parent=tmp_path)),
    )


def test_runner_judges_the_files_then_deletes_the_workspace(tmp_path: Path) -> None:
    executor, judge = FileWriter(), ReadsFiles()
    [attempt] = runner_for(tmp_path, executor, judge).run(plan_jobs([ARM], [TASK], 1))
    assert attempt.status == "passed"  # the judge read the file before it was deleted
    assert not executor.workspaces[0].exists() and not executor.workspaces[0].parent.exists()
    assert attempt.files is not None and attempt.files.root is None  # hashes stay, not content
    assert [(f.path, f.sha256) for f in attempt.files.files] == [
        ("answer.txt", sha(b"answer to t1"))
    ]
    assert attempt.meta == {"latency_ms": 7, "stop_reason": "end_turn", "model": "fake-1"}
    [record] = journal_records(tmp_path / "attempts.jsonl")
    assert record["meta"]["stop_reason"] == "end_turn" and "root" not in record["files"]


def test_kept_workspaces_survive_judging(tmp_path: Path) -> None:
    executor = FileWriter()
    [attempt] = runner_for(tmp_path, executor, ReadsFiles(), keep="all").run(
        plan_jobs([ARM], [TASK], 1)
    )
    assert executor.workspaces[0].exists()
    assert attempt.files is not None and attempt.files.root == executor.workspaces[0]
    back = Journal(tmp_path / "attempts.jsonl").read()[0]  # what rejudge would read
    assert back.files is not None and back.files.files[0].read_text() == "answer to t1"


def test_text_executor_gives_text_only_work_and_gets_no_directory(tmp_path: Path) -> None:
    class Recording(FileWriter):
        uses_workspace = False  # a text executor: no directory per attempt to make and delete

        def run(self, request: ExecutionRequest) -> ExecutionResult:
            self.workspaces.append(request.workspace)  # type: ignore[arg-type]
            return ExecutionResult(output="x")

    executor = Recording()
    [attempt] = runner_for(tmp_path, executor, build_judge(TASK.judge)).run(
        plan_jobs([ARM], [TASK], 1)
    )
    assert attempt.status == "passed" and attempt.load_work() == Work("x")
    assert executor.workspaces == [None]
    mock = create_executor("mock", {"mock_outputs": {"candidate": {"t1": "x"}}})
    assert getattr(mock, "uses_workspace", False) is False


# -- claude-cli works in the runner's workspace -------------------------------------------------


@pytest.fixture
def fake_bin(tmp_path: Path) -> str:
    return install(tmp_path / "bin")


@needs_jail
@pytest.mark.parametrize("mode", ["system", "installed"])
def test_claude_cli_runs_in_the_runners_workspace(tmp_path: Path, fake_bin: str, mode: str) -> None:
    executor = create_executor(
        "claude-cli",
        ClaudeCliConfig(
            claude_bin=fake_bin,
            skill_mode=mode,  # type: ignore[arg-type]
            env={"ANTHROPIC_API_KEY": "k"},
        ),
    )
    judge = build_judge({"type": "python", "callable": "ws_judge_mod:wrote"})
    module = tmp_path / "mods" / "ws_judge_mod.py"
    module.parent.mkdir()
    module.write_text(
        textwrap.dedent("""
        def wrote(output, task, work=None):
            found = work.files.get("notes/result.md") if work and work.files else None
            return found is not None and found.read_text() == "written by fake claude\\n"
    """)
    )
    sys.path.insert(0, str(module.parent))
    try:
        task = Task(id="t1", prompt="WRITE_FILE please", judge={})
        [attempt] = runner_for(tmp_path, executor, judge).run(plan_jobs([ARM], [task], 1))
    finally:
        sys.path.remove(str(module.parent))
        sys.modules.pop("ws_judge_mod", None)
    assert attempt.status == "passed", attempt.judge
    # the runner's workspace, seeded into the jail and copied back: deleted once judged
    assert not any(p.name.startswith("skill-eval-attempt-") for p in tmp_path.iterdir())
    assert [f.path for f in attempt.files.files] == ["notes/result.md"]  # skill install is not
    assert attempt.meta["session_id"] == "fake-session" and "latency_ms" in attempt.meta


@needs_jail
def test_claude_cli_takes_back_what_it_put_in_the_workspace(tmp_path: Path, fake_bin: str) -> None:
    executor = create_executor(
        "claude-cli",
        ClaudeCliConfig(
            claude_bin=fake_bin, skill_mode="installed", env={"ANTHROPIC_API_KEY": "k"}
        ),
    )
    ws = AttemptWorkspace.create(tmp_path)
    (ws.path / "given.txt").write_text("a task file")
    result = executor.run(
        ExecutionRequest(
            task=Task(id="t1", prompt="WRITE_FILE", judge={}),
            arm="candidate",
            attempt=0,
            skill=Skill("s", "x"),
            timeout_seconds=60,
            workspace=ws.path,
        )
    )
    assert result.failure is None
    assert sorted(p.name for p in ws.root.iterdir()) == ["work"]  # no config dir, no creds
    # the task file went in and came back; the skill install is gone
    assert sorted(p.name for p in ws.path.iterdir()) == ["given.txt", "notes"]
    assert (ws.path / "given.txt").read_text() == "a task file"


REAL_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli() or ""
needs_cli = pytest.mark.skipif(
    not (os.path.isfile(REAL_CLAUDE) and os.access(REAL_CLAUDE, os.X_OK))
    or jail_missing() is not None,
    reason=str(
        jail_missing()
        or "Claude Code CLI not installed: pip install -e '.[agent]' or set SKILL_EVAL_CLAUDE_BIN"
    ),
)


@needs_cli
def test_real_cli_writes_into_the_runners_workspace_and_nothing_leaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes.anthropic_server import FakeAnthropic

    project = tmp_path / "project"  # workspaces live below a project's skills and CLAUDE.md
    (project / ".claude" / "skills" / "leak").mkdir(parents=True)
    (project / ".claude" / "skills" / "leak" / "SKILL.md").write_text(
        "---\nname: leak\ndescription: LEAK-PROJECT-SKILL\n---\nLEAK\n"
    )
    monkeypatch.chdir(project)
    with FakeAnthropic(default="DONE") as server:
        server.set_rules(
            [
                {
                    "has_tools": True,
                    "messages_not_contain": "WROTE-IT",
                    "tool_use": {
                        "name": "Bash",
                        "input": {"command": "echo WROTE-IT > out.txt; echo WROTE-IT"},
                    },
                }
            ]
        )
        executor = create_executor(
            "claude-cli",
            ClaudeCliConfig(
                claude_bin=REAL_CLAUDE,
                base_url=server.base_url,
                allowed_tools=("Bash",),
                env={"ANTHROPIC_API_KEY": "sk-test"},
            ),
        )
        judge = build_judge({"type": "contains", "expected": ["DONE"]})
        task = Task(id="t1", prompt="write out.txt", judge={})
        [attempt] = runner_for(project, executor, judge).run(plan_jobs([ARM], [task], 1))
        seen = "\n".join(
            r.text + json.dumps(r.json.get("tools", [])) for r in server.requests_to("/v1/messages")
        )
    assert attempt.status == "passed", attempt.error
    assert attempt.files is not None
    assert [(f.path, f.sha256) for f in attempt.files.files] == [("out.txt", sha(b"WROTE-IT\n"))]
    assert "LEAK-" not in seen
    assert not any(p.name.startswith("skill-eval-") for p in project.iterdir())
