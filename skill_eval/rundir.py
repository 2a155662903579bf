"""Run directories under `<state-root>/runs/`: one per run, holding `run.json` (what the run
is) and the `attempts.jsonl` journal. A new run never reuses a directory; `--resume` reopens
one, checking that it was made with the same inputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError
from .paths import atomic_write_text, inside

RUN_META = "run.json"


@dataclass(frozen=True)
class RunDir:
    path: Path
    run_id: str
    resumed: bool


def _meta(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / RUN_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def latest_matching(state_root: Path, fingerprint: str) -> Path | None:
    """The most recent run directory made with these inputs."""
    found = [(p.stat().st_mtime, p) for p in (state_root / "runs").glob("*")
             if (_meta(p) or {}).get("fingerprint") == fingerprint]
    return max(found)[1] if found else None


def open_run_dir(state_root: Path, *, label: str, run_id: str, fingerprint: str,
                 resume: str | None, info: dict[str, Any],
                 warn: Callable[[str], None] = lambda message: None) -> RunDir:
    """Create a new run directory, or reopen one for `--resume` (`resume` is a directory, or
    "" for the latest run with the same fingerprint). `label` names new directories."""
    if resume is not None:
        path = Path(resume) if resume else latest_matching(state_root, fingerprint)
        if path is not None:
            meta = _meta(path)
            if meta is None:
                raise UsageError(f"--resume {path}: not a run directory (no readable {RUN_META})")
            if meta.get("fingerprint") != fingerprint:
                raise UsageError(f"--resume {path}: that run used other inputs (suite, skills, "
                                 "executor, model or pass-k differ); start a new run instead")
            if not inside(state_root, path):
                warn(f"--resume {path}: that run lives outside --state-root {state_root}; "
                     "continuing it there")
            return RunDir(path.resolve(), str(meta.get("run_id") or run_id), True)
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
    atomic_write_text(path / RUN_META, json.dumps(
        {"run_id": run_id, "fingerprint": fingerprint, **info}, indent=2) + "\n")
    return RunDir(path.resolve(), run_id, False)
