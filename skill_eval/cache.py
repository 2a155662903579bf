"""Baseline cache: finished baseline attempts, reused while nothing that shapes them changed.

The key is a sha256 over canonical JSON of every ingredient that changes the baseline's
results (suite and fixture bytes, the baseline skill, executor kind/version/model/sampling,
skill mode, pass_k and samples, judge configs and backend, prompt template and cache schema
versions). Concurrency, timeouts, retries and paths are deliberately left out. Values are JSON
in diskcache (never pickle: see jsondisk), entries live exactly `ttl` seconds, attempts that
ended in error are never stored, and an unreadable entry is a miss with a warning.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .errors import CacheError
from .executors.base import PROMPT_TEMPLATE_VERSION
from .jsondisk import REFUSED_KEY, UnsafeCacheEntry, open_json_cache
from .model import Attempt, Suite
from .task_files import task_files_digest

CACHE_SCHEMA_VERSION = "1"
DEFAULT_TTL_SECONDS = 7 * 24 * 3600
_FILE_KEYS = ("test_file", "schema_file")


def canonical_sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fixture_paths(config: Any) -> Iterable[str]:
    """Every fixture file a judge config names, nested judges included."""
    if isinstance(config, Mapping):
        for key, value in config.items():
            if key in _FILE_KEYS and isinstance(value, str):
                yield value
            else:
                yield from _fixture_paths(value)
    elif isinstance(config, list):
        for item in config:
            yield from _fixture_paths(item)


def fixture_digests(suite: Suite) -> dict[str, str]:
    """sha256 of each fixture file the suite's judges reference (missing → "missing")."""
    out: dict[str, str] = {}
    for task in suite.tasks:
        for rel in _fixture_paths(dict(task.judge)):
            path = suite.directory / rel
            try:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                out[rel] = "missing"
    return out


def directory_digest(path: Path | None, max_files: int = 5000) -> str | None:
    """sha256 over the relative names and bytes of every file below `path` (links by their
    target, never followed); None when there is no such directory."""
    if path is None or not path.is_dir():
        return None
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink())
    for file in files[:max_files]:
        digest.update(str(file.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
        try:
            data = os.readlink(file).encode() if file.is_symlink() else file.read_bytes()
        except OSError:
            data = b"<unreadable>"
        digest.update(hashlib.sha256(data).digest())
    digest.update(f"files={len(files)}".encode())
    return digest.hexdigest()


def python_judge_sources(suite: Suite) -> dict[str, str]:
    """sha256 of the source file behind each `python` judge's callable (run-time code that
    decides the baseline's results just as a fixture does)."""
    out: dict[str, str] = {}
    for task in suite.tasks:
        for target in _callables(dict(task.judge)):
            module = target.split(":", 1)[0]
            try:
                spec = importlib.util.find_spec(module)
                origin = spec.origin if spec else None
                out[target] = hashlib.sha256(Path(origin).read_bytes()).hexdigest() \
                    if origin and Path(origin).is_file() else "unknown"
            except (ImportError, ValueError, OSError):
                out[target] = "unknown"
    return out


def _callables(config: Any) -> Iterable[str]:
    if isinstance(config, Mapping):
        if config.get("type") == "python" and isinstance(config.get("callable"), str):
            yield config["callable"]
        for value in config.values():
            yield from _callables(value)
    elif isinstance(config, list):
        for item in config:
            yield from _callables(item)


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


def baseline_key(suite: Suite, ing: BaselineIngredients) -> str:
    executor = {k: v for k, v in ing.executor.items() if k != "prices"}  # cost, not results
    if executor.get("kind") == "mock" and isinstance(executor.get("outputs"), Mapping):
        outputs = executor["outputs"]
        per_arm = "candidate" in outputs or "baseline" in outputs
        executor["outputs"] = outputs.get("baseline", {}) if per_arm else outputs
    return canonical_sha256({
        "cache_schema": CACHE_SCHEMA_VERSION,
        "harness": __version__,  # the bundled evaluators and judge prompts ship with it
        "suite_sha256": suite.sha256,
        "fixtures": fixture_digests(suite),
        "fixtures_tree": directory_digest(suite.directory / "fixtures"),
        # agent tasks' input files (absent for text suites, so their keys stay as they were)
        **({"task_files": task_files_digest(suite.tasks, suite.directory)}
           if any(t.files for t in suite.tasks) else {}),
        "python_judges": python_judge_sources(suite),
        "evaluators": [directory_digest(d) for d in ing.evaluator_dirs],
        "judges": [dict(t.judge) for t in suite.tasks],
        "baseline_skill": ing.skill_sha256 or "no skill",
        # The folder counts when the model can read it: installed, or an executor whose
        # describe() says it delivers the folder (anthropic's read_skill_file).
        "skill_files": directory_digest(ing.skill_directory)
        if ing.skill_mode == "installed" or executor.get("skill_folder") else None,
        "executor": executor,
        "skill_mode": ing.skill_mode,
        "pass_k": ing.pass_k,
        "samples": ing.samples,
        "judge_backend": ing.judge_backend,
        "judge_model": ing.judge_model,
        "prompt_template": PROMPT_TEMPLATE_VERSION,
    })


@dataclass(frozen=True)
class CachedBaseline:
    key: str
    attempts: tuple[Attempt, ...]
    created_at: float
    age_seconds: float


class BaselineCache:
    def __init__(self, directory: Path, ttl_seconds: float = DEFAULT_TTL_SECONDS,
                 warn: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
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
            attempts = tuple(Attempt.from_dict(a) for a in value["attempts"])
        except Exception as exc:  # corrupt, unsafe or foreign entry: a miss, never a crash
            self.warn(f"baseline cache entry {key[:12]} is unreadable ({exc}); ignoring it")
            return None
        return CachedBaseline(key, tuple(a for a in attempts if a.status != "error"),
                              created, age)

    def put(self, key: str, attempts: Sequence[Attempt], created_at: float | None = None) -> int:
        """Store the attempts that did not end in error; returns how many were stored."""
        keep = [a.to_dict() for a in attempts if a.status != "error"]
        if not keep:
            return 0
        created = created_at if created_at is not None else self.clock()
        remaining = self.ttl - (self.clock() - created)
        if remaining <= 0:
            return 0
        try:
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
                entries.append({"key": key, "age_seconds": round(now - value["created_at"]),
                                "attempts": len(value["attempts"])})
            except Exception as exc:
                entries.append({"key": str(key), "error": str(exc)})
        return {"directory": str(self.directory), "entries": entries,
                "size_bytes": self._cache.volume(), "ttl_seconds": self.ttl}

    def clear(self) -> int:
        return int(self._cache.clear())

    def close(self) -> None:
        self._cache.close()


def clear_directory(directory: Path) -> int:
    """Remove a diskcache directory's own files (cache.db* and its value folders), nothing
    else; for a cache too corrupt to open. Returns how many files went."""
    removed = 0
    for path in list(directory.glob("cache.db*")) + [p for p in directory.glob("[0-9a-f][0-9a-f]")
                                                     if p.is_dir()]:
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
