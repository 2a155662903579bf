"""Baseline cache: finished baseline attempts, reused while nothing that shapes them changed.

The key is the run fingerprint (engine/fingerprint.py, the same function `--resume` checks) of the
baseline arm alone: suite and every fixture byte, the baseline skill, executor
kind/version/model/sampling, skill mode, pass_k and samples, judge configs, sources, backend and
model, prompt template and cache schema versions. Concurrency, timeouts, retries and paths are
deliberately left out. Values are JSON in diskcache (never pickle: see jsondisk), entries live
exactly `ttl` seconds, attempts that ended in error are never stored, and an unreadable entry is
a miss with a warning. Long outputs are stored by hash, once, in `<cache>/blobs/` (core/blobs.py),
the entry keeping their preview; entries written before that hold outputs inline and still hit.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.blobs import BLOBS_DIR, DEFAULT_MAX_OUTPUT_BYTES, BlobStore, cut_ingredient
from ..core.jsondisk import REFUSED_KEY, UnsafeCacheEntry, open_json_cache
from ..core.model import Attempt, Suite
from ..errors import CacheError
from .attempt_store import store_attempt
from .fingerprint import (
    ArmSkill,
    Inputs,
    fingerprint,
    ingredients,
)

CACHE_SCHEMA_VERSION = "1"
DEFAULT_TTL_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class BaselineIngredients:
    """Everything besides the suite that shapes the baseline's results."""

    skill_sha256: str | None
    skill_directory: Path | None  # counted only when the model can read the skill's files
    executor: Mapping[str, Any]
    skill_mode: str
    pass_k: int
    samples: int
    judge_backend: str
    judge_model: str
    evaluator_dirs: tuple[Path, ...] = ()
    max_output_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES


def baseline_key(suite: Suite, ing: BaselineIngredients) -> str:
    """The cache key: the run fingerprint (engine/fingerprint.py) of the baseline arm alone."""
    executor = dict(ing.executor)
    if executor.get("kind") == "mock" and isinstance(executor.get("outputs"), Mapping):
        outputs = executor["outputs"]
        per_arm = "candidate" in outputs or "baseline" in outputs
        executor["outputs"] = outputs.get("baseline", {}) if per_arm else outputs
    return fingerprint(
        ingredients(
            suite,
            Inputs(
                skills={"baseline": ArmSkill(ing.skill_sha256, ing.skill_directory)},
                executor=executor,
                skill_mode=ing.skill_mode,
                pass_k=ing.pass_k,
                samples=ing.samples,
                judge_backend=ing.judge_backend,
                judge_model=ing.judge_model,
                evaluator_dirs=ing.evaluator_dirs,
                extra={
                    "cache_schema": CACHE_SCHEMA_VERSION,
                    **cut_ingredient(ing.max_output_bytes),
                },
            ),
        )
    )


@dataclass(frozen=True)
class CachedBaseline:
    key: str
    attempts: tuple[Attempt, ...]
    created_at: float
    age_seconds: float


KEEP_AS_RECORDED = sys.maxsize  # store_attempt's preview size that previews nothing again


class BaselineCache:
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

    def get(self, key: str) -> CachedBaseline | None:
        try:
            value = self._cache.get(key)
            if value is None:
                return None
            created = float(value["created_at"])
            age = self.clock() - created
            if age >= self.ttl or age < 0:
                return None
            attempts = tuple(
                Attempt.from_dict(a, blob_root=self.directory) for a in value["attempts"]
            )
        except Exception as exc:  # corrupt, unsafe or foreign entry: a miss, never a crash
            self.warn(f"baseline cache entry {key[:12]} is unreadable ({exc}); ignoring it")
            return None
        return CachedBaseline(key, tuple(a for a in attempts if a.status != "error"), created, age)

    def put(self, key: str, attempts: Sequence[Attempt], created_at: float | None = None) -> int:
        """Store the attempts that did not end in error; returns how many were stored."""
        created = created_at if created_at is not None else self.clock()
        remaining = self.ttl - (self.clock() - created)
        if remaining <= 0 or not any(a.status != "error" for a in attempts):
            return 0
        try:
            store = BlobStore(self.directory)
            # as the run recorded them: its journal already kept long outputs as previews (at
            # its --max-preview-chars); a hit re-previews them at the new run's setting
            keep = [
                store_attempt(a, store, KEEP_AS_RECORDED).to_dict()
                for a in attempts
                if a.status != "error"
            ]
            self._cache.set(key, {"created_at": created, "attempts": keep}, expire=remaining)
        except Exception as exc:
            self.warn(f"could not write the baseline cache ({exc}); results are unaffected")
            return 0
        return len(keep)

    def info(self) -> dict[str, Any]:
        entries = []
        now = self.clock()
        for key in list(self._cache.iterkeys()):
            try:
                if key == REFUSED_KEY:
                    raise UnsafeCacheEntry(key)
                value = self._cache.get(key)
                entries.append(
                    {
                        "key": key,
                        "age_seconds": round(now - value["created_at"]),
                        "attempts": len(value["attempts"]),
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
