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

Without the jail (--no-jail) the folders above the attempt's temporary workspace are the
host's: `host_problem` names one holding what the agents would load from there.
- `system`: the text in the system prompt (OpenCode's `instructions`, Codex's
  `developer_instructions`); `prepend`: before the task in the prompt (base.compose_prompt).
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


class DeliveryError(OSError):
    """The workspace already holds what the delivery must put there (a task's own files)."""


@dataclass(frozen=True)
class Delivered:
    """The prompt, the system text (system mode), and the top-level workspace entries
    skill-eval planted (removed by `clear`)."""

    prompt: str
    system: str | None = None
    planted: tuple[str, ...] = ()


def deliver(
    skill: Skill | None, task_prompt: str, mode: SkillMode, workspace: Path | None, skills_dir: str
) -> Delivered:
    """Put the skill where `mode` says (`skills_dir`: the agent's project skill folder,
    relative to the workspace) and return the prompt and system text to run with."""
    if mode in ("system", "prepend") or skill is None:
        text_mode: SkillMode = mode if mode in ("system", "prepend") else "system"
        system, prompt = compose_prompt(skill, task_prompt, text_mode)
        return Delivered(prompt, system)
    if workspace is None:
        raise DeliveryError(f"skill mode {mode!r} needs the attempt's workspace")
    if mode == "installed":
        top = skills_dir.split("/", 1)[0]
        _refuse_existing(workspace, top)
        install_skill(skill, workspace, skills_dir)
        return Delivered(task_prompt, None, (top,))
    if (problem := context_problem(workspace, CONTEXT_FILE, FOREIGN_CONTEXT)) is not None:
        raise DeliveryError(problem)
    write_context(skill, workspace, CONTEXT_FILE)
    return Delivered(task_prompt, None, (CONTEXT_FILE, CONTEXT_DIR))


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
