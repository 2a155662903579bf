"""Baseline accumulation: a run whose baseline is unchanged (same cache key) compares the
candidate with every cached baseline attempt of earlier runs, up to a limit, plus its own, so
each later candidate meets a sharper baseline. Pure: the engine (engine/baseline_reuse.py)
asks `draw` which cached attempts a run takes before it runs (and at which tasks the cache
alone fills the pool, so the run makes no baseline attempt there), the finish step states the
pool with `pool_baseline`, and the comparison scores each task on all its baseline attempts
(stats.analysis.task_score: the unbiased pass@k, as `pooled_score`), the pool's size at
`pooled_floor` attempts (stats.estimates.paired_comparison's `baseline_samples`): with pass@1
the score test on each task's attempts decides (stats/score.py), otherwise the t-floor
interval (stats.policy.decide_policy either way).

Why it keeps the false-accept guarantee: cached attempts are earlier draws of the same
baseline (same suite, skill, executor, model and settings: the cache key; what the key cannot
see, a model or service that drifted, the drift guard of stats/drift.py checks with fresh
attempts and the bounds' drift allowance absorbs 5 points with room), so a task's pooled
pass rate is an unbiased estimate of its baseline pass chance with less noise; the score test
models each arm's attempts as they are (the candidate's few, the pool's many), and the t-floor
interval keeps the candidate's (smaller) attempt count in its floor. Which cached attempts are
taken depends on the cache alone, never on this run's outcomes. scripts/bench_verdicts.py
measures both rates with 9 cached attempts per task, scripts/bench_score_tests.py --grid the
false accepts over suite shapes and sizes.

A caveat the artifact states: reusing one baseline across many candidates ties their errors
together (an unlucky baseline makes every candidate look alike), which is why the limit caps
how far one set of baseline attempts is leaned on, and why cached attempts expire
(--baseline-ttl).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Status
from .estimates import pass_at_k, task_stats

# At most this many baseline attempts per task and run sample, own ones included: 4 x 3 = 12
# attempts for a 3-sample run (its 3 and 9 cached). Beyond that the candidate's own noise
# dominates the difference (variance p(1-p)/3 + q(1-q)/12 is already 80% candidate).
POOL_FACTOR = 4


@dataclass(frozen=True)
class CachedRun:
    """One earlier run's baseline attempts: its run id and, per task, the statuses of its
    attempts in the order they were made (attempts in error are never cached)."""

    run_id: str
    outcomes: Mapping[str, Sequence[Status]]


@dataclass(frozen=True)
class PooledBaseline:
    """Per task, the baseline outcomes the comparison uses (this run's first, then earlier
    runs', newest first) and where they came from: (run id, attempts used) in that order."""

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
    attempts fill the pool beside the `own` fresh attempts the run keeps for the drift guard
    (stats/drift.py: fresh_counts; 0 without it); otherwise the run makes its own `samples`
    (`own`) and the cache tops them up. `take`: (run id, attempts) from each cached run,
    newest first."""

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
    needs beside the task's `fresh` attempts (default 0) when the earlier runs hold that many,
    else up to `limit - samples` beside the run's own (the pool `pool_baseline` then states).
    It depends on the cache alone, never on this run's outcomes."""
    if limit < 1 or samples < 1:
        raise ValueError(f"samples and limit must be >= 1, got {samples}, {limit}")
    out: dict[str, Draw] = {}
    for task in tasks:
        keep = min(samples, (fresh or {}).get(task, 0))
        held = sum(n for _, n in (_counts(task, own_run, earlier)))
        whole = held >= limit - keep
        own = keep if whole else samples
        taken = _top_up(task, limit - own, own_run, earlier)
        out[task] = Draw(whole, tuple((run_id, len(extra)) for run_id, extra in taken), own)
    return out


def _counts(task: str, own_run: str, earlier: Sequence[CachedRun]) -> list[tuple[str, int]]:
    return [
        (run.run_id, sum(s != "error" for s in run.outcomes.get(task, ())))
        for run in earlier
        if run.run_id != own_run
    ]


def pooled_floor(counts: Iterable[int], samples: int) -> int | None:
    """The baseline's attempts per task for the paired interval's pseudo-task floor: the
    smallest judged count over the paired tasks when pooling gave every one more than
    `samples`; None when it did not (the arms' floors are then alike)."""
    least = min(counts, default=0)
    return least if least > samples else None


def pooled_score(outcomes: Sequence[Status], pass_k: int) -> float | None:
    """A task's baseline score from pooled outcomes: the unbiased pass@k over all of them
    (c/n for pass_k 1); None when none was judged or fewer than pass_k were."""
    stats = task_stats(list(outcomes), pass_k)
    if stats.n == 0:
        return None
    return pass_at_k(stats.n, stats.c, pass_k)
