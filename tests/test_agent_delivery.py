"""How the skill reaches an OpenCode or Codex attempt (executors/agents/delivery.py), without
the CLIs: each mode's files in the workspace and prompt, the context document shared with
Claude Code's CLAUDE.md (skills/context.py), the refusals, and everything planted taken out
again. The CLIs reading what is planted: tests/test_agent_executors.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.core.model import Skill
from skill_eval.executors.agents.codex import CodexExecutor
from skill_eval.executors.agents.delivery import (
    clear,
    deliver,
    delivery_problem,
    host_problem,
    planted,
)
from skill_eval.executors.agents.opencode import OpenCodeExecutor
from skill_eval.skills.context import plan_context
from skill_eval.skills.load import load_skill


def skill(tmp_path: Path) -> Skill:
    folder = tmp_path / "skill" / "notes"
    (folder / "reference").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text("---\nname: notes\ndescription: D\n---\nBODY-1\n")
    (folder / "reference" / "style.md").write_text("STYLE\n")
    return load_skill(folder)


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("executor", [OpenCodeExecutor, CodexExecutor])
def test_installed_puts_the_folder_where_the_agent_looks_and_clear_takes_it_out(
    tmp_path: Path, executor: type[OpenCodeExecutor | CodexExecutor]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.csv").write_text("a\n")
    notes = skill(tmp_path)
    assert delivery_problem(notes, "installed", ws, executor.skills_dir) is None
    done = deliver(notes, "Do it.", "installed", ws, executor.skills_dir)
    assert (done.prompt, done.system) == ("Do it.", None)
    where = f"{executor.skills_dir}/notes"
    assert tree(ws) == sorted(["data.csv", f"{where}/SKILL.md", f"{where}/reference/style.md"])
    clear(ws, planted(notes, "installed", executor.skills_dir))
    assert tree(ws) == ["data.csv"] and sorted(p.name for p in ws.iterdir()) == ["data.csv"]


def test_context_writes_the_document_claude_codes_claude_md_gets_into_agents_md(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    notes = skill(tmp_path)
    done = deliver(notes, "Do it.", "context", ws, ".agents/skills")
    assert (done.prompt, done.system) == ("Do it.", None)
    assert (ws / "AGENTS.md").read_text() == plan_context(notes).document
    files = ["AGENTS.md", ".skill-eval/notes/SKILL.md", ".skill-eval/notes/reference/style.md"]
    assert tree(ws) == sorted(files)
    assert "`.skill-eval/notes/reference/style.md`" in (ws / "AGENTS.md").read_text()
    clear(ws, planted(notes, "context", ".agents/skills"))
    assert list(ws.iterdir()) == []


@pytest.mark.parametrize("found", ["AGENTS.md", "sub/AGENTS.md", "deep/er/AGENTS.override.md"])
def test_context_refuses_a_task_whose_files_hold_another_agents_md(
    tmp_path: Path, found: str
) -> None:
    ws = tmp_path / "ws"
    (ws / found).parent.mkdir(parents=True, exist_ok=True)
    (ws / found).write_text("the task's own\n")
    problem = delivery_problem(skill(tmp_path), "context", ws, ".agents/skills")
    assert problem is not None and found.split("/")[-1] in problem
    assert (ws / found).read_text() == "the task's own\n"  # nothing overwritten
    assert not (ws / ".skill-eval").exists()


def test_installed_refuses_a_task_that_brings_the_agents_skill_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".opencode").mkdir(parents=True)
    problem = delivery_problem(skill(tmp_path), "installed", ws, ".opencode/skills")
    assert problem is not None and "already holds .opencode" in problem


def test_system_and_prepend_send_the_text_and_plant_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    system = deliver(skill(tmp_path), "Do it.", "system", ws, ".agents/skills")
    assert system.system is not None and "BODY-1" in system.system and system.prompt == "Do it."
    prepend = deliver(skill(tmp_path), "Do it.", "prepend", ws, ".agents/skills")
    assert prepend.system is None and "BODY-1" in prepend.prompt and "Do it." in prepend.prompt
    assert list(ws.iterdir()) == []
    for mode in ("system", "prepend"):
        assert planted(skill(tmp_path), mode, ".agents/skills") == ()
        assert delivery_problem(skill(tmp_path), mode, None, ".agents/skills") is None


@pytest.mark.parametrize("rel", ["AGENTS.md", ".opencode", ".agents/skills", "opencode.json"])
def test_unjailed_runs_name_what_a_folder_above_would_load(tmp_path: Path, rel: str) -> None:
    temp = tmp_path / "a" / "b"
    temp.mkdir(parents=True)
    assert host_problem(temp) is None
    (tmp_path / "a" / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "a" / rel).write_text("x")
    problem = host_problem(temp)
    assert problem is not None and problem.startswith(f"{tmp_path / 'a' / rel} exists")
