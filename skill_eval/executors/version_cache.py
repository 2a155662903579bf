"""`claude --version` remembered by binary: Node start-up makes the probe cost 0.3-1 s, and it
ran before every run's first attempt (the version is part of the run's fingerprint, so it is
needed before the run directory is opened). Kept in the state root as JSON, keyed by the
binary's real path and invalidated by its modification time and size: an upgrade in place
changes both, so a stale version is never reported."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.paths import atomic_write_text

VERSION_CACHE_NAME = "claude-versions.json"
_MAX_ENTRIES = 32  # binaries come and go (npm upgrades); the file stays small


def _stamp(binary: str) -> tuple[str, list[int]] | None:
    try:
        real = os.path.realpath(binary)
        info = os.stat(real)
    except OSError:
        return None
    return real, [info.st_mtime_ns, info.st_size]


def _read(cache_file: Path) -> dict[str, Any]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent or damaged: probe again, rewrite it
        return {}
    return data if isinstance(data, dict) else {}


def cached_version(
    binary: str, cache_file: Path | None, probe: Callable[[], str | None]
) -> str | None:
    """The version of `binary`: from `cache_file` when the binary is unchanged since it was
    stored, else from `probe()` (stored when it gave a real answer)."""
    stamp = _stamp(binary)
    if cache_file is None or stamp is None:
        return probe()
    real, mark = stamp
    entries = _read(cache_file)
    entry = entries.get(real)
    if (
        isinstance(entry, dict)
        and entry.get("stamp") == mark
        and isinstance(entry.get("version"), str)
    ):
        return str(entry["version"])
    version = probe()
    if not version or version.startswith("unknown"):
        return version  # a failed probe is not remembered
    entries.pop(real, None)
    entries[real] = {"stamp": mark, "version": version}
    kept = dict(list(entries.items())[-_MAX_ENTRIES:])
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_file, json.dumps(kept, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only state root: the run goes on, the next one probes again
    return version


def probe_version(binary: str, home: Path, env: dict[str, str]) -> str:
    """Run `binary --version` in `home` (an empty temp dir) with `env`."""
    (home / ".claude").mkdir()
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=60, cwd=home, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({type(exc).__name__})"
    return done.stdout.strip() or done.stderr.strip()


__all__ = ["VERSION_CACHE_NAME", "cached_version", "probe_version"]
