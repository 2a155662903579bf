"""Where a ranking's `target.path` (the original skill) points, checked to be a skill.

A ranking is untrusted input that may name any file. Skills are accepted where users keep them
(an absolute path; a relative one against the ranking's folder, then the working directory),
but only when they are skills: a directory holding a regular SKILL.md, or a regular SKILL.md
file, at most 1 MiB, never on a kernel or device filesystem (/proc/self/environ is the process
environment, API keys included) and never a FIFO, socket or device (opening a FIFO blocks).
`--skills-root DIR`, when given, is an extra fence: the skill must lie inside DIR.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.paths import inside
from ..errors import SkillError
from .load import MAX_SKILL_BYTES
from .ranking import Ranking
from .tree import SKILL_FILE

# Never a skill, wherever a ranking points: kernel and device filesystems.
FORBIDDEN_ROOTS = ("/proc", "/sys", "/dev")


def original_target(ranking: Ranking, skills_root: Path | None = None) -> Path:
    """The absolute path target.path names: a skill directory or a SKILL.md file. Raises
    SkillError, one line naming the ranking and the field, for anything else."""
    raw = ranking.target.get("path")
    if not isinstance(raw, str) or not raw.strip():
        raise SkillError(
            f"{ranking.path}: target.path: is required to resolve the original skill",
            path=str(ranking.path),
        )
    where = f"{ranking.path}: target.path: {raw!r}"
    if "\x00" in raw:
        raise SkillError(f"{where} holds a NUL byte", path=str(ranking.path))
    path = locate(ranking.path.parent, raw)
    _check_place(where, path, skills_root, ranking)
    try:
        found = os.stat(path)
    except FileNotFoundError:
        raise SkillError(
            f"original skill not found: {path} (target.path in {ranking.path})", path=str(path)
        ) from None
    except OSError as exc:
        raise SkillError(
            f"{where}: cannot read {path}: {exc.strerror}", path=str(ranking.path)
        ) from None
    mode = found.st_mode
    if stat.S_ISDIR(mode):
        skill_md = path / SKILL_FILE
        _check_place(where, skill_md, skills_root, ranking)  # a SKILL.md that links out
        try:
            found = os.stat(skill_md)
        except OSError:
            raise SkillError(
                f"no {SKILL_FILE} in skill directory: {path} (target.path in {ranking.path})",
                path=str(path),
            ) from None
        if not stat.S_ISREG(found.st_mode):
            raise SkillError(
                f"{where}: {skill_md} is {_kind(found.st_mode)}, not a skill file",
                path=str(ranking.path),
            )
        _check_size(where, skill_md, found.st_size, ranking)
    elif not stat.S_ISREG(mode):
        raise SkillError(
            f"{where} is {_kind(mode)}, not a skill: give a {SKILL_FILE} file or "
            f"a directory holding one",
            path=str(ranking.path),
        )
    elif path.name != SKILL_FILE:
        raise SkillError(
            f"{where} must be a {SKILL_FILE} file or a directory holding one",
            path=str(ranking.path),
        )
    else:
        _check_size(where, path, found.st_size, ranking)
    return path


def locate(base: Path, raw: str) -> Path:
    """An absolute path as given; a relative one against `base` (the ranking's folder) when
    something is there, else against the working directory (the original tool's reading)."""
    path = Path(raw)
    if path.is_absolute():
        return path
    first, second = base / path, Path.cwd() / path
    return second if not os.path.lexists(first) and os.path.lexists(second) else first


def on_system_filesystem(path: Path) -> bool:
    """True for a path (links followed) under /proc, /sys or /dev, or on one of their
    filesystems mounted elsewhere (compared by device, when it differs from the root's)."""
    real = os.path.realpath(path)
    if any(inside(Path(root), Path(real)) for root in FORBIDDEN_ROOTS):
        return True
    device, root_device = _device(real), _device("/")
    return device not in (None, root_device) and device in {_device(r) for r in FORBIDDEN_ROOTS}


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _check_place(where: str, path: Path, skills_root: Path | None, ranking: Ranking) -> None:
    real = Path(os.path.realpath(path))
    if on_system_filesystem(path):
        raise SkillError(
            f"{where} resolves to {real}, a system file, never a skill", path=str(ranking.path)
        )
    if skills_root is not None and not inside(skills_root, real):
        raise SkillError(
            f"{where} resolves to {real}, outside --skills-root {skills_root}",
            path=str(ranking.path),
        )


def _check_size(where: str, file: Path, size: int, ranking: Ranking) -> None:
    if size > MAX_SKILL_BYTES:
        raise SkillError(
            f"{where}: {file} is {size} bytes, over the 1 MiB limit of a skill",
            path=str(ranking.path),
        )


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
