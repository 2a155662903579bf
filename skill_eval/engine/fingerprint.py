"""What shapes a run's results, as named digests: ONE function (`ingredients`) behind both the
`--resume` check and the baseline cache key, so neither can forget what the other counts.

Each ingredient is a sha256 of its canonical JSON; `run.json` keeps them all, so a refused
resume says which ones changed. Every fixture file is hashed (streamed, no count limit).
Concurrency, timeouts, retries, paths and prices are left out: they do not change results.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.model import Suite
from ..core.task_files import task_files_digest
from ..core.version import __version__
from ..executors.base import PROMPT_TEMPLATE_VERSION
from ..plan.run_plan import Decision

_FILE_KEYS = ("test_file", "schema_file")
_CHUNK = 1 << 20


def canonical_sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks (a large fixture never sits in memory)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


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
            try:
                out[rel] = file_sha256(suite.directory / rel)
            except OSError:
                out[rel] = "missing"
    return out


def directory_digest(path: Path | None) -> str | None:
    """sha256 over the relative names and bytes of every file below `path`, however many
    (links by their target, never followed); None when there is no such directory."""
    if path is None or not path.is_dir():
        return None
    digest = hashlib.sha256()
    count = 0
    for top, dirs, names in os.walk(path):
        dirs.sort()
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(top, d))]):
            file = Path(top) / name
            count += 1
            digest.update(str(file.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(_entry_digest(file))
    digest.update(f"files={count}".encode())
    return digest.hexdigest()


def _entry_digest(file: Path) -> bytes:
    """A link by its target, a regular file by its bytes; a fifo or device is never opened
    (reading one could block forever)."""
    try:
        mode = os.lstat(file).st_mode
        if stat.S_ISLNK(mode):
            return hashlib.sha256(os.readlink(file).encode("utf-8", "surrogateescape")).digest()
        if stat.S_ISREG(mode):
            return bytes.fromhex(file_sha256(file))
        return hashlib.sha256(b"<special file>").digest()
    except OSError:
        return hashlib.sha256(b"<unreadable>").digest()


def python_judge_sources(suite: Suite) -> dict[str, str]:
    """sha256 of the source file behind each `python` judge's callable (run-time code that
    decides results just as a fixture does), found on sys.path without importing anything:
    `importlib.util.find_spec("pkg.mod")` would import `pkg`, running the suite's code here."""
    from ..inputs.source_checks import module_file

    out: dict[str, str] = {}
    for task in suite.tasks:
        for target in _callables(dict(task.judge)):
            try:
                origin = module_file(target.split(":", 1)[0])
                out[target] = file_sha256(origin) if origin and origin.is_file() else "unknown"
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
class ArmSkill:
    """An arm's skill as far as results go: SKILL.md's hash, and its folder when installed."""

    sha256: str | None  # None: the no-skill arm
    directory: Path | None = None


@dataclass(frozen=True)
class Inputs:
    """Everything besides the suite that shapes results. `skills` maps arm name to skill
    (the baseline cache passes the baseline alone)."""

    skills: Mapping[str, ArmSkill]
    executor: Mapping[str, Any]
    skill_mode: str
    decision: Decision  # its pass_k and sample count (the rest decides, it does not shape)
    judge_backend: str
    judge_model: str
    evaluator_dirs: tuple[Path, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    folders: bool = False  # the skills' other files count whatever the skill mode (--arm)


def ingredients(suite: Suite, inputs: Inputs) -> dict[str, str]:
    """Each ingredient of a run's results, by name, as a digest."""
    executor = {k: v for k, v in inputs.executor.items() if k != "prices"}  # cost, not results
    raw: dict[str, Any] = {
        "harness": __version__,  # the bundled evaluators and judge prompts ship with it
        "prompt_template": PROMPT_TEMPLATE_VERSION,
        "suite": suite.sha256,
        "judges": [dict(t.judge) for t in suite.tasks],
        "fixtures": fixture_digests(suite),
        "fixtures_tree": directory_digest(suite.directory / "fixtures"),
        "python_judges": python_judge_sources(suite),
        "evaluators": [directory_digest(d) for d in inputs.evaluator_dirs],
        "judge_backend": inputs.judge_backend,
        "judge_model": inputs.judge_model,
        "executor": executor,
        "skill_mode": inputs.skill_mode,
        "pass_k": inputs.decision.pass_k,
        "samples": inputs.decision.sample_count,
        **inputs.extra,
    }
    if any(t.files for t in suite.tasks):  # agent tasks' input files (text suites: none)
        raw["task_files"] = task_files_digest(suite.tasks, suite.directory)
    # A skill's other files count when the model can read them: installed, or an executor
    # whose describe() says it delivers the folder (anthropic's read_skill_file).
    folder = (
        inputs.folders
        or inputs.skill_mode in ("installed", "context")
        or bool(executor.get("skill_folder"))
    )
    for arm, skill in sorted(inputs.skills.items()):
        raw[f"{arm}_skill"] = skill.sha256 or "no skill"
        raw[f"{arm}_skill_files"] = directory_digest(skill.directory) if folder else None
    return {name: canonical_sha256(value) for name, value in raw.items()}


def fingerprint(parts: Mapping[str, str]) -> str:
    """The one digest over all ingredients."""
    return canonical_sha256(dict(parts))


def changed(old: Mapping[str, Any], new: Mapping[str, str]) -> list[str]:
    """Names of the ingredients that differ (added or removed ones included), sorted."""
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
