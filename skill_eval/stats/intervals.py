"""One-sided bounds and tests of a paired difference over tasks: the exact test when every task
has one pass/fail outcome per arm (stats/exact.py), the score test when the arms made
different numbers of pass/fail attempts a task (a baseline beside a full cache made fewer,
stats/drift.py; one pooled with the cache, more: stats/score.py), the t interval with a
pseudo-task floor otherwise. `PairedTest` is what the policies, the early stop
and the planning figures ask: "does the difference lie above (or below) theta at this level,
and where is the bound?". Pure. (t_quantile and t_upper_tail live in stats/student_t.py.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .exact import EXACT_MAX_TASKS, exact_bound, exact_p
from .score import Tally, score_bound, score_p
from .student_t import t_quantile, t_upper_tail

Side = Literal["lower", "upper"]
# Float noise allowance when a bound is compared with a threshold.
EPS = 1e-9


def floor_of(samples: int, baseline_samples: int | None = None) -> float:
    """The pseudo-task floor, 1/a² + 1/b² with a = samples and b = the baseline's attempts
    per task, b never taken above a. A baseline pooled from the cache (b > a) narrows the
    interval through the spread of the per-task differences, not through the floor: the
    floor stands for the discordance the candidate's own a attempts may not have shown, which
    more baseline attempts do not reduce. Shrinking it to 1/a² + 1/b² accepts a skill 10
    points worse on every task in up to 12% of runs where the baseline nearly always passes
    (20 tasks, 1 sample, a pool of 4), and 5-8% at 2-3 samples (one-sided level 4%);
    with b capped at a no such suite does worse than fixed sampling, though some still reach
    5-6% (scripts/bench_score_tests.py --grid). Pass/fail attempts against a pooled
    baseline are decided by the score test instead (stats/score.py); the floor serves pooled
    scores that are not pass rates of fixed attempts (pass@k, --budget, --early-stop)."""
    b = min(baseline_samples or samples, samples)
    return 1.0 / samples**2 + 1.0 / b**2


def _t_floor_parts(
    diffs: Sequence[float], samples: int, baseline_samples: int | None = None
) -> tuple[float, float]:
    """The mean and the standard error of the t-floor interval (see t_floor_interval)."""
    n = len(diffs)
    mean = math.fsum(diffs) / n
    ss = math.fsum((d - mean) ** 2 for d in diffs) + floor_of(samples, baseline_samples)
    return mean, math.sqrt(ss / (n + 1) / n)


def t_floor_interval(
    diffs: Sequence[float],
    confidence: float,
    samples: int,
    baseline_samples: int | None = None,
) -> tuple[float, float]:
    """The t interval with a pseudo-task variance floor (stats.estimates.paired_comparison):
    mean ± t_{n−1} · sqrt((Σ(d_i − mean)² + 1/a² + 1/b²) / ((n + 1) · n)), clipped to [−1, 1],
    a = samples and b = baseline_samples (default: samples; never above a, see `floor_of`)
    the attempts per task behind each arm's score: two pseudo-tasks one attempt's worth off
    the mean, one won by each arm (2h² with h = 1/samples when the arms match). Fewer than
    two tasks give [−1, 1]."""
    n = len(diffs)
    if n < 2:
        return (-1.0, 1.0)  # one task says nothing about the spread
    mean, se = _t_floor_parts(diffs, samples, baseline_samples)
    q = t_quantile(confidence, n - 1)
    return (max(-1.0, mean - q * se), min(1.0, mean + q * se))


def _one_sided_level(alpha: float) -> float:
    if not 0 < alpha < 0.5:
        raise ValueError(f"one-sided alpha must be in (0, 0.5), got {alpha}")
    return 1 - alpha


@dataclass(frozen=True)
class PairedTest:
    """The per-task differences (candidate − baseline, each in [−1, 1]) and how to bound their
    mean. `counts` (improved, regressed, tasks) is set when the exact test applies: every task
    one pass/fail outcome per arm and at most EXACT_MAX_TASKS tasks; `tallies` (each task's
    passes and attempts per arm, in the order of `diffs`) when the score test applies.
    `samples` is the attempts per task and arm behind each difference (the pseudo-task floor's
    h = 1/samples); `baseline_samples` the baseline's, when they differ."""

    diffs: tuple[float, ...]
    samples: int = 1
    counts: tuple[int, int, int] | None = None
    baseline_samples: int | None = None  # the baseline's attempts per task, when not `samples`
    tallies: tuple[Tally, ...] | None = None

    @classmethod
    def of(
        cls,
        diffs: Sequence[float],
        samples: int,
        binary: bool,
        baseline_samples: int | None = None,
        tallies: Sequence[Tally] | None = None,
    ) -> PairedTest:
        """`tallies`: every task's (candidate passes, attempts, baseline passes, attempts), when
        the scores are pass rates of attempts taken a fixed number per task; the score test
        uses them when the arms' attempts differ (`baseline_samples` set and not `samples`)."""
        values = tuple(float(d) for d in diffs)
        counts = None
        one_each = samples == 1 and baseline_samples in (None, 1)
        if binary and one_each and 0 < len(values) <= EXACT_MAX_TASKS:
            counts = (sum(d > 0 for d in values), sum(d < 0 for d in values), len(values))
        scored = None
        unequal = baseline_samples is not None and baseline_samples != samples
        if counts is None and tallies and unequal:
            if len(tallies) != len(values):
                raise ValueError(f"{len(tallies)} tallies for {len(values)} differences")
            scored = tuple(tallies)
        return cls(values, samples, counts, baseline_samples, scored)

    @property
    def exact(self) -> bool:
        return self.counts is not None

    @property
    def n(self) -> int:
        return len(self.diffs)

    def bound(self, alpha: float, side: Side) -> float:
        """The one-sided (1 − alpha) lower or upper bound of the mean difference."""
        level = _one_sided_level(alpha)
        if self.counts is not None:
            b, c, n = self.counts
            return exact_bound(b, c, n, round(level, 9), side)
        if self.tallies is not None:
            return score_bound(self.tallies, alpha, side)
        low, high = t_floor_interval(self.diffs, 1 - 2 * alpha, self.samples, self.baseline_samples)
        return low if side == "lower" else high

    def interval(self, confidence: float) -> tuple[float, float]:
        """The two-sided interval: each end a one-sided bound at (1 − confidence) / 2."""
        alpha = (1 - confidence) / 2
        return (self.bound(alpha, "lower"), self.bound(alpha, "upper"))

    def clears(self, theta: float, alpha: float, side: Side) -> bool:
        """Whether the data put the mean above theta (side "lower": the lower bound clears it)
        or below it ("upper"), at one-sided level alpha. The exact test decides by its p-value
        at theta itself, so the answer never rests on the bisection of the bound; so does the
        score test."""
        if self.n == 0:
            return False
        if self.counts is not None or self.tallies is not None:
            return self.p_value(theta, side) <= alpha
        bound = self.bound(alpha, side)
        return bound > theta + EPS if side == "lower" else bound < theta - EPS

    def p_value(self, theta: float, side: Side) -> float:
        """One-sided p-value for "the mean lies above theta" (side "lower") or "below"."""
        if self.n == 0:
            return 1.0
        if self.counts is not None:
            b, c, n = self.counts
            return exact_p(b, c, n, round(theta, 9), "above" if side == "lower" else "below")
        if self.tallies is not None:
            return score_p(self.tallies, theta, side)
        if self.n < 2:
            return 1.0
        mean, se = _t_floor_parts(self.diffs, self.samples, self.baseline_samples)
        t = (mean - theta) / se if side == "lower" else (theta - mean) / se
        return t_upper_tail(t, self.n - 1)

    @property
    def method(self) -> str:
        if self.counts is not None:
            return (
                "exact unconditional test on the paired pass/fail outcomes "
                "(Tango score ordering), bounds by inversion"
            )
        if self.tallies is not None:
            made = self.baseline_samples or self.samples
            which = (
                f"baseline pooled: {made} attempts a task"
                if made > self.samples
                else f"the baseline's own attempts beside a full cache: {made} or more a task"
            )
            return (
                f"Miettinen-Nurminen score test on the tasks' pass/fail attempts ({which}), "
                "bounds by inversion"
            )
        b = self.baseline_samples
        if b is not None and b < self.samples:
            return (
                f"t interval over tasks with a pseudo-task variance floor (±1/{self.samples} "
                f"candidate, ±1/{b} baseline)"
            )
        pooled = (
            f" (baseline pooled: {b} attempts a task)" if b is not None and b > self.samples else ""
        )
        return f"t interval over tasks with a ±1/{self.samples} pseudo-task variance floor{pooled}"
