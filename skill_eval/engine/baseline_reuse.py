"""The baseline cache around a run's evaluation (--baseline-cache-dir): before it, the cached
baseline attempts this run still lacks join the journal (they are then not run again); after
it, whatever happened, the run's baseline attempts go back into the cache. The evaluation
itself knows nothing of the cache."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.model import Attempt, Suite
from ..errors import CacheError
from ..judges.llm import judge_model
from .cache import BaselineCache, BaselineIngredients, baseline_key, parse_duration
from .judging import evaluator_dirs
from .opening import OpenRun
from .prepare import Prepared
from .runner import Journal

Log = Callable[[str], None]


@contextmanager
def reusing_baselines(prepared: Prepared, opened: OpenRun, log: Log) -> Iterator[dict[str, Any]]:
    """Around the evaluation of an opened run: yields the artifact's sections this adds
    (`baseline_cache`; none without a cache or without a baseline arm)."""
    cache = _open_cache(prepared, log)
    if cache is None:
        yield {}
        return
    key = _key(prepared, opened)
    hit = cache.get(key)
    reused = _reuse_cached(
        hit.attempts if hit else (),
        opened.done,
        prepared.suite,
        prepared.plan.sample_count,
        opened.journal,
    )
    if reused:
        age = round(hit.age_seconds) if hit else 0
        log(f"baseline: {reused} attempts from the cache (age {age} s)")
    sections = {
        "baseline_cache": {
            "enabled": True,
            "hit": hit is not None,
            "key": key,
            "age_seconds": round(hit.age_seconds) if hit else None,
            "attempts_from_cache": reused,
            "directory": str(cache.directory),
        }
    }
    try:
        yield sections
    finally:
        # from the records this run wrote (in memory), never the file judged code might reach
        stored = [a for a in opened.journal.recorded() if a.arm == "baseline"]
        cache.put(key, stored, created_at=hit.created_at if hit else None)
        cache.close()


def _open_cache(prepared: Prepared, log: Log) -> BaselineCache | None:
    records = prepared.plan.records
    if not records.baseline_cache_dir or prepared.arms.baseline is None:
        return None
    try:
        return BaselineCache(
            Path(records.baseline_cache_dir),
            parse_duration(records.baseline_ttl),
            warn=lambda m: log(f"warning: {m}"),
        )
    except CacheError as exc:
        log(f"warning: {exc}; running without the baseline cache")
        return None


def _key(prepared: Prepared, opened: OpenRun) -> str:
    """The baseline's results depend on its skill, the executor, the settings and judges."""
    plan, arms = prepared.plan, prepared.arms
    skill = arms.baseline.skill if arms.baseline else None
    return baseline_key(
        prepared.suite,
        BaselineIngredients(
            skill_sha256=skill.sha256 if skill else None,
            skill_directory=skill.directory if skill else None,
            executor=prepared.describe,
            skill_mode=plan.executor.skill_mode,
            pass_k=plan.decision.pass_k,
            samples=plan.sample_count,
            judge_backend=opened.judge_context.grader.name,
            judge_model=judge_model(opened.judge_context),
            evaluator_dirs=evaluator_dirs(plan),
            max_output_bytes=plan.records.max_output_bytes,
        ),
    )


def _reuse_cached(
    cached: Iterable[Attempt], done: list[Attempt], suite: Suite, samples: int, journal: Journal
) -> int:
    """Add cached baseline attempts this run still lacks to `done` and to the journal."""
    have = {(a.arm, a.task_id, a.index) for a in done if a.status != "error"}
    task_ids = {t.id for t in suite.tasks}
    reused = 0
    for attempt in cached:
        key = ("baseline", attempt.task_id, attempt.index)
        if (
            attempt.arm != "baseline"
            or key in have
            or attempt.task_id not in task_ids
            or attempt.index >= samples
        ):
            continue
        done.append(journal.append(attempt))  # its blobs copied from the cache into the run
        have.add(key)
        reused += 1
    return reused


__all__ = ["reusing_baselines"]
