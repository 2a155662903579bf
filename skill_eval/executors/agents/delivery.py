"""How the skill reaches an OpenCode or Codex attempt, by skill mode, and what skill-eval put
into the attempt's workspace for it (taken out again after the run, before the workspace is
snapshotted: the judges see only the agent's work).

- `installed`: the skill folder where the agent finds a project's skills (OpenCode
  `.opencode/skills/<name>/`, Codex `.agents/skills/<name>/`); the agent decides to load it.
- `context`: SKILL.md's text in the always-on context file `AGENTS.md` (both agents read it
  at the start of every run), the folder's other files under `.skill-eval/<name>/`, named
  there; nothing to decide.
- `system`: the text in the system prompt (OpenCode's `instructions`, Codex's
  `developer_instructions`); `prepend`: before the task in the prompt (base.compose_prompt).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ...core.execution import SkillMode
from ...core.model import Skill
from ...skills.install import install_skill, plan_install
from ..base import compose_prompt

CONTEXT_FILE = "AGENTS.md"
CONTEXT_FOLDER = ".skill-eval"


class DeliveryError(OSError):
    """The workspace already holds what the delivery must put there (a task's own files)."""


@dataclass(frozen=True)
class Delivery:
    """The prompt, the system text (system mode), and the top-level workspace entries
    skill-eval planted (removed by `clear`)."""

    prompt: str
    system: str | None = None
    planted: tuple[str, ...] = ()


def context_text(skill: Skill, others: list[str]) -> str:
    """AGENTS.md in context mode: SKILL.md as it is, then where its other files are."""
    text = skill.content.rstrip("\n") + "\n"
    if others:
        where = f"{CONTEXT_FOLDER}/{plan_install(skill).folder}"
        listed = "\n".join(f"- {where}/{rel}" for rel in others[:200])
        more = f"\n- ... and {len(others) - 200} more" if len(others) > 200 else ""
        text += f"\nThe files this refers to are in `{where}/`:\n{listed}{more}\n"
    return text


def deliver(
    skill: Skill | None, task_prompt: str, mode: SkillMode, workspace: Path | None, skills_dir: str
) -> Delivery:
    """Put the skill where `mode` says (`skills_dir`: the agent's project skill folder,
    relative to the workspace) and return the prompt and system text to run with."""
    if mode in ("system", "prepend") or skill is None:
        text_mode: SkillMode = mode if mode in ("system", "prepend") else "system"
        system, prompt = compose_prompt(skill, task_prompt, text_mode)
        return Delivery(prompt, system)
    if workspace is None:
        raise DeliveryError(f"skill mode {mode!r} needs the attempt's workspace")
    if mode == "installed":
        top = skills_dir.split("/", 1)[0]
        _refuse_existing(workspace, top)
        install_skill(skill, workspace, skills_dir)
        return Delivery(task_prompt, None, (top,))
    _refuse_existing(workspace, CONTEXT_FILE)
    _refuse_existing(workspace, CONTEXT_FOLDER)
    plan = plan_install(skill)
    others = sorted(e.rel for e in plan.entries if e.rel != "SKILL.md")
    planted: tuple[str, ...] = (CONTEXT_FILE,)
    if others:
        install_skill(skill, workspace, CONTEXT_FOLDER)
        planted = (CONTEXT_FILE, CONTEXT_FOLDER)
    (workspace / CONTEXT_FILE).write_text(context_text(skill, others), encoding="utf-8")
    return Delivery(task_prompt, None, planted)


def clear(workspace: Path | None, planted: tuple[str, ...]) -> None:
    """Take out of the workspace what `deliver` planted (whatever the agent did to it)."""
    if workspace is None:
        return
    for name in planted:
        path = workspace / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink(missing_ok=True)


def _refuse_existing(workspace: Path, name: str) -> None:
    if (workspace / name).exists() or (workspace / name).is_symlink():
        raise DeliveryError(
            f"{workspace}: already holds {name}; the skill under test cannot be delivered "
            "apart from it (a task's files must not include it)"
        )
