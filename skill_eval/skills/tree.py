"""The identity of a whole skill folder: a sha256 over every file's relative path and content.

Links are recorded as links (their target text, never followed), so the hash never reads
outside the folder; entries are sorted, so it is deterministic; files are read in chunks, so a
big file costs no memory. SKILL.md counts as the text under test (`Skill.content`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import SkillError

SKILL_FILE = "SKILL.md"
# Never part of a skill: version control and build caches (installed mode leaves them out too).
IGNORED_NAMES = frozenset({".git", "__pycache__", "node_modules"})
# Left out at the skill's root only: skill-creator keeps a skill's test cases in `evals/`
# (expected outputs, expectations) and leaves it out of the package; the model under test must
# never read the answers it is graded against.
ROOT_IGNORED_NAMES = frozenset({"evals"})
MAX_TREE_FILES = 10_000
_CHUNK = 1 << 16
EntryKind = Literal["file", "exec", "link"]


@dataclass(frozen=True)
class Entry:
    """One entry of a skill folder: `rel` is its POSIX path relative to the folder."""

    rel: str
    kind: EntryKind
    path: Path


def walk(root: Path) -> Iterator[Entry]:
    """Regular files and links below `root`, sorted by relative path. Links to directories are
    entries (never entered); special files (FIFOs, sockets, devices), IGNORED_NAMES and, at
    the root, ROOT_IGNORED_NAMES are left out. Raises SkillError past MAX_TREE_FILES (no
    skill is that big: a wrong folder)."""
    count = 0
    stack = [(root, "")]
    found: list[Entry] = []
    while stack:
        directory, prefix = stack.pop()
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            raise SkillError(
                f"cannot list skill folder {directory}: {exc.strerror}", path=str(directory)
            ) from None
        for name in names:
            if name in IGNORED_NAMES or not prefix and name in ROOT_IGNORED_NAMES:
                continue
            full = directory / name
            rel = f"{prefix}{name}"
            mode = os.lstat(full).st_mode
            if stat.S_ISDIR(mode):
                stack.append((full, rel + "/"))
                continue
            if stat.S_ISLNK(mode):
                found.append(Entry(rel, "link", full))
            elif stat.S_ISREG(mode):
                found.append(Entry(rel, "exec" if mode & 0o111 else "file", full))
            else:
                continue
            count += 1
            if count > MAX_TREE_FILES:
                raise SkillError(
                    f"skill folder {root} holds more than {MAX_TREE_FILES} files; "
                    f"is it the right folder?",
                    path=str(root),
                )
    yield from sorted(found, key=lambda e: e.rel)


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        raise SkillError(f"cannot read skill file {path}: {exc.strerror}", path=str(path)) from None
    return digest.digest()


def tree_sha256(root: Path | None, skill_md: str) -> str:
    """The tree hash of a skill: the folder `root` (None: a skill that is SKILL.md alone) with
    SKILL.md taken as `skill_md`. Each entry adds `kind NUL path NUL sha256(content)`, where a
    link's content is its target text; two folders differing in any file, link, executable
    bit or name differ in hash."""
    digest = hashlib.sha256(b"skill-tree-v1\0")
    entries = [e for e in walk(root) if e.rel != SKILL_FILE] if root is not None else []
    items: list[tuple[str, str, bytes]] = [
        (SKILL_FILE, "file", hashlib.sha256(skill_md.encode("utf-8")).digest())
    ]
    for entry in entries:
        if entry.kind == "link":
            target = os.readlink(entry.path).encode("utf-8", "surrogateescape")
            items.append((entry.rel, "link", hashlib.sha256(target).digest()))
        else:
            items.append((entry.rel, entry.kind, _file_digest(entry.path)))
    for rel, kind, content in sorted(items):
        digest.update(kind.encode() + b"\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(content)
    digest.update(f"entries={len(items)}".encode())
    return digest.hexdigest()
