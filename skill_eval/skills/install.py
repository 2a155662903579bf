"""Installing a skill into an attempt's `.claude/skills/<name>/`, the way Claude Code finds it
(or another agent's skill folder: `.opencode/skills`, `.agents/skills`), without ever writing
to a path outside that folder.

The copy is planned first (`plan_install`, reads only) and then built file by file with
exclusive creates that never follow a link. Links inside the skill folder become copies of the
file (or relative links to a folder inside it). A skill folder is untrusted input (it may come
from a pull request), so a link that leaves the folder is never followed: it is left out with a
warning naming the link, whatever it points at (`references/style.md -> ~/.aws/credentials`
would otherwise hand the file to the model). Dangling links are left out the same way.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..core.model import Skill
from ..core.paths import inside, safe_component
from .tree import SKILL_FILE, walk


@dataclass(frozen=True)
class PlannedFile:
    """One entry of the installed copy: `rel` under the skill folder; its bytes come from
    `source` (None: SKILL.md, written from the skill's text); `link` keeps a relative link."""

    rel: str
    source: Path | None = None
    executable: bool = False
    link: str | None = None


@dataclass(frozen=True)
class InstallPlan:
    folder: str
    entries: tuple[PlannedFile, ...]
    warnings: tuple[str, ...]

    @property
    def files(self) -> list[str]:
        """The installed paths relative to `.claude/skills/`, sorted."""
        return sorted(f"{self.folder}/{e.rel}" for e in self.entries)


def plan_install(skill: Skill) -> InstallPlan:
    """What installing `skill` would write, and what it leaves out (the warnings)."""
    folder = safe_component(skill.name or "skill")
    entries = [PlannedFile(SKILL_FILE)]
    warnings: list[str] = []
    root = Path(skill.directory).resolve() if skill.directory is not None else None
    if root is not None and root.is_dir():
        for entry in walk(root):
            if entry.rel == SKILL_FILE:
                continue
            if entry.kind != "link":
                entries.append(PlannedFile(entry.rel, entry.path, entry.kind == "exec"))
                continue
            planned, warning = _plan_link(root, entry.rel, entry.path)
            if planned is not None:
                entries.append(planned)
            if warning:
                warnings.append(f"skill {skill.name!r}: {entry.rel}: {warning}")
    return InstallPlan(folder, tuple(entries), tuple(warnings))


def _plan_link(root: Path, rel: str, path: Path) -> tuple[PlannedFile | None, str]:
    raw = os.readlink(path)
    target = Path(os.path.realpath(path))
    try:
        info = os.stat(target)
    except OSError:
        return None, f"a dangling link (to {raw}); not installed"
    if not inside(root, target):  # never read, whatever it is
        return None, f"a link to {raw}, outside the skill folder: never followed, not installed"
    if stat.S_ISDIR(info.st_mode):
        # The folder it names is installed too, at the same relative place.
        link = os.path.relpath(target, (root / rel).parent.resolve())
        return PlannedFile(rel, link=link), ""
    if stat.S_ISREG(info.st_mode):
        return PlannedFile(rel, target, bool(info.st_mode & 0o111)), ""
    return None, "a link to a special file; not installed"


def install_skill(skill: Skill, workdir: Path, skills_dir: str = ".claude/skills") -> Path:
    """Copy the skill to `<workdir>/<skills_dir>/<name>/` and return that folder.

    A skill with a `directory` brings its files along (see the module docstring for links);
    a skill without one (loaded from a SKILL.md file) is SKILL.md alone. SKILL.md is always
    the text under test, `skill.content`. Nothing is written outside the destination: every
    file is created new (an existing destination is removed first, links unlinked, never
    followed)."""
    return copy_skill(skill, workdir / skills_dir)


def copy_skill(skill: Skill, base: Path) -> Path:
    """Copy the skill's folder to `<base>/<name>/` (as `install_skill` does, the same rules:
    see the module docstring) and return that folder."""
    plan = plan_install(skill)
    base.mkdir(parents=True, exist_ok=True)
    dest = base / plan.folder
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    dest.mkdir()
    real_dest = dest.resolve()
    for entry in plan.entries:
        target = dest / entry.rel
        _make_parents(real_dest, target.parent)
        if entry.link is not None:
            os.symlink(entry.link, target)
        elif entry.source is None:
            _write_new(target, skill.content.encode("utf-8"), False)
        else:
            _copy_new(entry.source, target, entry.executable)
    return dest


def _make_parents(real_dest: Path, parent: Path) -> None:
    """Create the folders above a file, refusing any that would resolve outside the copy."""
    parent.mkdir(parents=True, exist_ok=True)
    if not inside(real_dest, parent.resolve()):
        raise OSError(f"refusing to write outside {real_dest}: {parent}")


def _open_new(target: Path, executable: bool) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    return os.open(target, flags, 0o755 if executable else 0o644)


def _write_new(target: Path, data: bytes, executable: bool) -> None:
    with os.fdopen(_open_new(target, executable), "wb") as out:
        out.write(data)


def _copy_new(source: Path, target: Path, executable: bool) -> None:
    with open(source, "rb") as src, os.fdopen(_open_new(target, executable), "wb") as out:
        shutil.copyfileobj(src, out, 1 << 16)
