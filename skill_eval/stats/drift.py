"""A baseline cached by earlier runs, and what it may decide when today's baseline has drifted
(stats/accumulate.py draws the cached attempts; engine/baseline_reuse.py runs the draw).
Cached attempts are draws of the baseline as it was: a model alias that moved, a new agent
version or a provider-side change makes them draws of another baseline, and the cache key
sees none of that. Pure.

What decides. A pooled baseline's mean puts the drift of its cached attempts into the verdict
(their share times the drift), and no fixed allowance absorbs every drift: a cache 10 or 20
points below today's baseline passed a skill 10 points worse in up to 26% of runs under the
6-point allowance this replaced (issue 51). Widening the pool's bound by the drift its fresh
attempts cannot rule out (the bias a drift puts in, estimated from the fresh attempts against
the cached ones, with its own error) gives back exactly the bound of the candidate against the
fresh attempts alone: the pooled mean less that estimated bias is the fresh mean, task by task
(each task's pool weighs fresh and cached attempts by their counts), and the two errors add to
the fresh attempts' error. No rule that holds its level whatever the drift can do better: the
level of today's baseline is measured by today's attempts alone, so borrowing from the cache
cannot add power under strict control of false accepts (Kopp-Schneider, Calderazzo and
Wiesenfarth 2020, Biometrical Journal 62:361, for the one-sided tests used here). A test of
the drift that decides whether to pool (the guard of issue 41) does not help either: the
verdict's statistic and the guard's share the fresh attempts, so the runs the guard lets
through at a drift just past what it sees are the ones whose fresh attempts read low, and
false accepts rise above the level there whatever the runs it refuses do next.

So a run with a full cache decides on its own baseline attempts, as every run does; what the
cache buys is attempts: the run makes `fresh_counts` of them (FRESH_SHARE of its baseline, at
least one a task, so every task's drift is seen) where it would make `samples`, and the cached
ones stand beside them for reference. The summary states the bound the cache would have given
had it been today's baseline and how far the verdict's bound lies from it (`PoolShift`). The
guard's test (`check`) stays as a warning: a cache that disagrees with today's attempts is
probably stale. scripts/bench_verdicts.py --only drift measures false accepts over drift,
tasks, samples and pools.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Status
from .score import Tally, null_sd
from .student_t import t_upper_tail

FRESH_SHARE = 0.4  # of a run's baseline attempts, made afresh beside a full cache: 60% saved
DRIFT_LEVEL = 0.10  # two-sided: the guard's warning that the cache differs from today's


def fresh_counts(
    tasks: Sequence[str], samples: int, share: float = FRESH_SHARE, least: int = 1
) -> dict[str, int]:
    """Attempts per task a run beside a full cache makes itself: `share` x `samples` on
    average, at least `least` a task (pass@k needs k; every task's drift is seen) and at most
    `samples`, spread evenly over the tasks in order, so the run makes about `share` of the
    baseline attempts it would make alone (all of them where `least` is `samples`: then the
    cache saves nothing and is not drawn, `saves`)."""
    if not 0 <= share <= 1 or samples < 1 or least < 1:
        raise ValueError(
            f"share must be in [0, 1], samples and least >= 1, got {share}, {samples}, {least}"
        )
    per = min(float(samples), max(float(least), share * samples))
    return {
        t: math.floor((i + 1) * per + 1e-9) - math.floor(i * per + 1e-9)
        for i, t in enumerate(tasks)
    }


def saves(fresh: Mapping[str, int], samples: int) -> bool:
    """Whether making `fresh` attempts in place of `samples` a task saves any."""
    return any(n < samples for n in fresh.values())


@dataclass(frozen=True)
class DriftCheck:
    """The guard's answer: whether the fresh and cached attempts agree (p above `level`), the
    test's z and two-sided p, the mean pass rates of each over the tasks that have both, and
    how many tasks and attempts it read."""

    agree: bool
    z: float
    p: float
    fresh_rate: float | None
    cached_rate: float | None
    tasks: int
    fresh_attempts: int
    cached_attempts: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "Miettinen-Nurminen score test of no difference, fresh vs cached "
            "baseline attempts per task, two-sided",
            "agree": self.agree,
            "z": round(self.z, 4) if math.isfinite(self.z) else None,
            "p": round(self.p, 4),
            "level": self.level,
            "fresh_rate": None if self.fresh_rate is None else round(self.fresh_rate, 4),
            "cached_rate": None if self.cached_rate is None else round(self.cached_rate, 4),
            "tasks": self.tasks,
            "fresh_attempts": self.fresh_attempts,
            "cached_attempts": self.cached_attempts,
        }


def _tallies(
    fresh: Mapping[str, Sequence[Status]], cached: Mapping[str, Sequence[Status]]
) -> list[Tally]:
    out = []
    for task, mine in fresh.items():
        own = [s for s in mine if s != "error"]
        old = [s for s in cached.get(task, ()) if s != "error"]
        if own and old:
            out.append((own.count("passed"), len(own), old.count("passed"), len(old)))
    return out


def check(
    fresh: Mapping[str, Sequence[Status]],
    cached: Mapping[str, Sequence[Status]],
    level: float = DRIFT_LEVEL,
) -> DriftCheck:
    """Whether this run's `fresh` baseline attempts and the `cached` ones (per task) agree:
    z = mean_i(f_i - c_i) / sd, the sd at the tasks' pooled pass chances (the score test at
    zero, stats/score.py), against a t tail on the fresh attempts less one, tasks weighed
    equally as the verdict weighs them. With no task holding both, there is nothing to test:
    they agree. A warning only: nothing the verdict decides depends on it."""
    tallies = _tallies(fresh, cached)
    if not tallies:
        return DriftCheck(True, 0.0, 1.0, None, None, 0, 0, 0, level)
    n = len(tallies)
    fresh_rate = math.fsum(x / a for x, a, _, _ in tallies) / n
    cached_rate = math.fsum(y / b for _, _, y, b in tallies) / n
    sd = null_sd(tallies, 0.0)
    gap = fresh_rate - cached_rate
    if sd <= 0.0:
        z = 0.0 if abs(gap) < 1e-12 else math.copysign(math.inf, gap)
    else:
        z = gap / sd
    df = max(1, sum(a for _, a, _, _ in tallies) - 1)
    p = min(1.0, 2 * t_upper_tail(abs(z), df))
    return DriftCheck(
        p > level,
        z,
        p,
        fresh_rate,
        cached_rate,
        n,
        sum(a for _, a, _, _ in tallies),
        sum(b for _, _, _, b in tallies),
        level,
    )


@dataclass(frozen=True)
class PoolShift:
    """A verdict beside a full cache: the one-sided bound that decided (this run's own
    baseline attempts, `own_attempts` of them) and the bound the same test gives with the
    `cached_attempts` pooled in, as if they were draws of today's baseline (`pooled_bound`).
    `side` is the bound the policy's verdict rests on ("lower": a pass needs it above the
    threshold); `full_attempts`, what the run would have made without the cache. `shift` =
    bound - pooled_bound: what not trusting the cache with the verdict moved it by (negative:
    the cache would have made the verdict look better)."""

    side: str
    bound: float
    pooled_bound: float
    own_attempts: int
    cached_attempts: int
    full_attempts: int

    @property
    def shift(self) -> float:
        return self.bound - self.pooled_bound

    def to_dict(self) -> dict[str, Any]:
        return {
            "decided_on": "this run's own baseline attempts",
            "side": self.side,
            "bound": round(self.bound, 4),
            "pooled_bound": round(self.pooled_bound, 4),
            "shift": round(self.shift, 4),
            "own_attempts": self.own_attempts,
            "cached_attempts": self.cached_attempts,
            "full_attempts": self.full_attempts,
        }


__all__ = [
    "DRIFT_LEVEL",
    "FRESH_SHARE",
    "DriftCheck",
    "PoolShift",
    "check",
    "fresh_counts",
    "saves",
]
