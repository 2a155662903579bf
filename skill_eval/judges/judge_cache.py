"""A disk cache of model judgements, so the same output is never judged twice by the same judge
(in a run or across runs). JSON values only (see `skill_eval.core.jsondisk`); errors never cached.

    cache = JudgeCache(state_root / "judge-cache")
    key = judge_cache_key(config=..., rubric=..., task_prompt=..., work=..., model=...,
                          backend="anthropic")
    cache.get(key) -> dict | None;  cache.put(key, result.to_dict())
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.model import JudgeResult, Usage
from ..core.work import Work

log = logging.getLogger(__name__)

# Bumped whenever the text of a judge prompt changes: old judgements no longer apply.
JUDGE_PROMPT_VERSION = "2"  # 2: text answers only between nonce tags


def judge_cache_key(
    *,
    config: Mapping[str, Any],
    rubric: str,
    task_prompt: str,
    work: Work,
    model: str,
    backend: str,
    prompt_version: str = JUDGE_PROMPT_VERSION,
) -> str:
    """sha256 of the canonical JSON of everything a model judgement depends on. The work
    enters as `work.digest()`, which for text-only work is the sha256 of the text: keys made
    before judges saw more than text still match."""
    material = {
        "config": dict(config),
        "rubric": rubric,
        "task_prompt": task_prompt,
        "output_sha256": work.digest(),
        "model": model,
        "backend": backend,
        "prompt_version": prompt_version,
    }
    canonical = json.dumps(
        material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cached_judgement(cache: JudgeCache | MemoryJudgeCache | None, key: str) -> JudgeResult | None:
    """The judgement `cache` holds under `key`, marked cached and with no usage (no model was
    called for it); None on a miss or without a cache."""
    hit = cache.get(key) if cache is not None else None
    if hit is None:
        return None
    cached = JudgeResult.from_dict(hit)
    return JudgeResult(
        cached.passed,
        cached.score,
        cached.details,
        None,
        {**cached.data, "cached": True, "usage": Usage().to_dict()},
    )


class JudgeCache:
    """Judgements keyed by `judge_cache_key`. Thread-safe; counts hits and misses.

    A corrupt or unsafe entry, or a database that cannot be opened, reads as a miss (with a
    warning), never as a crash; a value with `error` set is never stored."""

    def __init__(self, directory: Path) -> None:
        from ..core.jsondisk import open_json_cache  # diskcache loads only when a run caches
        from ..errors import CacheError

        self.directory = Path(directory)
        self._cache: Any = None  # None: unusable, every get a miss and every put a no-op
        try:
            self._cache = open_json_cache(self.directory)
        except CacheError as exc:  # like a corrupt baseline cache: warn, judge afresh
            log.warning("judge cache: %s; running without it (every judgement is a miss)", exc)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            value: dict[str, Any] | None = (
                None if self._cache is None else self._cache.get(key, default=None)
            )
        except Exception as exc:  # UnsafeCacheEntry, bad JSON, sqlite trouble: all a miss
            log.warning("judge cache: ignoring unreadable entry %s: %s", key[:12], exc)
            value = None
        if value is not None and not _valid(value):
            log.warning("judge cache: ignoring malformed entry %s", key[:12])
            value = None
        with self._lock:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return value

    def put(self, key: str, value: Mapping[str, Any]) -> bool:
        """Store a judgement; returns False (and stores nothing) for judge errors."""
        if value.get("error") or not _valid(value) or self._cache is None:
            return False
        try:
            self._cache.set(key, dict(value))
        except (OSError, sqlite3.Error, TypeError, ValueError) as exc:
            log.warning("judge cache: cannot store %s: %s", key[:12], exc)
            return False
        with self._lock:
            self.writes += 1
        return True

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "writes": self.writes}

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryJudgeCache:
    """The judge cache of a `--mock` run: the same get/put path, kept in memory, so a mock
    run exercises caching without writing judgements of the mock grader to disk."""

    directory = None

    def __init__(self) -> None:
        self._values: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = self.writes = 0

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            value = self._values.get(key)
            self.hits += value is not None
            self.misses += value is None
            return dict(value) if value is not None else None

    def put(self, key: str, value: Mapping[str, Any]) -> bool:
        if value.get("error") or not _valid(value):
            return False
        with self._lock:
            self._values[key] = dict(value)
            self.writes += 1
        return True

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "writes": self.writes}

    def close(self) -> None:
        pass


def _valid(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("passed"), bool)
        and isinstance(value.get("score"), int | float)
        and not value.get("error")
    )
