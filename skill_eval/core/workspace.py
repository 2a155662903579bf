"""Each attempt's working directory, owned by the runner: made before the executor runs,
snapshotted after it, and kept or deleted once the attempt has been judged.

    ws = AttemptWorkspace.create()         # <tmp>/skill-eval-attempt-XXXX/work, both 0700
    ws.copy_in(files)                      # task files; they are the "before" of the snapshot
    request = ExecutionRequest(..., workspace=ws.path)
    snapshot = ws.snapshot()               # files created or changed since, with sha256
    ws.finish(keep=False)                  # delete (keep=True leaves it for rejudge/reading)

The workspace is `work/` inside a private root: an executor may use the root as the agent's
HOME (so tools that look for config in parent directories stop there), and deletes what it
put there itself. Nothing here follows a symlink out of the workspace.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .work import IGNORED_DIRS, FileSnapshot, Snapshot

# Which final workspaces of agent tasks are kept under <run>/workspaces/ (--keep-workspaces).
KeepPolicy = Literal["none", "failed", "all"]
KEEP_POLICIES: tuple[KeepPolicy, ...] = ("none", "failed", "all")

WORKSPACE_PREFIX = "skill-eval-attempt-"
WORKSPACE_DIR = "work"
# The snapshot lists at most this many files, and hashes files up to this size (larger ones
# are listed with their size and an empty sha256): a runaway agent cannot stall the harness.
MAX_FILES = 1000
MAX_HASH_BYTES = 16 * 1024 * 1024


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _regular_files(root: Path) -> list[tuple[str, os.stat_result]]:
    """(relative POSIX path, lstat) of every regular file under `root`, sorted; symlinks and
    special files are skipped, and so are the `IGNORED_DIRS`."""
    found: list[tuple[str, os.stat_result]] = []
    for directory, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in names:
            full = Path(directory) / name
            info = os.lstat(full)
            if stat.S_ISREG(info.st_mode):
                found.append((full.relative_to(root).as_posix(), info))
    return sorted(found, key=lambda item: item[0])


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
        attempt has no files to show)."""
        if not self.path.is_dir():
            return None
        changed: list[FileSnapshot] = []
        truncated = False
        for relative, info in _regular_files(self.path):
            full = self.path / relative
            sha = _sha256_file(full) if info.st_size <= MAX_HASH_BYTES else ""
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
    )


# -- keeping workspaces after judging (--keep-workspaces) -------------------------------------

WORKSPACES_DIR = "workspaces"  # under the run directory: <arm>/<task>/<index>/
# A kept workspace holds at most this many bytes; files beyond it are left out, each named in
# a note beside the kept folder and in the attempt's meta.
KEEP_MAX_BYTES = 20 * 1024 * 1024
LEFT_OUT_SUFFIX = ".left-out.txt"


@dataclass(frozen=True)
class KeptWorkspace:
    path: Path
    left_out: tuple[str, ...] = ()

    def meta(self) -> dict[str, object]:
        out: dict[str, object] = {"kept": str(self.path)}
        if self.left_out:
            out["left_out"] = list(self.left_out)
            out["note"] = (
                f"{len(self.left_out)} file(s) left out of the kept workspace "
                f"(over the {KEEP_MAX_BYTES // (1024 * 1024)} MB cap); see "
                f"{self.path.name}{LEFT_OUT_SUFFIX} beside it"
            )
        return out


def keeps(policy: str | bool, status: str) -> bool:
    """Whether an attempt's workspace is kept: `all`, or `failed` and it did not pass."""
    if isinstance(policy, bool):  # the older boolean setting: True meant keep every one
        return policy
    return policy == "all" or (policy == "failed" and status != "passed")


def preserve(
    workspace: AttemptWorkspace, dest: Path, max_bytes: int = KEEP_MAX_BYTES
) -> KeptWorkspace:
    """Copy the final workspace to `dest` (made fresh; regular files only, symlinks never
    followed), at most `max_bytes` of it, then delete the attempt's root."""
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)  # a resumed run's earlier try of this attempt
    dest.mkdir(parents=True)  # part of the run folder: its mode follows the umask
    used, left_out = 0, []
    for relative, info in _regular_files(workspace.path) if workspace.path.is_dir() else []:
        if used + info.st_size > max_bytes:
            left_out.append(f"{relative} ({info.st_size} bytes)")
            continue
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(workspace.path / relative, target)
        used += info.st_size
    note = dest.parent / f"{dest.name}{LEFT_OUT_SUFFIX}"
    if left_out:
        note.write_text(
            "Left out of this kept workspace (size cap "
            f"{max_bytes} bytes):\n" + "\n".join(left_out) + "\n",
            encoding="utf-8",
        )
    elif note.exists():
        note.unlink()
    workspace.finish(keep=False)
    return KeptWorkspace(dest, tuple(left_out))


def rehomed(snapshot: Snapshot | None, root: Path | None) -> Snapshot | None:
    """The snapshot reading its content from `root` (a kept copy), or detached when None."""
    if snapshot is None or root is None:
        return detached(snapshot)
    return Snapshot(
        files=tuple(FileSnapshot(f.path, f.size, f.sha256, root=root) for f in snapshot.files),
        root=root,
        truncated=snapshot.truncated,
    )
