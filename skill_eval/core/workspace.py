"""Each attempt's working directory, owned by the runner: made before the executor runs,
snapshotted after it, and kept or deleted once the attempt has been judged.

    ws = AttemptWorkspace.create()         # <tmp>/skill-eval-attempt-XXXX/work, both 0700
    ws.copy_in(files)                      # task files; they are the "before" of the snapshot
    request = ExecutionRequest(..., workspace=ws.path)
    snapshot = ws.snapshot()               # files created or changed since, with sha256
    ws.finish(keep=False)                  # delete (keep=True leaves it for rejudge/reading)

The workspace is `work/` inside a private root: an executor may use the root as the agent's
HOME (so tools that look for config in parent directories stop there), and deletes what it
put there itself. Nothing here follows a symlink out of the workspace, and nothing reads all
of it: a walk stops at MAX_WORKSPACE_FILES files (core/bounded.py) and only counts the rest; a
workspace over it gets a snapshot with a `problem`, and the attempt fails unjudged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .bounded import (
    COUNT_CEILING,
    MAX_HASHED_BYTES,
    MAX_KEPT_FILES,
    MAX_WORKSPACE_FILES,
    SHOWN_NAMES,
)
from .work import IGNORED_DIRS, FileSnapshot, Snapshot

# Which final workspaces of agent tasks are kept under <run>/workspaces/ (--keep-workspaces).
KeepPolicy = Literal["none", "failed", "all"]
KEEP_POLICIES: tuple[KeepPolicy, ...] = ("none", "failed", "all")

WORKSPACE_PREFIX = "skill-eval-attempt-"
WORKSPACE_DIR = "work"
# The snapshot lists at most this many changed files, and hashes files up to this size (larger
# ones, and any past MAX_HASHED_BYTES in all, are listed with their size and an empty sha256):
# a runaway agent cannot stall the harness.
MAX_FILES = 1000
MAX_HASH_BYTES = 16 * 1024 * 1024


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Listing:
    """Regular files under a root: at most `limit` of them with their lstat, sorted by
    path (all of them when `total` is not over the limit), and how many there are in all
    (counted up to COUNT_CEILING)."""

    files: list[tuple[str, os.stat_result]]
    total: int
    limit: int

    @property
    def over(self) -> bool:
        return self.total > self.limit

    def problem(self) -> str | None:
        """Why an attempt with this workspace is not judged; None when it is within bounds."""
        if not self.over:
            return None
        count = f"more than {self.total:,}" if self.total >= COUNT_CEILING else f"{self.total:,}"
        return (
            f"the workspace holds {count} files, over the {self.limit:,} skill-eval reads of "
            "one attempt: not judged"
        )


def list_files(root: Path, limit: int = MAX_WORKSPACE_FILES) -> Listing:
    """The regular files under `root` (symlinks and special files skipped, `IGNORED_DIRS`
    not entered, links never followed): the first `limit` found, and a count of the rest
    that never stats or keeps them."""
    found: list[tuple[str, os.stat_result]] = []
    total = 0
    stack = [(root, "")]
    while stack and total < COUNT_CEILING:
        directory, prefix = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in IGNORED_DIRS:
                        stack.append((Path(entry.path), f"{prefix}{entry.name}/"))
                elif entry.is_file(follow_symlinks=False):
                    total += 1
                    if len(found) < limit:
                        found.append((f"{prefix}{entry.name}", entry.stat(follow_symlinks=False)))
                    elif total >= COUNT_CEILING:
                        break
    return Listing(sorted(found, key=lambda item: item[0]), total, limit)


@dataclass
class AttemptWorkspace:
    """One attempt's workspace directory and what was in it before the attempt ran."""

    root: Path
    before: dict[str, str] = field(default_factory=dict)  # relative path -> sha256

    @property
    def path(self) -> Path:
        return self.root / WORKSPACE_DIR

    @classmethod
    def create(cls, parent: Path | None = None) -> AttemptWorkspace:
        """A fresh private directory (mkdtemp makes it 0700) with an empty `work/`."""
        root = Path(tempfile.mkdtemp(prefix=WORKSPACE_PREFIX, dir=str(parent) if parent else None))
        (root / WORKSPACE_DIR).mkdir(mode=0o700)
        return cls(root=root)

    def copy_in(self, files: Mapping[str, Path]) -> None:
        """Copy task files in (relative destination -> source file); they are the baseline
        the snapshot compares with, so an untouched copy is not reported as changed."""
        for relative, source in files.items():
            target = (self.path / relative).resolve()
            if not target.is_relative_to(self.path.resolve()):
                raise ValueError(f"{relative}: would land outside the workspace")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            self.before[Path(relative).as_posix()] = _sha256_file(target)

    def snapshot(self) -> Snapshot | None:
        """The files created or changed since `copy_in`; None when there are none (a text
        attempt has no files to show). A workspace over MAX_WORKSPACE_FILES gives a snapshot
        of its first SHOWN_NAMES files, unhashed, with the `problem` that fails the attempt."""
        if not self.path.is_dir():
            return None
        listing = list_files(self.path)
        if listing.over:
            shown = tuple(
                FileSnapshot(path=rel, size=info.st_size, sha256="", root=self.path)
                for rel, info in listing.files[:SHOWN_NAMES]  # enough to show what it was
            )
            return Snapshot(shown, self.path, truncated=True, problem=listing.problem())
        changed: list[FileSnapshot] = []
        truncated = False
        budget = MAX_HASHED_BYTES
        for relative, info in listing.files:
            hashed = info.st_size <= min(MAX_HASH_BYTES, budget)
            sha = _sha256_file(self.path / relative) if hashed else ""
            budget -= info.st_size if hashed else 0
            if sha and self.before.get(relative) == sha:
                continue
            if len(changed) >= MAX_FILES:
                truncated = True
                break
            changed.append(
                FileSnapshot(path=relative, size=info.st_size, sha256=sha, root=self.path)
            )
        if not changed:
            return None
        return Snapshot(files=tuple(changed), root=self.path, truncated=truncated)

    def finish(self, *, keep: bool) -> Path | None:
        """Keep the workspace (its path returned) or delete the whole attempt root."""
        if keep:
            return self.path
        shutil.rmtree(self.root, ignore_errors=True)
        return None


def detached(snapshot: Snapshot | None) -> Snapshot | None:
    """The snapshot once its workspace is deleted: the hashes stay, the content is gone."""
    if snapshot is None:
        return None
    return Snapshot(
        files=tuple(FileSnapshot(f.path, f.size, f.sha256) for f in snapshot.files),
        truncated=snapshot.truncated,
        problem=snapshot.problem,
    )


# -- keeping workspaces after judging (--keep-workspaces) -------------------------------------

WORKSPACES_DIR = "workspaces"  # under the run directory: <arm>/<task>/<index>/
# A kept workspace holds at most this many bytes; files beyond it are left out, each named in
# a note beside the kept folder and in the attempt's meta.
KEEP_MAX_BYTES = 20 * 1024 * 1024
LEFT_OUT_SUFFIX = ".left-out.txt"
NOTE_NAMES = 1000  # names in that note; the rest are counted


@dataclass(frozen=True)
class KeptWorkspace:
    """A kept workspace; `left_out` names the first files left out of it (SHOWN_NAMES at
    most), `left_out_count` counts them all."""

    path: Path
    left_out: tuple[str, ...] = ()
    left_out_count: int = 0

    def meta(self) -> dict[str, object]:
        out: dict[str, object] = {"kept": str(self.path)}
        if self.left_out_count:
            more = self.left_out_count - len(self.left_out)
            out["left_out"] = [*self.left_out, *([f"... and {more:,} more"] if more else [])]
            out["note"] = (
                f"{self.left_out_count:,} file(s) left out of the kept workspace (over the "
                f"{KEEP_MAX_BYTES // (1024 * 1024)} MB or {MAX_KEPT_FILES:,}-file cap); see "
                f"{self.path.name}{LEFT_OUT_SUFFIX} beside it"
            )
        return out


def keeps(policy: str | bool, status: str) -> bool:
    """Whether an attempt's workspace is kept: `all`, or `failed` and it did not pass."""
    if isinstance(policy, bool):  # the older boolean setting: True meant keep every one
        return policy
    return policy == "all" or (policy == "failed" and status != "passed")


def preserve(
    workspace: AttemptWorkspace,
    dest: Path,
    max_bytes: int = KEEP_MAX_BYTES,
    max_files: int = MAX_KEPT_FILES,
) -> KeptWorkspace:
    """Copy the final workspace to `dest` (made fresh; regular files only, symlinks never
    followed), at most `max_bytes` and `max_files` of it, then delete the attempt's root.
    What is left out is named in a note beside the copy (the first NOTE_NAMES names)."""
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)  # a resumed run's earlier try of this attempt
    dest.mkdir(parents=True)  # part of the run folder: its mode follows the umask
    listing = list_files(workspace.path) if workspace.path.is_dir() else Listing([], 0, 0)
    used, kept, left_out = 0, 0, []
    for relative, info in listing.files:
        if used + info.st_size > max_bytes or kept >= max_files:
            left_out.append(f"{relative} ({info.st_size} bytes)")
            continue
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(workspace.path / relative, target, follow_symlinks=False)
        used, kept = used + info.st_size, kept + 1
    count = len(left_out) + listing.total - len(listing.files)  # the unlisted rest too
    note = dest.parent / f"{dest.name}{LEFT_OUT_SUFFIX}"
    if count:
        more = count - min(len(left_out), NOTE_NAMES)
        note.write_text(
            f"Left out of this kept workspace (caps: {max_bytes} bytes, {max_files} files):\n"
            + "".join(f"{name}\n" for name in left_out[:NOTE_NAMES])
            + (f"... and {more:,} more\n" if more else ""),
            encoding="utf-8",
        )
    elif note.exists():
        note.unlink()
    workspace.finish(keep=False)
    return KeptWorkspace(dest, tuple(left_out[:SHOWN_NAMES]), count)


def rehomed(snapshot: Snapshot | None, root: Path | None) -> Snapshot | None:
    """The snapshot reading its content from `root` (a kept copy), or detached when None."""
    if snapshot is None or root is None:
        return detached(snapshot)
    return Snapshot(
        files=tuple(FileSnapshot(f.path, f.size, f.sha256, root=root) for f in snapshot.files),
        root=root,
        truncated=snapshot.truncated,
        problem=snapshot.problem,
    )
