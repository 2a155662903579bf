"""Run directories under `<state-root>/runs/`: one per run, holding `run.json` (the run
manifest: what the run is, versioned by `schema_version`) and the `attempts.jsonl` journal.
A new run never reuses a directory; `--resume` reopens one, checking that it was made with
the same inputs; `rejudge` reads the manifest back with `load_manifest`."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core.paths import atomic_write_text, inside
from ..errors import UsageError
from ..plan.run_plan import RunPlan
from ..plan.stored import plan_from_dict, plan_from_options
from .fingerprint import changed

RUN_META = "run.json"
# Version of run.json. 1: the first with a version (files without one are read as version 0,
# which has the same shape). 2: the run's settings as the sectioned `plan` (RunPlan.to_dict)
# instead of the flat `options`; both are read. A newer version is read too, with a warning:
# unknown keys drop.
RUN_SCHEMA_VERSION = 2


LOCK_NAME = "run.lock"


@dataclass(frozen=True)
class RunDir:
    """An open run directory. While `lock` is open this process holds the directory's lock
    (flock on run.lock): no other process runs its attempts. `release()` lets go."""

    path: Path
    run_id: str
    resumed: bool
    lock: IO[str] | None = field(default=None, compare=False, repr=False)

    def release(self) -> None:
        """Remove run.lock and let go of it: removed while still held, so a process that
        opened it meanwhile finds, once it holds it, that it is gone (see _lock)."""
        if self.lock is not None and not self.lock.closed:
            (self.path / LOCK_NAME).unlink(missing_ok=True)
            self.lock.close()  # closing the descriptor drops the flock


def _lock(path: Path) -> IO[str]:
    """Hold run.lock of a run directory, or a UsageError when another process holds it. A
    lock file removed (by its holder's release) between our open and our flock is not the
    directory's lock any more: open it again."""
    while True:
        handle = (path / LOCK_NAME).open("a", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise UsageError(
                f"{path}: another skill-eval process is running this run (it holds "
                f"{LOCK_NAME}); wait for it to finish, or start a new run"
            ) from None
        try:
            current = os.stat(path / LOCK_NAME).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(handle.fileno()).st_ino:
            return handle
        handle.close()


def _meta(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / RUN_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def latest_matching(state_root: Path, fingerprint: str) -> Path | None:
    """The most recent run directory made with these inputs."""
    found = [
        (p.stat().st_mtime, p)
        for p in (state_root / "runs").glob("*")
        if (_meta(p) or {}).get("fingerprint") == fingerprint
    ]
    return max(found)[1] if found else None


def open_run_dir(
    state_root: Path,
    *,
    label: str,
    run_id: str,
    fingerprint: str,
    resume: str | None,
    info: dict[str, Any],
    warn: Callable[[str], None] = lambda message: None,
    ingredients: Mapping[str, str] | None = None,
) -> RunDir:
    """Create a new run directory, or reopen one for `--resume` (`resume` is a directory, or
    "" for the latest run with the same fingerprint). `label` names new directories. The
    directory comes back locked (RunDir.lock). `ingredients` (fingerprint.ingredients) go into
    run.json, so a refused resume names what changed."""
    if resume is not None:
        path = Path(resume) if resume else latest_matching(state_root, fingerprint)
        if path is not None:
            meta = _meta(path)
            if meta is None:
                raise UsageError(f"--resume {path}: not a run directory (no readable {RUN_META})")
            if meta.get("fingerprint") != fingerprint:
                raise UsageError(
                    f"--resume {path}: that run used other inputs "
                    f"({_what_changed(meta, ingredients)}); start a new run "
                    "instead"
                )
            if not inside(state_root, path):
                warn(
                    f"--resume {path}: that run lives outside --state-root {state_root}; "
                    "continuing it there"
                )
            return RunDir(path.resolve(), str(meta.get("run_id") or run_id), True, _lock(path))
    runs = state_root / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    path, n = runs / label, 1
    while True:  # mkdir is the claim: two runs started at once never share a directory
        try:
            path.mkdir()
            break
        except FileExistsError:
            n += 1
            path = runs / f"{label}-{n}"
    lock = _lock(path)  # before run.json: a --resume that finds it finds it locked
    atomic_write_text(
        path / RUN_META,
        json.dumps(
            {
                "schema_version": RUN_SCHEMA_VERSION,
                "run_id": run_id,
                "fingerprint": fingerprint,
                **({"ingredients": dict(ingredients)} if ingredients else {}),
                **info,
            },
            indent=2,
        )
        + "\n",
    )
    return RunDir(path.resolve(), run_id, False, lock)


def _what_changed(meta: Mapping[str, Any], ingredients: Mapping[str, str] | None) -> str:
    old = meta.get("ingredients")
    if not isinstance(old, Mapping) or not ingredients:
        return "suite, fixtures, judges, skills, executor, model, pass-k or samples differ"
    names = changed(old, ingredients)
    return "changed: " + ", ".join(names) if names else "its fingerprint differs"


@dataclass(frozen=True)
class RunManifest:
    """What `run.json` says of a run: its plan and its arms (as `arms_to_dict` wrote them)."""

    path: Path
    schema_version: int
    run_id: str
    plan: RunPlan
    arms: Mapping[str, Any]
    arm_executors: Mapping[str, Any] = field(default_factory=dict)  # --arm: as the run had


def load_manifest(
    run_path: Path, warn: Callable[[str], None] = lambda message: None
) -> RunManifest:
    """Read a run directory's manifest: the sectioned `plan` (schema_version 2), or the flat
    `options` of older runs. Keys this version does not know are dropped with a warning and
    missing optional ones take their defaults; what cannot be used at all is a UsageError
    naming the file and the key, never a traceback."""
    where = run_path / RUN_META
    meta = _meta(run_path)
    stored = None if meta is None else meta.get("plan", meta.get("options"))
    if meta is None or not isinstance(stored, Mapping) or not isinstance(meta.get("arms"), Mapping):
        raise UsageError(
            f"{run_path}: not a run directory made by this version of skill-eval "
            f"(no usable {RUN_META})"
        )
    version = meta.get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise UsageError(f"{where}: schema_version: must be an integer, got {version!r}")
    if version > RUN_SCHEMA_VERSION:
        warn(
            f"{where}: schema_version {version} is newer than this skill-eval reads "
            f"({RUN_SCHEMA_VERSION}); reading what it knows"
        )
    if "plan" in meta:
        plan = plan_from_dict(stored, where=f"{where}: plan", warn=warn)
    else:
        plan = plan_from_options(stored, where=f"{where}: options", warn=warn)
    return RunManifest(
        path=run_path,
        schema_version=version,
        run_id=str(meta.get("run_id") or ""),
        plan=plan,
        arms=meta["arms"],
        arm_executors=found if isinstance(found := meta.get("arm_executors"), Mapping) else {},
    )
