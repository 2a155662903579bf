"""Skill folders on disk: read one into the loop's {path: text} form, keep every version's folder
under the run directory, and write the winner to an output folder (never over the user's skill
unless asked). Paths come from model output and the skill folder is untrusted input, so every
write is confined: `check_path` on the name, then each folder on the way resolved (links
included) and required to lie inside the version's folder. A link of the original that leaves
its folder is not copied into a version (a proposed `refs/x` would be written through it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from ..core.paths import atomic_write_text, inside
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
    by `write_version` (links only when they stay inside it), they are only invisible to the
    improver. Links are never followed: their targets are not read."""
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
        _drop_links_out(target)
    target.mkdir(parents=True, exist_ok=True)
    write_inside(target, files)
    return target


def _drop_links_out(root: Path) -> None:
    """Remove the links of a copied folder that lead outside it (an absolute link into the
    original counts: the copy must never write into the user's skill)."""
    for directory, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(directory) / name
            if path.is_symlink() and not inside(root, path):
                path.unlink()


def write_inside(root: Path, files: Mapping[str, str]) -> None:
    """Write `files` (relative path -> text) under `root`, every one checked before any is
    written: a path whose folders lead outside `root` through a link is a FolderError."""
    planned = [
        (_parent_inside(root, check_path(rel)), check_path(rel), text)
        for rel, text in files.items()
    ]
    for parent, rel, text in planned:
        parent.mkdir(parents=True, exist_ok=True)  # checked: no part of it leads out
        atomic_write_text(root / rel, text)


def _parent_inside(root: Path, rel: str) -> Path:
    """The folder `rel` goes into, once each existing folder on the way is found (links
    resolved) inside `root`."""
    current = root
    for part in rel.split("/")[:-1]:
        current = current / part
        if not os.path.lexists(current):
            break  # made fresh below a folder already found inside
        if not inside(root, current):
            raise FolderError(
                f"{rel}: {current.relative_to(root)} leads to {os.path.realpath(current)}, "
                f"outside {root} (a link); a version is written only inside its own folder"
            )
        if not current.is_dir():
            raise FolderError(f"{rel}: {current.relative_to(root)} is not a folder")
    return (root / rel).parent


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
        write_inside(skill, result.best.files)
        return skill
    return write_version(result.best.files, out, skill)
