"""What a suite path names, told apart cheaply (by its name and the files beside it, nothing
read): an eval set or trigger set file, or a skill folder. inputs/suite.py asks this before it
loads the eval-set reader, so a YAML suite never pays for it."""

from __future__ import annotations

import os
from pathlib import Path


def is_skill_folder(path: Path) -> bool:
    """A folder holding a SKILL.md: its evals/ are the suite."""
    return path.is_dir() and (path / "SKILL.md").is_file()


def is_eval_set(path: Path) -> bool:
    """Whether `path` names an eval set or trigger set file (JSON) rather than a suite."""
    return path.suffix.lower() == ".json" and os.path.lexists(path) and not path.is_dir()


__all__ = ["is_eval_set", "is_skill_folder"]
