"""The baseline cache around a run's evaluation (--baseline-cache-dir). Before it, the run draws
cached baseline attempts of earlier runs with the same baseline (stats/accumulate.py: `draw`):
at a task where the cache holds a full pool (`pool_limit`: 4 x --samples attempts) the cached
attempts are the run's baseline there and it makes none; elsewhere it runs its own --samples
and the cache tops them up to the pool. Drawn attempts join the journal (so --resume and
`rejudge` see them) with indices after the run's own, each marked with the run it came from
(`meta.cached_from`). After the evaluation, whatever happened, the run's own baseline
attempts go back into the cache beside the earlier runs' (bounded, the oldest dropped). The
evaluation itself knows nothing of the cache: its comparison pools whatever baseline attempts
a task has (engine/summary.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.model import Attempt, Status, Suite
from ..errors import CacheError
from ..judges.llm import judge_model
from ..stats.accumulate import CachedRun, draw, pool_baseline, pool_limit
from .attempt_store import CACHED_FROM
from .cache import (
    BaselineCache,
    BaselineIngredients,
    CachedBaseline,
    baseline_key,
    drawn_from,
    parse_duration,
)
from .judging import evaluator_dirs
from .opening import OpenRun
from .prepare import Prepared

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
    samples = prepared.plan.sample_count
    limit = pool_limit(samples)
    hit = cache.get(key)
    drawn = _draw_cached(hit, opened, prepared.suite, samples, limit) if hit else {}
    reused = sum(drawn.values())
    if reused:
        age = round(hit.age_seconds) if hit else 0
        log(
            f"baseline: {reused} attempts of {len(drawn)} earlier run(s) from the cache "
            f"(newest {age} s old)"
        )
    sections = {
        "baseline_cache": {
            "enabled": True,
            "hit": hit is not None,
            "key": key,
            "age_seconds": round(hit.age_seconds) if hit else None,
            "attempts_from_cache": reused,
            "runs_from_cache": len(drawn),
            "limit_per_task": limit,
            "directory": str(cache.directory),
        }
    }
    try:
        yield sections
    finally:
        # from the records this run wrote (in memory), never the file judged code might reach
        own = [a for a in opened.journal.recorded() if a.arm == "baseline" and not drawn_from(a)]
        cache.put(key, own, run_id=opened.path.name, limit=limit)
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
            executor=prepared.executor.describe_arm("baseline"),
            skill_mode=plan.executor.skill_mode,
            pass_k=plan.decision.pass_k,
            samples=plan.sample_count,
            judge_backend=opened.judge_context.grader.name,
            judge_model=judge_model(opened.judge_context),
            evaluator_dirs=evaluator_dirs(plan),
            max_output_bytes=plan.records.max_output_bytes,
        ),
    )


def _draw_cached(
    hit: CachedBaseline, opened: OpenRun, suite: Suite, samples: int, limit: int
) -> dict[str, int]:
    """Add the cached attempts this run draws (stats.accumulate.draw) to `done` and to the
    journal; returns how many came from each earlier run. A resumed run keeps the pool it
    had: a task where it already holds baseline attempts draws nothing new."""
    own_run = opened.path.name
    held = {a.task_id for a in opened.done if a.arm == "baseline"}
    attempts: dict[str, dict[str, list[Attempt]]] = {}
    for run in hit.runs:
        for attempt in sorted(run.attempts, key=lambda a: a.index):
            if attempt.arm == "baseline":
                attempts.setdefault(run.run_id, {}).setdefault(attempt.task_id, []).append(attempt)
    earlier = [
        CachedRun(run, {task: [a.status for a in per_task] for task, per_task in tasks.items()})
        for run, tasks in attempts.items()
    ]
    tasks = [t.id for t in suite.tasks if t.id not in held]
    counts: dict[str, int] = {}
    for task, plan in draw(own_run, tasks, earlier, samples, limit).items():
        index = 0 if plan.whole else samples  # after the run's own attempts
        for source, n in plan.take:
            for attempt in attempts[source][task][:n]:
                origin = {"run_id": source, "index": attempt.index}
                marked = replace(attempt, index=index, meta={**attempt.meta, CACHED_FROM: origin})
                opened.done.append(opened.journal.append(marked))  # blobs copied into the run
                index += 1
            counts[source] = counts.get(source, 0) + n
    return counts


def pool_section(
    attempts: Sequence[Attempt], task_ids: Sequence[str], own_run: str, samples: int
) -> dict[str, Any]:
    """The artifact's `baseline_pool`: per task the baseline attempts the comparison used and
    from which runs (stats.accumulate.pool_baseline over the run's journal: its own attempts,
    then those drawn from each earlier run)."""
    own: dict[str, list[Status]] = {task: [] for task in task_ids}
    earlier: dict[str, dict[str, list[Status]]] = {}
    for attempt in sorted(attempts, key=lambda a: a.index):
        if attempt.arm != "baseline" or attempt.task_id not in own:
            continue
        origin = drawn_from(attempt)
        if origin is None:
            own[attempt.task_id].append(attempt.status)
        else:
            earlier.setdefault(origin, {}).setdefault(attempt.task_id, []).append(attempt.status)
    pooled = pool_baseline(
        own_run, own, [CachedRun(run, tasks) for run, tasks in earlier.items()], pool_limit(samples)
    )
    counts = [pooled.attempts(task) for task in task_ids]
    return {"run_id": own_run, "smallest": min(counts, default=0), **pooled.to_dict()}


__all__ = ["pool_section", "reusing_baselines"]
