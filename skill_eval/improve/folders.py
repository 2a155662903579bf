"""Skill folders on disk: read one into the loop's {path: text} form, keep every version's folder
under the run directory, and write the winner to an output folder (never over the user's skill
unless asked). Paths come from model output, so every write is confined with `check_path`.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from ..core.paths import atomic_write_text
from ..errors import SkillError
from .improver import SKILL_FILE, check_path
from .loop import ImproveResult

MAX_READ_BYTES = 1_000_000
SKIPPED_DIRS = {".git", "__pycache__", ".venv", "node_modules"}


class FolderError(SkillError, ValueError):
    """A skill folder that cannot be read, or an output folder that may not be written."""


def read_skill_folder(directory: Path) -> tuple[dict[str, str], list[str]]:
    """The folder's UTF-8 text files (path relative to the folder -> text) and a note for each
    file left out (binary, too large, symlink). Left-out files are still copied with the folder
    by `write_version`, they are only invisible to the improver."""
    root = Path(directory)
    if not (root / SKILL_FILE).is_file():
        raise FolderError(f"{root}: no {SKILL_FILE} in the skill folder")
    files: dict[str, str] = {}
    skipped: list[str] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if SKIPPED_DIRS & set(rel.split("/")) or path.is_dir():
            continue
        if path.is_symlink():
            skipped.append(f"{rel}: symlink, not shown to the improver")
        elif path.stat().st_size > MAX_READ_BYTES:
            skipped.append(f"{rel}: larger than {MAX_READ_BYTES} bytes, not shown")
        else:
            try:
                files[rel] = path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                skipped.append(f"{rel}: not UTF-8 text, not shown to the improver")
    return files, skipped


def write_version(files: Mapping[str, str], target: Path, original: Path | None = None) -> Path:
    """`target` holding a copy of `original` (binary files included) with `files` written over
    it. `target` must not exist yet."""
    target = Path(target)
    if target.exists():
        raise FolderError(f"{target}: already exists")
    if original is not None:
        shutil.copytree(
            original, target, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED_DIRS)
        )
    target.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        atomic_write_text(target / check_path(rel), text)
    return target


def write_versions(
    result: ImproveResult, run_dir: Path, original: Path | None = None
) -> dict[str, Path]:
    """Every evaluated version under `run_dir/versions/v<iteration>-<hash12>`; hash -> folder."""
    out: dict[str, Path] = {}
    for v in result.versions:
        out[v.hash] = write_version(
            v.files, Path(run_dir) / "versions" / f"v{v.iteration}-{v.hash[:12]}", original
        )
    return out


def write_winner(
    result: ImproveResult, output_dir: Path, skill_dir: Path, in_place: bool = False
) -> Path | None:
    """Write the proposed version; None when nothing was proposed. Writing into the user's
    skill folder (or a folder inside it) needs `in_place`."""
    if not result.proposed:
        return None
    out, skill = Path(output_dir).resolve(), Path(skill_dir).resolve()
    if skill in out.parents:
        raise FolderError(f"{output_dir}: is inside the skill folder {skill_dir}")
    if out == skill and not in_place:
        raise FolderError(
            f"{output_dir}: is the skill folder itself; pass in_place to "
            "overwrite the original skill"
        )
    if in_place and out == skill:
        for rel, text in result.best.files.items():
            atomic_write_text(skill / check_path(rel), text)
        return skill
    return write_version(result.best.files, out, skill)
