"""How the skill reaches an OpenCode or Codex attempt, by skill mode, and what skill-eval put
into the attempt's workspace for it (taken out again after the run, before the workspace is
snapshotted: the judges see only the agent's work).

- `installed` (also an arm's `nudged` delivery, whose prompt the engine has already nudged):
  the skill folder where the agent finds a project's skills (OpenCode `.opencode/skills/
  <name>/`, Codex `.agents/skills/<name>/`); the agent decides to load it.
- `context`: the skill written into the always-on context file both agents read at the start
  of every run, `AGENTS.md` in the working directory (skills/context.py: the same document
  Claude Code's CLAUDE.md gets, the folder's other files under `.skill-eval/<name>/`, indexed);
  nothing to decide. Refused when the task's files hold an AGENTS.md (or Codex's
  AGENTS.override.md) anywhere: it would load beside the skill's.
- `system`: the text in the system prompt (OpenCode's `instructions`, Codex's
  `developer_instructions`); `prepend`: before the task in the prompt (base.compose_prompt).

An executor asks `delivery_problem` first (a task whose own files are in the way: every
attempt would fail alike), then `deliver`, and `clear`s what `planted` names after the run.
Without the jail (--no-jail) the folders above the attempt's temporary workspace are the
host's: `host_problem` names one holding what the agents would load from there.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ...core.execution import SkillMode
from ...core.model import Skill
from ...skills.context import CONTEXT_DIR, context_problem, write_context
from ...skills.install import install_skill
from ..base import compose_prompt

CONTEXT_FILE = "AGENTS.md"
# Context files either agent would load from the task's own files beside the skill's.
FOREIGN_CONTEXT = ("AGENTS.md", "AGENTS.override.md")
# What OpenCode loads from any folder above its working directory (Codex: up to a git
# repository's root), whatever the mode: without the jail, the host's folders above the
# attempt's temporary workspace.
ABOVE = (
    "AGENTS.md",
    "AGENTS.override.md",
    "opencode.json",
    "opencode.jsonc",
    ".opencode",
    ".agents/skills",
)


@dataclass(frozen=True)
class Delivered:
    """The prompt and the system text (system mode) an attempt runs with."""

    prompt: str
    system: str | None = None


def planted(skill: Skill | None, mode: SkillMode, skills_dir: str) -> tuple[str, ...]:
    """The top-level workspace entries `deliver` writes in `mode` (removed by `clear`)."""
    if skill is None or mode in ("system", "prepend"):
        return ()
    return (skills_dir.split("/", 1)[0],) if mode == "installed" else (CONTEXT_FILE, CONTEXT_DIR)


def delivery_problem(
    skill: Skill | None, mode: SkillMode, workspace: Path | None, skills_dir: str
) -> str | None:
    """Why the skill cannot be delivered in `mode` into `workspace` (the task's own files
    hold what the delivery writes, or what the agent would load beside it), or None."""
    entries = planted(skill, mode, skills_dir)
    if not entries:
        return None
    if workspace is None:
        return f"skill mode {mode!r} needs the attempt's workspace"
    if mode == "context":
        return context_problem(workspace, CONTEXT_FILE, FOREIGN_CONTEXT)
    if os.path.lexists(workspace / entries[0]):
        return (
            f"{workspace}: already holds {entries[0]}; the skill under test cannot be "
            "delivered apart from it (a task's files must not include it)"
        )
    return None


def deliver(
    skill: Skill | None, task_prompt: str, mode: SkillMode, workspace: Path | None, skills_dir: str
) -> Delivered:
    """Put the skill where `mode` says (`skills_dir`: the agent's project skill folder,
    relative to the workspace) once `delivery_problem` said None, and return the prompt and
    system text to run with. OSError when the workspace cannot be written."""
    if skill is None or mode in ("system", "prepend"):
        text_mode: SkillMode = mode if mode in ("system", "prepend") else "system"
        system, prompt = compose_prompt(skill, task_prompt, text_mode)
        return Delivered(prompt, system)
    if workspace is None:
        raise OSError(f"skill mode {mode!r} needs the attempt's workspace")
    if mode == "installed":
        install_skill(skill, workspace, skills_dir)
    else:
        write_context(skill, workspace, CONTEXT_FILE)
    return Delivered(task_prompt)


def clear(workspace: Path | None, entries: tuple[str, ...]) -> None:
    """Take out of the workspace what `deliver` planted (whatever the agent did to it)."""
    if workspace is None:
        return
    for name in entries:
        path = workspace / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            path.unlink(missing_ok=True)


def host_problem(temp: Path) -> str | None:
    """Without the jail: the first file or folder above `temp` (where the attempts' unjailed
    workspaces are made) that OpenCode or Codex would load beside what skill-eval delivers."""
    for folder in [temp.resolve(), *temp.resolve().parents]:
        for rel in ABOVE:
            if os.path.lexists(folder / rel):
                return (
                    f"{folder / rel} exists: without the jail the agent would load it in every "
                    "attempt (it reads the folders above its working directory); remove it, "
                    "set TMPDIR to a folder with no such file above it, or run in the jail"
                )
    return None
