"""Loading a skill: a folder holding SKILL.md (or a SKILL.md file alone), checked against the
Agent Skills format (lint.py) and identified by a hash over all its files (tree.py).

A skill given as a directory carries that directory (its references, scripts, ...); a skill
given as a SKILL.md file is that file alone: the folder around a file is not assumed to be the
skill's, so nothing else in it is ever copied (into a candidate, or into a model's workspace).
"""

from __future__ import annotations

from pathlib import Path

from ..core.model import Skill
from ..core.utf8 import NotUtf8, utf8_text
from ..errors import SkillError
from .lint import Finding, lint_text
from .plans import read_frontmatter
from .tree import SKILL_FILE, tree_sha256, walk

MAX_SKILL_BYTES = 1024 * 1024


def load_skill(path: str | Path) -> Skill:
    """Load a directory holding a SKILL.md, or a SKILL.md (or other markdown) file.

    Only a directory gives the skill a `directory` (absolute): the installed skill mode copies
    it whole. A file gives `directory=None`, so the skill is that file's text alone, whatever
    else lies next to it. The name is the frontmatter `name`. Raises SkillError naming the path
    when it is missing, has no SKILL.md, is unreadable, not UTF-8, larger than 1 MiB, or when
    its SKILL.md has errors in the Agent Skills format (one `file:line: error: ...` per line;
    `skill_findings` gives the warnings too)."""
    file, directory = skill_file(path)
    text = read_skill_text(file)
    errors = [
        f
        for f in lint_text(text, str(file), _lint_folder(file, directory))
        if f.severity == "error"
    ]
    if errors:
        raise SkillError("\n".join(str(f) for f in errors), path=str(file))
    front = read_frontmatter(text) or {}
    name = str(front.get("name", "")).strip() or (directory or file.parent.resolve()).name
    return Skill(
        name=name,
        content=text,
        directory=directory,
        origin=str(file),
        tree_sha256=tree_sha256(directory, text),
    )


def skill_file(path: str | Path) -> tuple[Path, Path | None]:
    """(the SKILL.md file, the skill's absolute directory or None for a file skill)."""
    given = Path(path)
    if given.is_dir():
        file = given / SKILL_FILE
        if not file.is_file():
            raise SkillError(f"no {SKILL_FILE} in skill directory: {given}", path=str(given))
        return file, given.resolve()
    if given.is_file():
        return given, None
    if given.exists():
        raise SkillError(f"skill is not a regular file: {given}", path=str(given))
    raise SkillError(f"skill not found: {given}", path=str(given))


def lint_skill(path: str | Path) -> list[Finding]:
    """Every finding (errors and warnings) in the SKILL.md at `path`, a folder or the file.
    Raises SkillError only when there is no readable SKILL.md at all."""
    file, directory = skill_file(path)
    data = read_skill_bytes(file)
    try:
        text = utf8_text(data)
    except NotUtf8 as exc:  # there is a SKILL.md, and this is what is wrong with it
        return [Finding(str(file), exc.line, "error", f"SKILL.md is {exc}")]
    return lint_text(text, str(file), _lint_folder(file, directory))


def skill_findings(skill: Skill) -> list[Finding]:
    """The findings of a loaded skill's text, against its folder (or its file's folder)."""
    origin = Path(skill.origin) if skill.origin else None
    display = str(origin) if origin is not None and origin.is_file() else SKILL_FILE
    folder = skill.directory
    if folder is None and origin is not None and origin.is_file():
        folder = _lint_folder(origin, None)
    return lint_text(skill.content, display, folder)


def other_files(skill: Skill) -> list[str]:
    """For a skill loaded from a SKILL.md file: the files next to it, which are not part of the
    skill (sorted relative paths, at most 1000). Empty for a directory skill."""
    if skill.directory is not None or not skill.origin:
        return []
    origin = Path(skill.origin)
    if not origin.is_file():
        return []
    try:
        found = [e.rel for e in walk(origin.parent.resolve()) if e.rel != origin.name]
    except SkillError:
        return []
    return found[:1000]


def _lint_folder(file: Path, directory: Path | None) -> Path | None:
    """The folder a SKILL.md's name and links are checked against: its directory; for a file
    named SKILL.md its parent (an author linting in place); none for other markdown files."""
    if directory is not None:
        return directory
    return file.parent.resolve() if file.name == SKILL_FILE else None


def read_skill_text(file: Path) -> str:
    """The SKILL.md's text; SkillError when it cannot be read, is over 1 MiB or not UTF-8."""
    data = read_skill_bytes(file)
    try:
        return utf8_text(data)
    except NotUtf8 as exc:
        raise SkillError(f"{file}:{exc.line}: SKILL.md is {exc}", path=str(file)) from None


def read_skill_bytes(file: Path) -> bytes:
    """At most 1 MiB of the SKILL.md; SkillError when it cannot be read or is larger."""
    try:
        size = file.stat().st_size
        if size > MAX_SKILL_BYTES:
            raise SkillError(
                f"skill file too large: {file} ({size} bytes; the limit is 1 MiB)", path=str(file)
            )
        with file.open("rb") as handle:
            data = handle.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        raise SkillError(f"cannot read skill {file}: {exc.strerror}", path=str(file)) from None
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"skill file too large: {file} (the limit is 1 MiB)", path=str(file))
    return data
