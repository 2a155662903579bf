"""The drift guard of a pooled baseline (stats/accumulate.py pools cached baseline attempts of
earlier runs). Cached attempts are draws of the baseline as it was: a model alias that moved,
a new agent version or a provider-side change makes them draws of another baseline, and the
cache key sees none of that. Two defences, both pure:

- Each pooled run keeps `fresh_counts` attempts of its own at every task the cache could fill
  (`FRESH_SHARE` of its baseline attempts: the pool still saves the rest) and `check` tests
  them against the cached attempts it would pool: the Miettinen-Nurminen score test of a zero
  difference (stats/score.py) on each task's fresh and cached passes, two-sided at
  `DRIFT_LEVEL`. It weighs tasks equally, as the verdict's mean difference does, so it
  estimates exactly the shift a drift puts into the verdict (a CMH test weighs tasks by their
  information and would test another average). Disagreeing runs are not pooled.
- The guard cannot see small drifts (20 tasks x 3 samples: 30 fresh attempts), so a pooled
  comparison's bounds are widened by the bias a drift of up to `DRIFT_TOLERANCE` in the cached
  attempts could put into the verdict: the tolerance times the mean share of cached attempts
  in each task's pool (`allowance`). Within the tolerance the verdict keeps its level whatever
  the guard said; beyond it the guard refuses the pool ever more often
  (scripts/bench_verdicts.py --only drift measures both). The tolerance is 6 points for the
  5-point drift the bench (and issue 41) names: at a drift exactly at the tolerance the
  widened bounds sit on the null, where the pooled score test runs at its own level (up to
  4.5% of a 4% level on the bench's grid); a point of room keeps the 5-point drift inside it.

The guard's statistic and the pool's mean are nearly independent (each task's pool weighs the
fresh and cached attempts by their counts, which is what cancels the covariance), so pooling
only when the guard agrees does not bias a pooled verdict. A refused run decides on its own
baseline, which holds the fresh attempts the guard found off: that selection, not the pool,
is what a refused run's verdict inherits (the bench's refused-run false accepts show it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Status
from .score import Tally, null_sd
from .student_t import t_upper_tail

FRESH_SHARE = 0.4  # of a run's baseline attempts, made afresh beside a full pool: 60% saved
DRIFT_LEVEL = 0.10  # two-sided: a guard that refuses too rarely lets drifts through
DRIFT_TOLERANCE = 0.06  # the drift of the cached attempts the bounds absorb: 5 points, with room


def fresh_counts(tasks: Sequence[str], samples: int, share: float = FRESH_SHARE) -> dict[str, int]:
    """Attempts per task a pooled run makes itself: `share` x `samples` on average, spread
    evenly over the tasks in order (at 1 sample and a half share, every other task gets one),
    so the run makes at most `share` of the baseline attempts it would make alone."""
    if not 0 <= share <= 1 or samples < 1:
        raise ValueError(f"share must be in [0, 1] and samples >= 1, got {share}, {samples}")
    per = share * samples
    return {
        t: math.floor((i + 1) * per + 1e-9) - math.floor(i * per + 1e-9)
        for i, t in enumerate(tasks)
    }


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
    """Whether this run's `fresh` baseline attempts and the `cached` ones it would pool (per
    task) agree: z = mean_i(f_i - c_i) / sd, the sd at the tasks' pooled pass chances (the
    score test at zero, stats/score.py), against a t tail on the fresh attempts less one.
    With no task holding both, there is nothing to test: they agree."""
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


def allowance(cached_shares: Iterable[float], tolerance: float = DRIFT_TOLERANCE) -> float:
    """How far a pooled comparison's bounds move apart: the bias of the mean difference when
    every cached attempt is `tolerance` off today's baseline, i.e. the tolerance times the
    mean share of cached attempts in the tasks' pools (0 without cached attempts)."""
    shares = list(cached_shares)
    if not shares:
        return 0.0
    return tolerance * math.fsum(shares) / len(shares)
