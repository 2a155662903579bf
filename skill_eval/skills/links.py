"""The files a SKILL.md names, checked against its folder: relative markdown links, backticked
paths that look like the skill's own files, and markdown files its prose points to ("see
REFERENCE.md"). lint.py turns each problem into a warning.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

_MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"(?<!`)`([^`\s]+)`(?!`)")
_PATHLIKE = re.compile(r"^(?:\./)?[A-Za-z0-9_][\w.\-]*(?:/[\w.\-]+)*/?$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_POINTER = re.compile(r"\b(?:see|read|consult|open|load|follow)\s+(?:the\s+)?$", re.I)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"`[^`]*`")
# A markdown file named in plain text ("see REFERENCE.md", as anthropics/skills' pdf does)
_PLAIN_MD = re.compile(r"(?<![\w./\\:@-])([A-Za-z0-9_][\w.\-]*(?:/[\w.\-]+)*\.md)(?![\w/-]|\.\w)")
# Backticked text counts as a link to one of the skill's files only when it looks like one: a
# path under a folder the skill has or under scripts/ or reference(s)/, or a bare markdown name
# right after "see", "read", ... (`see reference.md`). `output.pdf`, `main.py`, `src/app.ts`,
# `README.md` and "name it `notes.md`" are about the user's files, not the skill's.
_RESOURCE_DIRS = frozenset({"scripts", "references", "reference"})
_PROJECT_FILES = frozenset(
    {
        "readme.md",
        "changelog.md",
        "claude.md",
        "agents.md",
        "contributing.md",
        "license.md",
        "history.md",
        "todo.md",
    }
)


def broken_links(lines: list[str], start: int, folder: Path) -> list[tuple[int, str]]:
    """Relative markdown links, backticked paths that look like the skill's own files, and
    markdown files named in plain text after "see", "read", ...: each that names nothing in
    `folder`, or names a file only by another letter case (found on macOS, missing on Linux).
    Fenced code blocks are skipped (commands, not links)."""
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    listings: dict[Path, list[str]] = {}
    fence: str | None = None
    for number in range(start, len(lines) + 1):
        line = lines[number - 1]
        match = _FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        for raw, is_link, pointed, plain in _targets(line):
            rel = _link_target(raw, is_link, pointed or plain, folder)
            if rel is None or rel in seen:
                continue
            if rel.startswith("../") or rel == "..":
                seen.add(rel)
                message = f"links to {raw!r}, outside the skill folder: an installed skill "
                out.append((number, message + "cannot reach it"))
                continue
            spelled = _spelled(folder, rel, listings)
            if spelled is None and plain and not pointed:
                continue  # a file named in passing, maybe the user's: only a case slip counts
            seen.add(rel)
            if spelled is None:
                message = f"links to {rel!r}, which the skill folder lacks"
            elif spelled != rel:
                message = (
                    f"names {rel!r}, but the file is {spelled!r}: file names are "
                    "case-sensitive on Linux, where the agent will not find it"
                )
            else:
                continue
            out.append((number, message))
    return out


def _targets(line: str) -> list[tuple[str, bool, bool, bool]]:
    """(text, is a markdown link, right after "see"/"read"/..., named in plain text) for each
    file a line may name: its links, its code spans, then markdown files in its prose."""
    found = [(m.group(1), True, True, False) for m in _MD_LINK.finditer(line)]
    found += [
        (m.group(1), False, bool(_POINTER.search(line[: m.start()])), False)
        for m in _CODE_SPAN.finditer(line)
    ]
    prose = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
    prose = _MD_LINK.sub(lambda m: " " * len(m.group(0)), prose)
    found += [
        (m.group(1), False, bool(_POINTER.search(prose[: m.start()])), True)
        for m in _PLAIN_MD.finditer(prose)
    ]
    return found


def _spelled(folder: Path, rel: str, listings: dict[Path, list[str]]) -> str | None:
    """`rel` as the folder spells it: itself when it exists so, else the path matching it
    when letter case is ignored (what a case-insensitive disk opens), else None. Read from
    directory listings, so a case-insensitive disk (macOS) cannot hide a slip."""
    here, parts = folder, []
    for part in rel.split("/"):
        if here not in listings:
            try:
                listings[here] = sorted(os.listdir(here))
            except OSError:
                return None
        names = listings[here]
        if part not in names:
            folded = [n for n in names if n.casefold() == part.casefold()]
            if not folded:
                return None
            part = folded[0]
        parts.append(part)
        here = here / part
    return "/".join(parts)


def _link_target(raw: str, is_link: bool, pointed: bool, folder: Path) -> str | None:
    """The relative path a link or code span names, or None when it is no skill file."""
    if _SCHEME.match(raw) or raw.startswith(("#", "/", "~", "$", "-", "<")):
        return None
    target = unquote(raw.split("#", 1)[0].split("?", 1)[0]) if is_link else raw
    if not target:
        return None
    if not is_link:
        if not _PATHLIKE.match(target) or "*" in target:
            return None
        rel = PurePosixPath(target)
        first = rel.parts[0] if rel.parts and rel.parts[0] != "." else ""
        if len(rel.parts) > 1 and not (first in _RESOURCE_DIRS or (folder / first).is_dir()):
            return None
        if len(rel.parts) == 1 and (
            not pointed or rel.suffix.lower() != ".md" or rel.name.lower() in _PROJECT_FILES
        ):
            return None
    parts = [p for p in PurePosixPath(target).parts if p != "."]
    return "/".join(parts) if parts else None
