"""The `context` delivery (skills/context.py) and Claude Code's context mode
(executors/claude/context.py): the CLAUDE.md skill-eval writes (the heading, SKILL.md as it is,
an index of the folder's other files copied beside it), that file the only CLAUDE.md the real
CLI loads, in its jail and without one, and what is refused: a task whose files bring another
CLAUDE.md, and an unjailed attempt with one in a folder above it. The real-CLI tests skip
without the CLI or bubblewrap."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from skill_eval.core.model import ExecutionRequest, Skill, Task
from skill_eval.core.workspace import AttemptWorkspace
from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.context import host_problem
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.skills.context import (
    CONTEXT_DIR,
    MAX_INDEXED,
    context_problem,
    plan_context,
    remove_context,
    write_context,
)
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import jail_missing

CONFIGURED_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli()
needs_cli = pytest.mark.skipif(
    CONFIGURED_CLAUDE is None or jail_missing() is not None,
    reason=str(jail_missing() or "claude-agent-sdk not installed: pip install -e '.[agent]'"),
)
SKILL_MD = "---\nname: demo\ndescription: DEMO-DESC\n---\n# Demo\nDEMO-BODY: see reference.md\n"


def folder_skill(root: Path, extra: int = 1) -> Skill:
    folder = root / "skills" / "demo"
    (folder / "docs").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / "reference.md").write_text("REFERENCE-7f3a\n", encoding="utf-8")
    for i in range(extra - 1):
        (folder / "docs" / f"page{i:03}.md").write_text(f"page {i}\n", encoding="utf-8")
    return Skill("demo", SKILL_MD, folder)


# -- the context file (pure, and on disk) -------------------------------------------------------


def test_the_context_file_holds_the_skill_as_written_and_an_index(tmp_path: Path) -> None:
    plan = plan_context(folder_skill(tmp_path))
    assert plan.document.startswith("# Skill: demo\n\n" + SKILL_MD)
    assert plan.files == (f"{CONTEXT_DIR}/demo/reference.md",)
    assert f"- `{CONTEXT_DIR}/demo/reference.md`" in plan.document
    alone = plan_context(Skill("demo", SKILL_MD))  # a SKILL.md file alone: no index
    assert alone.document == "# Skill: demo\n\n" + SKILL_MD and alone.files == ()


def test_a_large_folders_index_is_cut_and_says_so(tmp_path: Path) -> None:
    plan = plan_context(folder_skill(tmp_path, extra=MAX_INDEXED + 5))
    assert len(plan.files) == MAX_INDEXED + 5
    assert plan.document.count("\n- `") == MAX_INDEXED
    assert "... and 5 more files in `.skill-eval/demo/`" in plan.document


def test_written_context_is_removed_whole_and_a_workspace_with_its_own_is_refused(
    tmp_path: Path,
) -> None:
    skill = folder_skill(tmp_path)
    ws = tmp_path / "ws"
    (ws / "inputs" / "deep").mkdir(parents=True)
    assert context_problem(ws, "CLAUDE.md", ("CLAUDE.md", ".claude")) is None
    write_context(skill, ws, "CLAUDE.md")
    assert (ws / CONTEXT_DIR / "demo" / "reference.md").read_text() == "REFERENCE-7f3a\n"
    assert "already holds CLAUDE.md" in str(context_problem(ws, "CLAUDE.md"))
    with pytest.raises(FileExistsError):
        write_context(skill, ws, "CLAUDE.md")  # never over (or through) an existing file
    remove_context(ws, "CLAUDE.md")
    assert sorted(p.name for p in ws.iterdir()) == ["inputs"]
    (ws / "inputs" / "deep" / "CLAUDE.local.md").write_text("mine")
    problem = context_problem(ws, "CLAUDE.md", ("CLAUDE.md", "CLAUDE.local.md", ".claude"))
    assert problem is not None and "inputs/deep/CLAUDE.local.md" in problem


def test_an_unjailed_attempt_is_refused_under_a_folder_holding_a_claude_md(
    tmp_path: Path,
) -> None:
    temp = tmp_path / "a" / "b"
    temp.mkdir(parents=True)
    assert host_problem(temp) is None or "/etc/claude-code" in str(host_problem(temp))
    (tmp_path / "a" / ".claude" / "rules").mkdir(parents=True)
    assert f"{tmp_path / 'a' / '.claude' / 'rules'} exists" in str(host_problem(temp))


# -- the real CLI ---------------------------------------------------------------------------------


def request(skill: Skill, workspace: Path, prompt: str = "do it") -> ExecutionRequest:
    task = Task(
        id="t1",
        prompt=prompt,
        judge={"type": "contains", "expected": ["x"]},
        allowed_tools=("Read",),
    )
    return ExecutionRequest(task, "context", 0, skill, 60.0, workspace)


def executor(server: FakeAnthropic, **kw: object) -> ClaudeCodeExecutor:
    return ClaudeCodeExecutor(
        ClaudeCliConfig(
            claude_bin=CONFIGURED_CLAUDE,
            base_url=server.base_url,
            env={"ANTHROPIC_API_KEY": "sk-test"},
            skill_mode="context",
            **kw,  # type: ignore[arg-type]
        )
    )


@needs_cli
def test_the_agent_reads_the_skills_files_through_the_index(tmp_path: Path) -> None:
    rules = [
        {"tool_result": {"name": "Read", "contains": "REFERENCE"}, "text": "ref: {tool_result}"},
        {
            "turn": 1,
            "messages_contain": ["Contents of /workspace/CLAUDE.md", "DEMO-BODY"],
            "tool_use": {
                "name": "Read",
                "input": {"file_path": "{cwd}/.skill-eval/demo/reference.md"},
            },
        },
    ]
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(rules=rules, default="PONG") as server:
        result = executor(server).run(request(folder_skill(tmp_path), ws.path))
        (first, _) = server.requests_to("/v1/messages")
    assert result.failure is None, result.failure.message
    (read,) = result.transcript
    assert read.ok and "REFERENCE-7f3a" in read.output and "REFERENCE-7f3a" in result.output
    assert first.text.count("Contents of ") == 1  # one context file, ours
    assert list(ws.path.iterdir()) == []  # what skill-eval wrote went again
    assert result.meta["isolation"]["jail"] == "bubblewrap"


@needs_cli
def test_a_task_that_brings_its_own_claude_md_is_refused_before_the_agent_starts(
    tmp_path: Path,
) -> None:
    ws = AttemptWorkspace.create(tmp_path)
    (ws.path / "inputs").mkdir()
    (ws.path / "inputs" / "CLAUDE.md").write_text("TASK-OWN-CONTEXT")
    with FakeAnthropic(default="PONG") as server:
        result = executor(server).run(request(folder_skill(tmp_path), ws.path))
        assert server.requests_to("/v1/messages") == []
    assert (
        result.failure.stops_run
        and "the task's files hold inputs/CLAUDE.md" in result.failure.message
    )
    assert not (ws.path / "CLAUDE.md").exists()


@needs_cli
def test_without_the_jail_a_claude_md_above_the_workspace_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(default="PONG") as server:
        unjailed = executor(server, jail="none")
        result = unjailed.run(request(folder_skill(tmp_path), ws.path))
        assert result.failure is None, result.failure.message
        (sent,) = server.requests_to("/v1/messages")
        assert sent.text.count("Contents of ") == 1 and "# Skill: demo" in sent.text
        (tmp_path / "CLAUDE.md").write_text("HOST-CONTEXT")
        refused = unjailed.run(request(folder_skill(tmp_path / "again"), ws.path))
    assert (
        refused.failure.stops_run and f"{tmp_path / 'CLAUDE.md'} exists" in refused.failure.message
    )
