"""Shipping attempts to another machine: what a job needs from the driver's disk, packed as
plain bytes (`Bundle`), unpacked once per bundle on the worker, and the job rewritten to read
it there (`localise`); a kept workspace travels back the same way (`pack_kept`/`unpack_kept`).

A bundle holds the suite folder's `fixtures/` tree, every task's input files, every file a
judge names, and each arm's skill folder: all a job reads from disk besides the executor's
own binaries. The worker's copy lives under `<tmp>/skill-eval-bundles/<digest>/`, made once
per bundle by an atomic rename, so the attempts of one run on one node share it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.model import Arm, Task
from ..core.task_files import expand_task_files
from ..core.workspace import rehomed
from .fingerprint import _fixture_paths
from .jobs import AttemptJob, Finished, kept_workspace_dir

BUNDLES_DIR = "skill-eval-bundles"
SUITE, SKILLS = "suite", "skills"
# A bundle larger than this is a mistake (a dataset under fixtures/, a venv in a skill folder).
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
# Unpacked bundles not used for this long are deleted when a new one is unpacked beside them
# (a long-lived cluster would otherwise keep every run's files).
BUNDLE_TTL_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Bundle:
    """Files by bundle-relative POSIX path (`suite/...`, `skills/<n>/...`), and which skill
    folder each arm's skill came from (arm name -> `skills/<n>`)."""

    files: Mapping[str, bytes]
    skills: Mapping[str, str]

    @property
    def digest(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
            digest.update(hashlib.sha256(self.files[name]).digest())
        for arm, where in sorted(self.skills.items()):
            digest.update(f"{arm}\0{where}\0".encode())
        return digest.hexdigest()


def _tree(root: Path) -> dict[str, Path]:
    """Relative POSIX path -> file of every regular file below `root` (no symlink followed)."""
    out: dict[str, Path] = {}
    for top, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            full = Path(top) / name
            if full.is_file() and not full.is_symlink():
                out[full.relative_to(root).as_posix()] = full
    return out


def build_bundle(suite_dir: Path, tasks: Iterable[Task], arms: Iterable[Arm]) -> Bundle:
    """Everything jobs of these tasks and arms read from the driver's disk (the suite folder
    is where fixtures and task files resolve)."""
    sources: dict[str, Path] = {}
    for rel, path in (
        _tree(suite_dir / "fixtures").items() if (suite_dir / "fixtures").is_dir() else ()
    ):
        sources[f"{SUITE}/fixtures/{rel}"] = path
    for task in tasks:
        for rel, path in expand_task_files(task.files, suite_dir).items():
            sources[f"{SUITE}/{rel}"] = path
        for rel in _fixture_paths(dict(task.judge)):
            if _safe(rel) and (suite_dir / rel).is_file():
                sources[f"{SUITE}/{PurePosixPath(rel).as_posix()}"] = suite_dir / rel
    skills: dict[str, str] = {}
    folders: dict[Path, str] = {}
    for arm in arms:
        folder = arm.skill.directory if arm.skill else None
        if folder is None or not folder.is_dir():
            continue
        where = folders.setdefault(folder.resolve(), f"{SKILLS}/{len(folders)}")
        skills[arm.name] = where
        for rel, path in _tree(folder).items():
            sources[f"{where}/{rel}"] = path
    total = sum(path.stat().st_size for path in sources.values())
    if total > MAX_BUNDLE_BYTES:
        raise ValueError(
            f"the suite's files and skill folders hold {total} bytes, more than "
            f"the {MAX_BUNDLE_BYTES // (1024 * 1024)} MB a shipped job may carry"
        )
    return Bundle({name: path.read_bytes() for name, path in sources.items()}, skills)


def _safe(rel: str) -> bool:
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    return bool(parts) and not rel.startswith(("/", "\\")) and ".." not in parts


def materialise(bundle: Bundle, base: Path | None = None) -> Path:
    """The bundle's files under `<base>/skill-eval-bundles/<digest>/` (made once; two
    workers racing both write a copy and one rename wins)."""
    parent = (base or Path(tempfile.gettempdir())) / BUNDLES_DIR
    target = parent / bundle.digest
    if target.is_dir():
        os.utime(target)  # in use: not pruned
        return target
    parent.mkdir(parents=True, exist_ok=True)
    _prune(parent)
    scratch = Path(tempfile.mkdtemp(prefix=f"{bundle.digest[:12]}-", dir=parent))
    write_files(scratch, bundle.files)
    try:
        os.rename(scratch, target)
    except OSError:  # another worker got there first: theirs is the same
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _prune(parent: Path) -> None:
    cutoff = time.time() - BUNDLE_TTL_SECONDS
    for old in parent.iterdir():
        try:
            if old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


def write_files(root: Path, files: Mapping[str, bytes]) -> None:
    """Write `files` (relative POSIX paths) under `root`, refusing any that would leave it."""
    for name, content in files.items():
        if not _safe(name):
            raise ValueError(f"{name!r}: not a relative path inside the bundle")
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def localise(job: AttemptJob, root: Path, bundle: Bundle, keep_root: Path | None) -> AttemptJob:
    """The job reading its suite, fixtures, task files and skill from the bundle unpacked at
    `root`; kept workspaces go to `keep_root` (a local scratch directory) for the trip back."""
    spec = job.run
    if spec is None:
        raise ValueError("a shipped job needs its run spec")
    cache = spec.judging.cache
    if cache not in (None, "memory") and not Path(str(cache)).is_dir():
        cache = "memory"  # the driver's judge cache is not on this machine's disk
    judging = replace(spec.judging, suite_dir=root / SUITE, cache=cache)
    workspaces = replace(
        spec.workspaces, parent=None, keep_root=keep_root if spec.workspaces.keep_root else None
    )
    arm = job.arm
    if arm.skill is not None and arm.name in bundle.skills:
        arm = replace(arm, skill=replace(arm.skill, directory=root / bundle.skills[arm.name]))
    return replace(job, arm=arm, run=replace(spec, judging=judging, workspaces=workspaces))


def pack_kept(finished: Finished) -> dict[str, bytes]:
    """The files of the attempt's kept workspace (and its left-out note), to send back; the
    local copy is deleted."""
    attempt = finished.attempt
    kept = (attempt.meta.get("workspace") or {}).get("kept") if attempt else None
    if not isinstance(kept, str) or not Path(kept).is_dir():
        return {}
    files = {rel: path.read_bytes() for rel, path in _tree(Path(kept)).items()}
    shutil.rmtree(kept, ignore_errors=True)
    return files


def unpack_kept(finished: Finished, files: Mapping[str, bytes], keep_root: Path | None) -> Finished:
    """Put a shipped-back kept workspace where the driver keeps it (`<keep_root>/<arm>/<task>/
    <index>`) and point the attempt at it."""
    attempt = finished.attempt
    if attempt is None or keep_root is None or "workspace" not in attempt.meta:
        return finished
    dest = kept_workspace_dir(keep_root, attempt.arm, attempt.task_id, attempt.index)
    if dest.exists():
        shutil.rmtree(dest, ignore_errors=True)  # a resumed run's earlier try of this attempt
    dest.mkdir(parents=True)  # part of the run folder: its mode follows the umask
    write_files(dest, files)
    meta: dict[str, Any] = {
        **attempt.meta,
        "workspace": {**attempt.meta["workspace"], "kept": str(dest)},
    }
    return replace(
        finished, attempt=replace(attempt, meta=meta, files=rehomed(attempt.files, dest))
    )
