"""Baseline cache: finished baseline attempts, reused while nothing that shapes them changed.

The key is the run fingerprint (engine/fingerprint.py, the same function `--resume` checks) of the
baseline arm alone: suite and every fixture byte, the baseline skill, executor
kind/version/model/sampling, skill mode, pass_k and samples, judge configs, sources, backend and
model, prompt template and cache schema versions. Concurrency, timeouts, retries and paths are
deliberately left out. Values are JSON in diskcache (never pickle: see jsondisk). A key holds
the attempts of every run that stored some under it (newest first, at most a limit per task:
the oldest are dropped), so later runs pool them (stats/accumulate.py); each run's attempts
live exactly `ttl` seconds, attempts that ended in error are never stored, and an unreadable
entry is a miss with a warning. Long outputs are stored by hash, once, in `<cache>/blobs/`
(core/blobs.py), the entry keeping their preview; entries written before that hold outputs
inline and still hit, as do entries written before runs accumulated (one run).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.blobs import BLOBS_DIR, BlobStore
from ..core.jsondisk import REFUSED_KEY, UnsafeCacheEntry, open_json_cache
from ..core.model import Attempt, Suite
from ..errors import CacheError
from .attempt_store import CACHED_FROM, store_attempt
from .fingerprint import Inputs, fingerprint, ingredients

CACHE_SCHEMA_VERSION = "1"
DEFAULT_TTL_SECONDS = 7 * 24 * 3600


def baseline_key(suite: Suite, inputs: Inputs) -> str:
    """The cache key: the run fingerprint (engine/fingerprint.py) of the baseline arm alone
    (`inputs.skills` holds the baseline's skill only), with the cache's schema version."""
    extra = {"cache_schema": CACHE_SCHEMA_VERSION, **inputs.extra}
    return fingerprint(ingredients(suite, replace(inputs, extra=extra)))


@dataclass(frozen=True)
class CachedRun:
    """One earlier run's baseline attempts under a key: the run's name (its run directory's),
    when it stored them, and its attempts (none in error) with the indices it gave them."""

    run_id: str
    created_at: float
    attempts: tuple[Attempt, ...]
    # What answered: the model ids the attempts name and the agent's version (the drift
    # guard pools only runs like this one's: engine/baseline_reuse.py); () / None: unrecorded.
    models: tuple[str, ...] = ()
    agent_version: str | None = None


@dataclass(frozen=True)
class CachedBaseline:
    """What a key holds: the runs that stored attempts under it, newest first, none expired;
    `created_at` and `age_seconds` are the newest run's."""

    key: str
    runs: tuple[CachedRun, ...]
    created_at: float
    age_seconds: float

    @property
    def attempts(self) -> tuple[Attempt, ...]:
        """Every cached attempt, the newest run's first."""
        return tuple(a for run in self.runs for a in run.attempts)


def drawn_from(attempt: Attempt) -> str | None:
    """The run a baseline attempt was drawn from the cache from; None for the run's own."""
    origin = attempt.meta.get(CACHED_FROM)
    return str(origin.get("run_id")) if isinstance(origin, Mapping) else None


KEEP_AS_RECORDED = sys.maxsize  # store_attempt's preview size that previews nothing again


def _stored_runs(value: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The run records of an entry, newest first. An entry written before runs accumulated
    (`{"created_at", "attempts"}`) is one run, named by when it was stored."""
    if "runs" in value:
        runs = value["runs"]
        if not isinstance(runs, list):
            raise TypeError("runs is not a list")
        return [dict(r) for r in runs]
    created = float(value["created_at"])
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(created))
    return [{"run_id": f"cached-{stamp}", "created_at": created, "attempts": value["attempts"]}]


def _bounded(runs: Sequence[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The runs (newest first) with at most `limit` attempts per task over all of them: the
    newest kept, the oldest dropped; a run left with none is dropped."""
    if limit is None:
        return list(runs)
    held: dict[str, int] = {}
    kept = []
    for run in runs:
        mine = []
        for attempt in run["attempts"]:
            task = str(attempt["task_id"])
            if held.get(task, 0) < limit:
                held[task] = held.get(task, 0) + 1
                mine.append(attempt)
        if mine:
            kept.append({**run, "attempts": mine})
    return kept


class BaselineCache:
    """Baseline attempts per key, as the runs that made them stored them: each run adds its
    own (`put`), up to a limit per task (the oldest dropped), each run's expiring `ttl`
    seconds after it stored them."""

    def __init__(
        self,
        directory: Path,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        warn: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.ttl = ttl_seconds
        self.warn = warn or (lambda message: None)
        self.clock = clock
        self._cache = open_json_cache(directory)

    def _live(self, runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        now = self.clock()
        return [r for r in runs if 0 <= now - float(r["created_at"]) < self.ttl]

    def get(self, key: str) -> CachedBaseline | None:
        try:
            value = self._cache.get(key)
            if value is None:
                return None
            runs = tuple(
                CachedRun(
                    str(run["run_id"]),
                    float(run["created_at"]),
                    tuple(
                        a
                        for a in (
                            Attempt.from_dict(data, blob_root=self.directory)
                            for data in run["attempts"]
                        )
                        if a.status != "error"
                    ),
                    tuple(str(m) for m in run.get("models") or ()),
                    None if run.get("agent_version") is None else str(run["agent_version"]),
                )
                for run in self._live(_stored_runs(value))
            )
        except Exception as exc:  # corrupt, unsafe or foreign entry: a miss, never a crash
            self.warn(f"baseline cache entry {key[:12]} is unreadable ({exc}); ignoring it")
            return None
        if not runs:
            return None
        newest = max(run.created_at for run in runs)
        return CachedBaseline(key, runs, newest, self.clock() - newest)

    def put(
        self,
        key: str,
        attempts: Sequence[Attempt],
        *,
        run_id: str | None = None,
        limit: int | None = None,
        created_at: float | None = None,
        models: Sequence[str] = (),
        agent_version: str | None = None,
    ) -> int:
        """Add one run's attempts that did not end in error under `key`, beside the runs
        already there (newest first; a run of the same `run_id`, a resumed one, is replaced),
        keeping at most `limit` attempts per task over all runs (the oldest dropped), with the
        `models` that answered them and the `agent_version`. Returns how many of these
        attempts were stored."""
        created = created_at if created_at is not None else self.clock()
        keep = [a for a in attempts if a.status != "error"]
        if self.ttl - (self.clock() - created) <= 0 or not keep:
            return 0
        name = run_id or f"run-{created:.0f}"
        try:
            store = BlobStore(self.directory)
            # as the run recorded them: its journal already kept long outputs as previews (at
            # its --max-preview-chars); a hit re-previews them at the new run's setting
            mine = [store_attempt(a, store, KEEP_AS_RECORDED).to_dict() for a in keep]
            with self._cache.transact():  # two runs adding at once both land
                runs = self._runs_for_update(key)
                earlier = [r for r in runs if r.get("run_id") == name]
                if earlier:  # a resumed run keeps the time it first stored attempts
                    created = min(created, float(earlier[0]["created_at"]))
                runs = [r for r in runs if r.get("run_id") != name]
                fresh = {
                    "run_id": name,
                    "created_at": created,
                    "attempts": mine,
                    "models": list(models),
                    "agent_version": agent_version,
                }
                newest_first = sorted([fresh, *runs], key=lambda r: -float(r["created_at"]))
                runs = _bounded(self._live(newest_first), limit)
                self._write(key, runs)
        except Exception as exc:
            self.warn(f"could not write the baseline cache ({exc}); results are unaffected")
            return 0
        return sum(1 for run in runs if run["run_id"] == name for _ in run["attempts"])

    def _runs_for_update(self, key: str) -> list[dict[str, Any]]:
        """The stored runs under `key`; an unreadable entry is replaced (with a warning)."""
        try:
            value = self._cache.get(key)
            return [] if value is None else _stored_runs(value)
        except Exception as exc:
            self.warn(f"baseline cache entry {key[:12]} is unreadable ({exc}); replacing it")
            return []

    def _write(self, key: str, runs: list[dict[str, Any]]) -> None:
        if not runs:
            self._cache.delete(key)
            return
        newest = max(float(r["created_at"]) for r in runs)
        last = max(float(r["created_at"]) + self.ttl for r in runs) - self.clock()
        self._cache.set(key, {"created_at": newest, "runs": runs}, expire=last)

    def info(self) -> dict[str, Any]:
        entries = []
        now = self.clock()
        for key in list(self._cache.iterkeys()):
            try:
                if key == REFUSED_KEY:
                    raise UnsafeCacheEntry(key)
                runs = _stored_runs(self._cache.get(key))
                entries.append(
                    {
                        "key": key,
                        "age_seconds": round(now - max(float(r["created_at"]) for r in runs)),
                        "attempts": sum(len(r["attempts"]) for r in runs),
                        "runs": len(runs),
                    }
                )
            except Exception as exc:
                entries.append({"key": str(key), "error": str(exc)})
        blobs = self.directory / BLOBS_DIR
        stored = (
            sum(p.stat().st_size for p in blobs.iterdir() if p.is_file()) if blobs.is_dir() else 0
        )
        return {
            "directory": str(self.directory),
            "entries": entries,
            "size_bytes": self._cache.volume() + stored,
            "blob_bytes": stored,
            "ttl_seconds": self.ttl,
        }

    def clear(self) -> int:
        shutil.rmtree(self.directory / BLOBS_DIR, ignore_errors=True)
        return int(self._cache.clear())

    def close(self) -> None:
        self._cache.close()


def clear_directory(directory: Path) -> int:
    """Remove a diskcache directory's own files (cache.db* and its value folders), nothing
    else; for a cache too corrupt to open. Returns how many files went."""
    removed = 0
    for path in (
        list(directory.glob("cache.db*"))
        + [p for p in directory.glob("[0-9a-f][0-9a-f]") if p.is_dir()]
        + [p for p in (directory / BLOBS_DIR,) if p.is_dir()]
    ):
        if path.is_dir():
            removed += sum(1 for f in path.rglob("*") if f.is_file())
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def parse_duration(text: str) -> float:
    """'7d', '12h', '30m', '45s' or plain seconds."""
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    raw = text.strip().lower()
    try:
        if raw and raw[-1] in units:
            value = float(raw[:-1]) * units[raw[-1]]
        else:
            value = float(raw)
    except ValueError:
        raise CacheError(f"not a duration: {text!r} (use e.g. 7d, 12h, 3600)") from None
    if not 0 < value < 100 * 365 * 86400:  # also refuses nan and inf
        raise CacheError(f"duration must be positive and finite: {text!r}")
    return value
