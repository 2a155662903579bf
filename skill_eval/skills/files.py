"""A skill folder as the model reads it in `system`/`prepend` mode: the list of its files
(relative path, size) shown after SKILL.md, and the read-only `read_skill_file` tool.

The tool reads only files of that list, never outside the folder: an absolute path, a `..`
component, a link that leaves the folder or a binary file gets an error text, never content.
Text is capped at MAX_READ_BYTES (the rest is cut, and the cut is said). SKILL.md itself is
the text under test (`Skill.content`), never re-read from disk.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.model import Skill
from ..core.paths import inside
from ..errors import SkillError
from .tree import SKILL_FILE, walk

TOOL_NAME = "read_skill_file"
MAX_READ_BYTES = 256 * 1024
MAX_LISTED = 500  # the prompt lists at most this many files; the rest stay readable
_SNIFF = 8192

READ_TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": (
        "Read one file of the skill's folder (text files only). Give its path "
        "relative to the skill folder, as listed with the skill."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "relative path, e.g. references/guide.md"}
        },
        "required": ["path"],
    },
}


@dataclass(frozen=True)
class SkillFile:
    """One file of the folder besides SKILL.md. `problem` says why the tool refuses it
    (binary, a link out of the folder, ...); None when it is readable text."""

    rel: str
    size: int
    problem: str | None = None

    @property
    def truncated(self) -> bool:
        return self.problem is None and self.size > MAX_READ_BYTES


@dataclass(frozen=True)
class SkillFolder:
    root: Path  # resolved
    skill_md: str
    files: tuple[SkillFile, ...]

    def listing(self) -> str:
        """The text that follows SKILL.md: what else the folder holds, and how to read it."""
        lines = [
            f"The skill's folder also holds these files (path, size). Read one with the "
            f"{TOOL_NAME} tool, giving its path relative to the skill folder:"
        ]
        for item in self.files[:MAX_LISTED]:
            why = f"; {item.problem}, cannot be read" if item.problem else ""
            lines.append(f"- {item.rel} ({item.size} bytes{why})")
        if len(self.files) > MAX_LISTED:
            lines.append(f"- ... and {len(self.files) - MAX_LISTED} more files")
        return "\n".join(lines)

    def warnings(self) -> list[str]:
        """What of the folder the tool does not deliver whole, in words for the run log."""
        out: list[str] = []
        refused = [f for f in self.files if f.problem]
        if refused:
            out.append(
                f"{TOOL_NAME} refuses {len(refused)} of the skill's files: "
                + _shown([f"{f.rel} ({f.problem})" for f in refused])
            )
        cut = [f.rel for f in self.files if f.truncated]
        if cut:
            out.append(
                f"{TOOL_NAME} returns only the first {MAX_READ_BYTES // 1024} KiB of "
                f"{len(cut)} file(s): {_shown(cut)}"
            )
        if len(self.files) > MAX_LISTED:
            out.append(f"the prompt lists {MAX_LISTED} of the skill's {len(self.files)} files")
        return out

    def read(self, path: object) -> tuple[bool, str]:
        """(True, the file's text) or (False, why not). Never reads outside `root`."""
        rel = _relative(path)
        if rel is None:
            return False, (
                f"refused: {path!r} is not a path inside the skill folder (give a "
                f"relative path without '..', as listed)"
            )
        if rel == SKILL_FILE:
            return True, self.skill_md
        item = next((f for f in self.files if f.rel == rel), None)
        if item is None:
            return False, f"no such file in the skill folder: {rel}"
        if item.problem:
            return False, f"refused: {rel} is {item.problem}"
        return _read_text(self.root, rel)


def _shown(items: list[str], limit: int = 5) -> str:
    return ", ".join(items[:limit]) + (", ..." if len(items) > limit else "")


def _relative(path: object) -> str | None:
    """`path` as a clean relative POSIX path, or None when it is not one (absolute, `..`,
    empty, not a string, a NUL or backslash in it)."""
    if not isinstance(path, str) or not path.strip() or "\0" in path or "\\" in path:
        return None
    pure = PurePosixPath(path.strip())
    if pure.is_absolute() or ".." in pure.parts:
        return None
    parts = [p for p in pure.parts if p != "."]
    return "/".join(parts) or None


def _read_text(root: Path, rel: str) -> tuple[bool, str]:
    """Read a listed file again at call time: it may have changed since it was listed, so the
    confinement and text checks are repeated on what is actually opened."""
    real = Path(os.path.realpath(root / rel))
    if not inside(root, real):
        return False, f"refused: {rel} leads outside the skill folder"
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return False, f"refused: {rel} is not a regular file"
            data = handle.read(MAX_READ_BYTES + 1)
    except OSError as exc:
        return False, f"cannot read {rel}: {exc.strerror}"
    text = _decode(data[:MAX_READ_BYTES], cut=len(data) > MAX_READ_BYTES)
    if text is None:
        return False, f"refused: {rel} is a binary file"
    if len(data) > MAX_READ_BYTES:
        text += f"\n[cut: only the first {MAX_READ_BYTES} bytes of {rel} are shown]"
    return True, text


def _decode(data: bytes, *, cut: bool) -> str | None:
    """UTF-8 text, or None for binary data. A cut may split a character at the end."""
    if b"\0" in data[:_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(data) - 3:
            return data[: exc.start].decode("utf-8", "replace")
        return None


def _classify(root: Path, rel: str, path: Path, kind: str) -> SkillFile:
    if kind == "link" and not inside(root, path):  # its target is never looked at: not
        return SkillFile(rel, 0, "a link outside the skill folder")  # even its size is told
    try:
        info = os.stat(path)  # follows a link inside: what reading it would open
    except OSError:
        return SkillFile(rel, 0, "a dangling link")
    if not stat.S_ISREG(info.st_mode):
        return SkillFile(rel, 0, "not a regular file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(MAX_READ_BYTES + 1)
    except OSError as exc:
        return SkillFile(rel, info.st_size, f"unreadable ({exc.strerror})")
    if _decode(head[:MAX_READ_BYTES], cut=len(head) > MAX_READ_BYTES) is None:
        return SkillFile(rel, info.st_size, "a binary file")
    return SkillFile(rel, info.st_size)


@functools.lru_cache(maxsize=64)
def _folder(root: str, tree_sha256: str | None, skill_md: str) -> SkillFolder | None:
    real = Path(os.path.realpath(root))
    try:
        entries = [e for e in walk(real) if e.rel != SKILL_FILE]
    except SkillError:
        return None
    if not entries:
        return None
    return SkillFolder(
        real, skill_md, tuple(_classify(real, e.rel, e.path, e.kind) for e in entries)
    )


def skill_folder(skill: Skill | None) -> SkillFolder | None:
    """The folder the model may read, or None for no skill, a skill given as a SKILL.md file,
    or a folder holding SKILL.md alone (those send no tool: they cost nothing extra). Cached
    per skill: every attempt of an arm sees the same list."""
    if skill is None or skill.directory is None or not Path(skill.directory).is_dir():
        return None
    return _folder(str(skill.directory), skill.tree_sha256, skill.content)
