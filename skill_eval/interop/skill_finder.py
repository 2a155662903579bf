"""Where the skills of a repository are: every folder holding SKILL.md, however deep
(`skills/<name>/`, `plugins/<p>/skills/<name>/`, `.claude/skills/<name>/`), each named by its
path below the folder it was found from. The walk is bounded and follows no link: a pull
request decides what the tree holds.

    found = find_skills(["."])        # [SkillFolder(path=..., label="skills/x"), ...]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..inputs.evalsets.load import evals_without_skill

SKILL_FILE = "SKILL.md"
MAX_FOLDERS = 50_000  # folders looked at in one walk: a tree past this is refused
# Never looked in: version control, dependencies, caches, virtual environments. Hidden folders
# are skipped too, but for `.claude` (Claude Code's project skills live in .claude/skills/).
SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages", "venv"})
HIDDEN_KEPT = frozenset({".claude"})


@dataclass(frozen=True)
class SkillFolder:
    path: Path
    label: str  # its path below the folder it was found from (its own name when given)


def _walk(root: Path) -> list[Path]:
    """Skill folders below `root` (not `root` itself), sorted; a skill's own subfolders are
    not searched (its fixtures may hold a SKILL.md of their own)."""
    found: list[Path] = []
    seen = 0
    pending = [root]
    while pending:
        folder = pending.pop()
        seen += 1
        if seen > MAX_FOLDERS:
            raise UsageError(f"{root}: over {MAX_FOLDERS} folders to search for skills")
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if not entry.is_dir(follow_symlinks=False) or name in SKIPPED:
                continue
            if name.startswith(".") and name not in HIDDEN_KEPT:
                continue
            path = Path(entry.path)
            if (path / SKILL_FILE).is_file() and not (path / SKILL_FILE).is_symlink():
                found.append(path)
            else:
                pending.append(path)
    return sorted(found)


def find_skills(paths: Sequence[str]) -> list[SkillFolder]:
    """The skill folders `paths` name: each a skill folder (holding SKILL.md) or a folder
    searched for them at any depth. UsageError for a path that is neither (named)."""
    found: list[SkillFolder] = []
    for given in paths:
        path = Path(given)
        if (path / SKILL_FILE).is_file():
            found.append(SkillFolder(path, path.resolve().name))
        elif path.is_dir():
            skills = _walk(path)
            if not skills:
                why = evals_without_skill(path) or "no SKILL.md in it or in its folders"
                raise UsageError(f"{path}: {why}", path=given)  # as `validate` says it
            found += [SkillFolder(p, p.relative_to(path).as_posix()) for p in skills]
        else:
            raise UsageError(f"{path}: not a skill folder (no such folder)", path=given)
    unique: dict[Path, SkillFolder] = {}
    for skill in found:
        unique.setdefault(skill.path.resolve(), skill)
    return list(unique.values())


__all__ = ["SkillFolder", "find_skills"]
