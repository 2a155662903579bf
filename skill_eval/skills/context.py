"""The `context` delivery: a skill written into an agent's always-on context file (CLAUDE.md for
Claude Code, AGENTS.md for OpenCode and Codex) in the attempt's workspace, instead of installed
as a skill it may or may not invoke.

The file holds one heading naming the skill, SKILL.md's text as it is (the text under test)
and, when the skill's folder has other files, an index of them: the folder is copied (as
`install_skill` copies it: links out of the folder never followed) to `.skill-eval/<name>/` in
the workspace, a folder no agent scans for skills, and the index gives each file's path there,
so the agent reads them when the text sends it to them.

An executor calls `context_problem` and `write_context` before its agent starts and
`remove_context` after it ends (what skill-eval wrote is not the agent's work: the judges
never see it). The wording here is part of what a context arm's results depend on:
CONTEXT_TEMPLATE_VERSION is in the run's fingerprint.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..core.model import Skill
from .install import copy_skill, plan_install
from .tree import SKILL_FILE

CONTEXT_DIR = ".skill-eval"  # in the workspace: the skill's folder, for the index's paths
CONTEXT_TEMPLATE_VERSION = "1"
MAX_INDEXED = 200  # files listed by name; a larger folder's index says how many more
MAX_SCANNED = 20_000  # workspace entries looked at for foreign context files


@dataclass(frozen=True)
class ContextPlan:
    """What `write_context` writes: the context file's text, and the skill's other files
    (paths relative to the workspace) it indexes, copied under CONTEXT_DIR."""

    document: str
    files: tuple[str, ...]


def plan_context(skill: Skill) -> ContextPlan:
    """The context file for `skill` (reads the skill's folder, writes nothing)."""
    plan = plan_install(skill)
    folder = f"{CONTEXT_DIR}/{plan.folder}"
    others = sorted(f"{folder}/{e.rel}" for e in plan.entries if e.rel != SKILL_FILE)
    parts = [f"# Skill: {plan.folder}", "", skill.content.rstrip("\n")]
    if others:
        listed = others[:MAX_INDEXED]
        parts += [
            "",
            f"## Files of the {plan.folder} skill",
            "",
            f"The skill's folder is `{folder}/`; read these files from there when the skill "
            "refers to them:",
            "",
            *(f"- `{path}`" for path in listed),
        ]
        if len(others) > len(listed):
            parts.append(f"- ... and {len(others) - len(listed)} more files in `{folder}/`")
    return ContextPlan("\n".join(parts) + "\n", tuple(others))


def context_problem(workspace: Path, file_name: str, foreign: tuple[str, ...] = ()) -> str | None:
    """Why the skill cannot be written into `workspace` as `file_name`: the file or
    CONTEXT_DIR is there already (the task's own files), or a file the agent would also load
    as context (`foreign`, e.g. CLAUDE.md and CLAUDE.local.md in any folder) is. None when
    the skill-eval file will be the only one."""
    for name in (file_name, CONTEXT_DIR):
        if os.path.lexists(workspace / name):
            return (
                f"{workspace}: already holds {name}; the skill under test cannot be written "
                "as the agent's context apart from it"
            )
    wanted = set(foreign)
    for seen, (top, dirs, names) in enumerate(os.walk(workspace)):
        found = wanted.intersection(names) | wanted.intersection(dirs)
        if found:
            rel = Path(top, sorted(found)[0]).relative_to(workspace)
            return (
                f"{workspace}: the task's files hold {rel}, which the agent would load as "
                "context too; a context arm loads only the file skill-eval writes"
            )
        if seen >= MAX_SCANNED:
            return f"{workspace}: more than {MAX_SCANNED} folders to check for context files"
    return None


def write_context(skill: Skill, workspace: Path, file_name: str) -> ContextPlan:
    """Write `skill` into `<workspace>/<file_name>` (and its other files under CONTEXT_DIR);
    the file is created new, never through a link (OSError when it exists)."""
    plan = plan_context(skill)
    if plan.files:
        copy_skill(skill, workspace / CONTEXT_DIR)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(workspace / file_name, flags, 0o644), "w", encoding="utf-8") as out:
        out.write(plan.document)
    return plan


def remove_context(workspace: Path, file_name: str) -> None:
    """Remove what `write_context` wrote (links unlinked, never followed)."""
    for name in (file_name, CONTEXT_DIR):
        path = workspace / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            path.unlink(missing_ok=True)


__all__ = [
    "CONTEXT_DIR",
    "CONTEXT_TEMPLATE_VERSION",
    "ContextPlan",
    "context_problem",
    "plan_context",
    "remove_context",
    "write_context",
]
