"""The baseline cache around a run's evaluation (--baseline-cache-dir). Before it, the run draws
cached baseline attempts of earlier runs with the same baseline (stats/accumulate.py: `draw`):
at a task where the cache holds a full pool (`pool_limit`: 4 x --samples attempts) the run
makes only its fresh attempts there (stats/drift.py: fresh_counts, 40% of its baseline, at
least one a task) and the cached attempts fill the pool beside them; elsewhere it runs its own
--samples and draws nothing. Drawn attempts join the journal (so --resume and `rejudge` see
them) with indices after the run's own, each marked with the run it came from
(`meta.cached_from`). After the evaluation, whatever happened, the run's own baseline
attempts go back into the cache beside the earlier runs' (bounded, the oldest dropped). The
evaluation decides on the run's own attempts; the drawn ones give the bound the cache would
have given (engine/summary.py, stats/drift.py: PoolShift) and the drift test's warning."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.blobs import cut_ingredient
from ..core.model import Attempt, Status
from ..errors import CacheError
from ..judges.llm import judge_model
from ..stats import accumulate, drift
from ..stats.accumulate import Draw, draw, pool_baseline, pool_limit
from ..stats.drift import PoolShift
from .attempt_store import CACHED_FROM
from .cache import (
    BaselineCache,
    CachedBaseline,
    CachedRun,
    baseline_key,
    drawn_from,
    parse_duration,
)
from .fingerprint import ArmSkill, Inputs
from .judging import evaluator_dirs
from .opening import OpenRun
from .prepare import Prepared

Log = Callable[[str], None]


RunFresh = Callable[[Mapping[str, int]], None]


@contextmanager
def reusing_baselines(
    prepared: Prepared, opened: OpenRun, log: Log, run_fresh: RunFresh
) -> Iterator[dict[str, Any]]:
    """Around the evaluation of an opened run: yields the artifact's sections this adds
    (`baseline_cache`; none without a cache or without a baseline arm). `run_fresh(counts)`
    runs the baseline's first `counts[task]` attempts of the tasks named (into the journal
    and `opened.done`): the fresh attempts the drift guard reads before anything is pooled."""
    cache = _open_cache(prepared, log)
    if cache is None:
        yield {}
        return
    key = _key(prepared, opened)
    samples = prepared.plan.sample_count
    limit = pool_limit(samples)
    hit = cache.get(key)
    version = _agent_version(prepared)
    pooling = _pool(hit, prepared, opened, version, run_fresh, log) if hit else _Pooling()
    reused = sum(pooling.counts.values())
    if reused and hit:
        log(
            f"baseline: {reused} attempts of {len(pooling.counts)} earlier run(s) from the "
            f"cache (newest {round(hit.age_seconds)} s old)"
        )
    sections = {
        "baseline_cache": {
            "enabled": True,
            "hit": hit is not None,
            "key": key,
            "age_seconds": round(hit.age_seconds) if hit else None,
            "attempts_from_cache": reused,
            "runs_from_cache": len(pooling.counts),
            "limit_per_task": limit,
            "directory": str(cache.directory),
            **pooling.to_dict(hit, pooling.counts),
        }
    }
    try:
        yield sections
    finally:
        # from the records this run wrote (in memory), never the file judged code might reach
        own = [a for a in opened.journal.recorded() if a.arm == "baseline" and not drawn_from(a)]
        cache.put(
            key,
            own,
            run_id=opened.path.name,
            limit=limit,
            models=resolved_models(own),
            agent_version=version,
        )
        cache.close()


def resolved_models(attempts: Iterable[Attempt]) -> tuple[str, ...]:
    """The model ids that answered `attempts`, as their executors recorded them (the API's
    reply `model`, the Claude CLI's `models`): not the alias asked for."""
    found: set[str] = set()
    for attempt in attempts:
        named = attempt.meta.get("model")
        listed = attempt.meta.get("models")
        if isinstance(named, str) and named:
            found.add(named)
        if isinstance(listed, list):
            found.update(m for m in listed if isinstance(m, str) and m)
    return tuple(sorted(found))


def _agent_version(prepared: Prepared) -> str | None:
    version = prepared.describe.get("version")
    return None if version is None else str(version)


@dataclass
class _Pooling:
    """What the cache gave: attempts per earlier run, the runs left out and why, the drift
    guard's answer (None when nothing was tested)."""

    counts: dict[str, int] = field(default_factory=dict)
    refused: list[dict[str, Any]] = field(default_factory=list)
    guard: drift.DriftCheck | None = None
    fresh: dict[str, int] = field(default_factory=dict)
    models: tuple[str, ...] = ()

    def to_dict(self, hit: CachedBaseline | None, counts: Mapping[str, int]) -> dict[str, Any]:
        if hit is None:
            return {}
        now = hit.created_at + hit.age_seconds
        return {
            "pooled": bool(counts),
            "fresh_share": drift.FRESH_SHARE,
            "fresh_attempts": sum(self.fresh.values()),
            "models": list(self.models),
            "drift_guard": None if self.guard is None else self.guard.to_dict(),
            "runs": [
                {
                    "run_id": run.run_id,
                    "age_seconds": round(now - run.created_at),
                    "models": list(run.models),
                    "agent_version": run.agent_version,
                    "attempts": counts.get(run.run_id, 0),
                }
                for run in hit.runs
            ],
            "runs_refused": self.refused,
        }


def _pool(
    hit: CachedBaseline,
    prepared: Prepared,
    opened: OpenRun,
    version: str | None,
    run_fresh: RunFresh,
    log: Log,
) -> _Pooling:
    """Which cached runs this run draws beside its fresh attempts: those of its agent version
    and resolved models, where the cache holds a full pool and drawing saves attempts; their
    attempts go into `done` and the journal, and the drift test (stats/drift.py) of its fresh
    attempts against them warns when they differ. A resumed run keeps the pool it had: a task
    where it already holds baseline attempts draws nothing new."""
    samples = prepared.plan.sample_count
    held = {a.task_id for a in opened.done if a.arm == "baseline"}
    tasks = [t.id for t in prepared.suite.tasks if t.id not in held]
    out = _Pooling(fresh=drift.fresh_counts(tasks, samples, least=prepared.plan.decision.pass_k))
    if not drift.saves(out.fresh, samples):  # the cache would save no attempt: not drawn
        return out
    runs = []
    for run in hit.runs:
        if run.agent_version != version:
            out.refused.append(_refusal(run, f"agent version {run.agent_version} (now {version})"))
        else:
            runs.append(run)
    plan = _plan(opened, tasks, runs, samples, out.fresh)
    if not any(p.attempts for p in plan.values()):
        return out
    run_fresh({t: p.own for t, p in plan.items() if p.attempts})
    mine = _own(opened, plan)
    out.models = resolved_models(a for per_task in mine.values() for a in per_task)
    kept = [run for run in runs if run.models == out.models]
    out.refused += [
        _refusal(r, f"models {list(r.models)} (now {list(out.models)})")
        for r in runs
        if r not in kept
    ]
    plan = _plan(opened, tasks, kept, samples, out.fresh)
    by_run = {run.run_id: _by_task(run) for run in kept}
    cached = {
        task: [a.status for source, n in p.take for a in by_run[source][task][:n]]
        for task, p in plan.items()
    }
    out.guard = drift.check({t: [a.status for a in mine.get(t, [])] for t in plan}, cached)
    if not out.guard.agree:  # a warning: the verdict rests on the run's own attempts anyway
        g = out.guard
        log(
            f"warning: the cached baseline differs from today's: this run's {g.fresh_attempts} "
            f"fresh baseline attempts pass {g.fresh_rate:.0%} a task, the cache's "
            f"{g.cached_rate:.0%} (drift test p = {g.p:.3f}); a model or service may have "
            "changed behind the same name. The verdict rests on this run's own attempts, "
            "as always; clear the cache (`skill-eval cache clear`) to start it afresh"
        )
    out.counts = _add_drawn(opened, plan, by_run)
    return out


def _refusal(run: CachedRun, reason: str) -> dict[str, Any]:
    return {"run_id": run.run_id, "reason": reason}


def _by_task(run: CachedRun) -> dict[str, list[Attempt]]:
    out: dict[str, list[Attempt]] = {}
    for attempt in sorted(run.attempts, key=lambda a: a.index):
        if attempt.arm == "baseline":
            out.setdefault(attempt.task_id, []).append(attempt)
    return out


def _plan(
    opened: OpenRun,
    tasks: Sequence[str],
    runs: Sequence[CachedRun],
    samples: int,
    fresh: Mapping[str, int],
) -> dict[str, Draw]:
    """stats.accumulate.draw over these runs' baseline attempts."""
    earlier = [
        accumulate.CachedRun(
            run.run_id, {t: [a.status for a in o] for t, o in _by_task(run).items()}
        )
        for run in runs
    ]
    return draw(opened.path.name, tasks, earlier, samples, pool_limit(samples), fresh)


def _own(opened: OpenRun, plan: Mapping[str, Draw]) -> dict[str, list[Attempt]]:
    """This run's own judged baseline attempts at the planned tasks, in index order."""
    mine: dict[str, list[Attempt]] = {}
    for a in sorted(opened.done, key=lambda a: a.index):
        if a.arm == "baseline" and a.task_id in plan and a.status != "error" and not drawn_from(a):
            mine.setdefault(a.task_id, []).append(a)
    return mine


def _add_drawn(
    opened: OpenRun, plan: Mapping[str, Draw], by_run: Mapping[str, Mapping[str, list[Attempt]]]
) -> dict[str, int]:
    """Add the cached attempts of `plan` to `done` and to the journal, after the run's own
    (from index `own`: the runner then makes only those); returns how many came from each
    earlier run."""
    counts: dict[str, int] = {}
    for task, p in plan.items():
        index = p.own
        for source, n in p.take:
            for attempt in by_run[source][task][:n]:
                origin = {"run_id": source, "index": attempt.index}
                marked = replace(attempt, index=index, meta={**attempt.meta, CACHED_FROM: origin})
                opened.done.append(opened.journal.append(marked))  # blobs copied into the run
                index += 1
            counts[source] = counts.get(source, 0) + n
    return counts


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
        Inputs(
            skills={
                "baseline": ArmSkill(
                    skill.sha256 if skill else None, skill.directory if skill else None
                )
            },
            executor=prepared.executor.describe_arm("baseline"),
            skill_mode=plan.executor.skill_mode,
            decision=plan.decision,
            judge_backend=opened.judge_context.grader.name,
            judge_model=judge_model(opened.judge_context),
            evaluator_dirs=evaluator_dirs(plan),
            extra=cut_ingredient(plan.execution.max_output_bytes),
        ),
    )


def pool_section(
    attempts: Sequence[Attempt],
    task_ids: Sequence[str],
    own_run: str,
    samples: int,
    cache: Mapping[str, Any] | None = None,
    shift: PoolShift | None = None,
) -> dict[str, Any]:
    """The artifact's `baseline_pool`: per task the baseline attempts of the pool and from
    which runs (stats.accumulate.pool_baseline over the run's journal: its own attempts, then
    those drawn from each earlier run); `shift`, the bound that decided (on the run's own
    attempts) beside the one the pool would have given (stats/drift.py: PoolShift); and, from
    this run's `baseline_cache` section when it has one, whether it drew from the cache and
    the drift test (the runs with their age and models, the runs refused)."""
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
        own_run,
        own,
        [accumulate.CachedRun(run, tasks) for run, tasks in earlier.items()],
        pool_limit(samples),
    )
    counts = [pooled.attempts(task) for task in task_ids]
    decided = {k: cache[k] for k in _DECIDED if cache and k in cache}
    return {
        "run_id": own_run,
        "smallest": min(counts, default=0),
        **pooled.to_dict(),
        "verdict_bound": None if shift is None else shift.to_dict(),
        **decided,
    }


_DECIDED = ("pooled", "drift_guard", "runs", "runs_refused")


__all__ = ["pool_section", "reusing_baselines"]
