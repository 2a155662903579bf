"""Baseline accumulation: runs with an unchanged baseline (same cache key) leave their baseline
attempts in the cache, and a run that finds a full pool there (POOL_FACTOR x its samples per
task, from earlier runs) makes only a share of its own baseline attempts (stats/drift.py:
fresh_counts). Pure: the engine (engine/baseline_reuse.py) asks `draw` which cached attempts a
run takes before it runs and at which tasks the cache fills the pool, so the run makes only its
fresh attempts there; `pool_baseline` states the pool (the artifact's `baseline_pool`), and
`pooled_floor` / `pooled_score` give the bound the cache would have given (stats/drift.py:
PoolShift).

What the pool decides: nothing. The verdict rests on the run's own baseline attempts (a cache
that drifted from today's baseline, through a model alias that moved or a service change the
key cannot see, would put its drift into a pooled verdict, and no bound that holds whatever the
drift can gain from it: stats/drift.py says why). Where the cache holds less than a full pool
the run makes every attempt of its own and draws nothing: pooling there would save no attempt.

A caveat the artifact states: the cached attempts shown beside a run's are earlier draws of
the baseline as it was; the limit caps how far one set of them is leaned on, and they expire
(--baseline-ttl).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Status
from .estimates import pass_at_k, task_stats

# A full pool: this many baseline attempts per task and run sample, own ones included (4 x 3 =
# 12 for a 3-sample run), and what the cache keeps per task. A cache that holds a full pool
# has seen the baseline about four runs' worth: enough for its drift test to mean something.
POOL_FACTOR = 4


@dataclass(frozen=True)
class CachedRun:
    """One earlier run's baseline attempts: its run id and, per task, the statuses of its
    attempts in the order they were made (attempts in error are never cached)."""

    run_id: str
    outcomes: Mapping[str, Sequence[Status]]


@dataclass(frozen=True)
class PooledBaseline:
    """Per task, the baseline outcomes of the pool (this run's first, then earlier runs',
    newest first) and where they came from: (run id, attempts used) in that order."""

    outcomes: dict[str, tuple[Status, ...]]
    sources: dict[str, tuple[tuple[str, int], ...]]
    limit: int

    def attempts(self, task_id: str) -> int:
        return len(self.outcomes.get(task_id, ()))

    def to_dict(self) -> dict[str, Any]:
        """For the artifact: the limit, and per task the attempts used and from which runs."""
        return {
            "limit_per_task": self.limit,
            "tasks": {
                task: {
                    "attempts": self.attempts(task),
                    "runs": [{"run_id": run, "attempts": n} for run, n in self.sources[task]],
                }
                for task in self.outcomes
            },
        }


def pool_limit(samples: int, factor: int = POOL_FACTOR) -> int:
    """Baseline attempts per task a run of `samples` may use in all."""
    if samples < 1 or factor < 1:
        raise ValueError(f"samples and factor must be >= 1, got {samples}, {factor}")
    return samples * factor


def _top_up(
    task: str, room: int, own_run: str, earlier: Sequence[CachedRun]
) -> list[tuple[str, tuple[Status, ...]]]:
    """Up to `room` judged outcomes of `task` from the `earlier` runs, newest first, as
    (run id, outcomes taken) for each run that gives some; this run's own id is skipped."""
    taken: list[tuple[str, tuple[Status, ...]]] = []
    for run in earlier:
        if room <= 0:
            break
        if run.run_id == own_run:
            continue
        extra = tuple(s for s in run.outcomes.get(task, ()) if s != "error")[:room]
        if extra:
            taken.append((run.run_id, extra))
            room -= len(extra)
    return taken


def pool_baseline(
    own_run: str,
    own: Mapping[str, Sequence[Status]],
    earlier: Sequence[CachedRun],
    limit: int,
) -> PooledBaseline:
    """This run's baseline outcomes per task, topped up from `earlier` runs (give them newest
    first) up to `limit` judged attempts per task. Attempts in error are dropped everywhere
    (they say nothing about the baseline); tasks this run does not have are ignored, so a
    cached run of a changed suite cannot add tasks."""
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    outcomes: dict[str, tuple[Status, ...]] = {}
    sources: dict[str, tuple[tuple[str, int], ...]] = {}
    for task, mine in own.items():
        used = [s for s in mine if s != "error"][:limit]
        where = [(own_run, len(used))]
        pooled: tuple[Status, ...] = tuple(used)
        for run_id, extra in _top_up(task, limit - len(used), own_run, earlier):
            pooled += extra
            where.append((run_id, len(extra)))
        outcomes[task] = pooled
        sources[task] = tuple(where)
    return PooledBaseline(outcomes, sources, limit)


@dataclass(frozen=True)
class Draw:
    """What a run takes from the cache at one task before it runs. `whole`: the cached
    attempts fill the pool beside the `own` fresh attempts the run makes (stats/drift.py:
    fresh_counts), fewer than its samples; otherwise the run makes its own `samples` (`own`)
    and takes nothing. `take`: (run id, attempts) from each cached run, newest first."""

    whole: bool
    take: tuple[tuple[str, int], ...]
    own: int = 0

    @property
    def attempts(self) -> int:
        return sum(n for _, n in self.take)


def draw(
    own_run: str,
    tasks: Iterable[str],
    earlier: Sequence[CachedRun],
    samples: int,
    limit: int,
    fresh: Mapping[str, int] | None = None,
) -> dict[str, Draw]:
    """Per task, the cached attempts a run of `samples` attempts per task takes: all the pool
    needs beside the task's `fresh` attempts when the earlier runs hold that many and the
    fresh attempts are fewer than `samples` (the cache saves attempts); else none, and the run
    makes its own `samples`. It depends on the cache alone, never on this run's outcomes."""
    if limit < 1 or samples < 1:
        raise ValueError(f"samples and limit must be >= 1, got {samples}, {limit}")
    out: dict[str, Draw] = {}
    for task in tasks:
        keep = min(samples, (fresh or {}).get(task, samples))
        held = sum(n for _, n in (_counts(task, own_run, earlier)))
        if keep < samples and held >= limit - keep:
            taken = _top_up(task, limit - keep, own_run, earlier)
            out[task] = Draw(True, tuple((run_id, len(extra)) for run_id, extra in taken), keep)
        else:
            out[task] = Draw(False, (), samples)
    return out


def _counts(task: str, own_run: str, earlier: Sequence[CachedRun]) -> list[tuple[str, int]]:
    return [
        (run.run_id, sum(s != "error" for s in run.outcomes.get(task, ())))
        for run in earlier
        if run.run_id != own_run
    ]


def pooled_floor(counts: Iterable[int], samples: int) -> int | None:
    """The baseline's attempts per task for the comparison with the cached attempts pooled in:
    the smallest judged count over the paired tasks when pooling gave every one more than
    `samples`; None when it did not (the arms' floors are then alike)."""
    least = min(counts, default=0)
    return least if least > samples else None


def own_floor(counts: Iterable[int], samples: int) -> int | None:
    """The baseline's own attempts per task beside a full cache (fewer than `samples`: the
    fresh attempts it made, stats/drift.py): the smallest judged count over the paired tasks
    when below `samples`; None when not (the arms' attempts are then alike)."""
    least = min(counts, default=0)
    return least if 0 < least < samples else None


def pooled_score(outcomes: Sequence[Status], pass_k: int) -> float | None:
    """A task's baseline score from pooled outcomes: the unbiased pass@k over all of them
    (c/n for pass_k 1); None when none was judged or fewer than pass_k were."""
    stats = task_stats(list(outcomes), pass_k)
    if stats.n == 0:
        return None
    return pass_at_k(stats.n, stats.c, pass_k)
