"""Statistics for a skill evaluation: pass@k and pass^k per task, a paired comparison of two arms.

Pure functions over plain data (no I/O, no numpy); stats/policy.py and stats/verdict.py turn
the results into a verdict.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Literal

from skill_eval.core.model import Status

from .intervals import PairedTest
from .intervals import t_floor_interval as t_floor_interval  # re-exported: it lived here
from .score import Tally, checked_tally

Label = Literal["stable_pass", "stable_fail", "flaky", "error"]
IntervalMethod = Literal["auto", "t-floor", "bootstrap"]


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


def _round_p(p: float) -> float:
    # p-values keep 4 significant figures, so a tiny p does not print as 0.
    return float(f"{p:.4g}")


# ---------------------------------------------------------------------------------------------
# Per task and arm


def _check_counts(n: int, c: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k from n attempts with c passes: 1 − C(n−c, k) / C(n, k).

    The chance that k attempts drawn without replacement from the n include a pass
    (Chen et al. 2021). None when n < k: the estimator is undefined, not 1.0.
    """
    _check_counts(n, c, k)
    if n < k:
        return None
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass^k (all k attempts pass) from n attempts with c passes: C(c, k) / C(n, k).

    None when n < k.
    """
    _check_counts(n, c, k)
    if n < k:
        return None
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


@dataclass(frozen=True)
class TaskStats:
    """One task in one arm. n counts passed + failed; attempts that errored are in `errors`."""

    n: int
    c: int
    errors: int
    k: int
    pass_at_k: float | None
    pass_hat_k: float | None
    label: Label
    first_k_passed: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "c": self.c,
            "errors": self.errors,
            "k": self.k,
            "pass_at_k": _round(self.pass_at_k),
            "pass_hat_k": _round(self.pass_hat_k),
            "label": self.label,
            "first_k_passed": self.first_k_passed,
        }


def task_stats(outcomes: Sequence[Status], k: int) -> TaskStats:
    """Summarise one task's attempts (in the order they were made) in one arm.

    `label`: stable_pass (every non-error attempt passed), stable_fail (none did), flaky (some
    did), error (every attempt errored). `first_k_passed`: any pass among the first k non-error
    attempts, the old tool's "task passes pass@k"; None when every attempt errored.
    """
    bad = [o for o in outcomes if o not in ("passed", "failed", "error")]
    if bad:
        raise ValueError(f"unknown status {bad[0]!r}; expected passed, failed or error")
    judged = [o for o in outcomes if o != "error"]
    n, c = len(judged), judged.count("passed")
    label: Label
    if n == 0:
        label = "error"
    elif c == n:
        label = "stable_pass"
    elif c == 0:
        label = "stable_fail"
    else:
        label = "flaky"
    return TaskStats(
        n=n,
        c=c,
        errors=len(outcomes) - n,
        k=k,
        pass_at_k=pass_at_k(n, c, k),
        pass_hat_k=pass_hat_k(n, c, k),
        label=label,
        first_k_passed=None if n == 0 else "passed" in judged[:k],
    )


# ---------------------------------------------------------------------------------------------
# Paired comparison over tasks


@dataclass(frozen=True)
class Comparison:
    """Candidate vs baseline over the tasks scored in both arms (delta = candidate − baseline)."""

    n_tasks: int
    candidate_rate: float | None
    baseline_rate: float | None
    delta: float | None
    interval: tuple[float, float] | None
    confidence: float
    method: str
    differences: dict[str, float]
    improved: tuple[str, ...]
    regressed: tuple[str, ...]
    excluded: tuple[str, ...]
    mcnemar_p: float
    # Attempts per task and arm behind each score, and whether every score is a 0/1 outcome:
    # together they choose the test (stats/intervals.py). Not in to_dict: `method` says it.
    samples: int = 1
    binary: bool = False
    baseline_samples: int | None = None  # when the baseline's attempts per task differ
    # Per paired task, in order: each arm's passes and attempts (paired_comparison's `tallies`)
    tallies: tuple[Tally, ...] | None = None

    def paired_test(self, samples: int | None = None) -> PairedTest:
        """The test behind the interval: exact for one 0/1 outcome per task and arm (up to
        EXACT_MAX_TASKS tasks), the score test on the tallies against a pooled baseline, the
        t-floor interval otherwise. `samples` overrides the attempts per task the scores came from
        (and with it the tallies: the t-floor interval at that floor)."""
        return PairedTest.of(
            list(self.differences.values()),
            self.samples if samples is None else samples,
            self.binary,
            self.baseline_samples if samples is None else None,
            self.tallies if samples is None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_tasks": self.n_tasks,
            "candidate_rate": _round(self.candidate_rate),
            "baseline_rate": _round(self.baseline_rate),
            "delta": _round(self.delta),
            "interval": None if self.interval is None else [round(x, 4) for x in self.interval],
            "confidence": self.confidence,
            "method": self.method,
            "differences": {t: round(d, 4) for t, d in self.differences.items()},
            "improved": list(self.improved),
            "regressed": list(self.regressed),
            "excluded": list(self.excluded),
            "mcnemar_p": _round_p(self.mcnemar_p),
        }


def _quantile(sorted_xs: list[float], p: float) -> float:
    # Linear interpolation between order statistics (Hyndman & Fan type 7).
    pos = p * (len(sorted_xs) - 1)
    i = math.floor(pos)
    j = min(i + 1, len(sorted_xs) - 1)
    return sorted_xs[i] + (sorted_xs[j] - sorted_xs[i]) * (pos - i)


def _bootstrap_interval(
    diffs: list[float], confidence: float, seed: int, resamples: int
) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(math.fsum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    alpha = 1 - confidence
    return (_quantile(means, alpha / 2), _quantile(means, 1 - alpha / 2))


def binomial_two_sided_p(b: int, c: int) -> float:
    """Exact two-sided McNemar / sign test: min(1, 2·P(X ≤ min(b, c))), X ~ Bin(b + c, 1/2);
    1.0 when b + c == 0."""
    m = b + c
    if m == 0:
        return 1.0
    tail = Fraction(sum(math.comb(m, i) for i in range(min(b, c) + 1)), 2**m)
    return float(min(Fraction(1), 2 * tail))


def paired_comparison(
    candidate: Mapping[str, float | None],
    baseline: Mapping[str, float | None],
    *,
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = 10000,
    samples: int = 1,
    interval_method: IntervalMethod = "auto",
    baseline_samples: int | None = None,
    tallies: Mapping[str, Tally] | None = None,
) -> Comparison:
    """Compare per-task scores in [0, 1] (a 0/1 pass, or a pass rate c/n when samples > 1).

    Only tasks scored in both arms are paired; the others (missing, or None = error) are listed
    in `excluded`. d_i = candidate_i − baseline_i; delta = mean(d_i). Tasks are the unit of
    replication: the interval speaks of tasks like these, not of these tasks' attempts alone.

    Interval ("auto", the default): when every score is a 0/1 outcome of one attempt per task
    and arm (samples == 1) and there are at most EXACT_MAX_TASKS tasks, the exact unconditional
    interval of stats/exact.py: no approximation, and for small suites it is what decides (5 of
    5 tasks improved rule out a 10-point regression at 96%, 4 of 4 do not). Otherwise the
    "t-floor" interval of stats/intervals.py (t_floor_interval: a Student-t interval over tasks
    with a pseudo-task variance floor, h = 1/samples, so that 20 tasks that agree do not prove
    the arms always agree; leaving samples at 1 for pass rates is conservative), with
    `baseline_samples` the baseline's attempts per task when they differ from the candidate's
    (floor_of says how). "bootstrap": the seeded percentile bootstrap over tasks
    (random.Random(seed), `resamples` draws), for comparison.

    `tallies`: per task, (candidate passes, attempts, baseline passes, attempts) behind pass
    rates of attempts taken a fixed number per task (not by --budget or --early-stop): with
    "auto" and a baseline whose attempts differ from the candidate's (pooled with the cache,
    or its fresh attempts beside a full cache) they choose the score test of stats/score.py.

    `mcnemar_p`: for 0/1 scores, the exact McNemar test on discordant tasks (b improved,
    c regressed); for fractional scores, the exact sign test on the signs of d_i.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if baseline_samples is not None and baseline_samples < 1:
        raise ValueError(f"baseline_samples must be >= 1, got {baseline_samples}")
    paired, excluded = _pair(candidate, baseline)
    differences = {t: cand - base for t, cand, base in paired}
    improved = tuple(t for t, d in differences.items() if d > 0)
    regressed = tuple(t for t, d in differences.items() if d < 0)
    binary = all(s in (0.0, 1.0) for _, cand, base in paired for s in (cand, base))
    test = "exact McNemar test" if binary else "exact sign test on per-task differences"
    diffs = list(differences.values())
    aligned = None if tallies is None else tuple(checked_tally(tallies, *task) for task in paired)
    paired_test, how = _interval_test(
        diffs, samples, binary, baseline_samples, interval_method, seed, resamples, aligned
    )
    interval: tuple[float, float] | None = None
    if paired and interval_method == "bootstrap":
        interval = _bootstrap_interval(diffs, confidence, seed, resamples)
    elif paired:
        interval = paired_test.interval(confidence)
    rates = _mean_rates(paired)
    return Comparison(
        n_tasks=len(paired),
        candidate_rate=rates[0],
        baseline_rate=rates[1],
        delta=rates[2],
        interval=interval,
        confidence=confidence,
        method=f"{how}; {test}",
        differences=differences,
        improved=improved,
        regressed=regressed,
        excluded=tuple(excluded),
        mcnemar_p=binomial_two_sided_p(len(improved), len(regressed)),
        samples=samples,
        binary=binary and interval_method != "t-floor",
        baseline_samples=baseline_samples,
        tallies=paired_test.tallies,
    )


def _pair(
    candidate: Mapping[str, float | None], baseline: Mapping[str, float | None]
) -> tuple[list[tuple[str, float, float]], list[str]]:
    """(task, candidate score, baseline score) of every task scored in both arms, in the
    candidate's task order, and the tasks left out (missing, or None = error, in an arm)."""
    paired: list[tuple[str, float, float]] = []
    excluded: list[str] = []
    for task_id in [*candidate, *(t for t in baseline if t not in candidate)]:
        cand, base = candidate.get(task_id), baseline.get(task_id)
        if cand is None or base is None:
            excluded.append(task_id)
            continue
        for score in (cand, base):
            if not 0.0 <= score <= 1.0:
                raise ValueError(f"task {task_id!r}: score {score} is outside [0, 1]")
        paired.append((task_id, float(cand), float(base)))
    return paired, excluded


def _interval_test(
    diffs: list[float],
    samples: int,
    binary: bool,
    baseline_samples: int | None,
    interval_method: IntervalMethod,
    seed: int,
    resamples: int,
    tallies: tuple[Tally, ...] | None = None,
) -> tuple[PairedTest, str]:
    """The test behind the interval `interval_method` asks for, and how to name it (the
    tallies serve "auto" only)."""
    if interval_method != "auto":
        tallies = None
    paired_test = PairedTest.of(diffs, samples, binary, baseline_samples, tallies)
    if interval_method == "auto":
        return paired_test, paired_test.method
    if interval_method == "t-floor":
        paired_test = PairedTest.of(diffs, samples, False, baseline_samples)
        return paired_test, paired_test.method
    if interval_method == "bootstrap":
        return paired_test, f"percentile bootstrap over tasks ({resamples} resamples, seed {seed})"
    raise ValueError(f"unknown interval_method {interval_method!r}; use auto, t-floor or bootstrap")


def _mean_rates(paired: list[tuple[str, float, float]]) -> tuple[float | None, ...]:
    """Mean candidate score, mean baseline score and mean difference over the paired tasks."""
    n = len(paired)
    if n == 0:
        return (None, None, None)
    return (
        math.fsum(c for _, c, _ in paired) / n,
        math.fsum(b for _, _, b in paired) / n,
        math.fsum(c - b for _, c, b in paired) / n,
    )


# ---------------------------------------------------------------------------------------------
# Planning


def power_hint(
    baseline_rate: float,
    lift: float = 0.1,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    samples: int = 1,
    discordance: float | None = None,
    n_tasks: int | None = None,
) -> str:
    """One line: roughly how many tasks are needed to detect `lift` with a two-sided test.

    Paired-proportions (McNemar) sample size, Connor (1987):
    N = (z_{1−α/2}·√ψ + z_power·√(ψ − δ²))² / (δ² · samples), δ = the lift (clipped so the
    candidate rate ≤ 1), ψ = the share of paired attempts on which the arms disagree. Without
    `discordance`, ψ assumes the arms pass independently within a task,
    ψ = p_c(1 − p_b) + p_b(1 − p_c): a pessimistic figure, as real tasks that are hard for one
    arm tend to be hard for both; pass the observed discordance for a sharper one. Dividing by
    `samples` assumes all disagreement is attempt-level noise (tasks otherwise alike), so for
    samples > 1 the figure is a lower bound.
    """
    if not 0 <= baseline_rate <= 1:
        raise ValueError(f"baseline_rate must be in [0, 1], got {baseline_rate}")
    if lift <= 0:
        raise ValueError(f"lift must be > 0, got {lift}")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    p_b = baseline_rate
    p_c = min(1.0, p_b + lift)
    delta = p_c - p_b
    suite = "" if n_tasks is None else f" (this suite has {n_tasks})"
    if delta <= 0:
        return f"no lift is possible over a {p_b:.0%} baseline{suite}"
    psi = p_c * (1 - p_b) + p_b * (1 - p_c) if discordance is None else discordance
    if not delta <= psi <= 1:
        raise ValueError(f"discordance must be in [{delta:.3g}, 1] for this lift, got {psi}")
    z = NormalDist().inv_cdf
    root = z(1 - alpha / 2) * math.sqrt(psi) + z(power) * math.sqrt(psi - delta**2)
    needed = max(1, math.ceil(root**2 / (delta**2 * samples)))
    plural = "sample" if samples == 1 else "samples"
    return (
        f"detecting a {delta * 100:.0f}-point lift over a {p_b:.0%} baseline at {power:.0%} "
        f"power needs about {needed} tasks × {samples} {plural}{suite}, assuming the arms "
        f"disagree on {psi:.0%} of paired attempts"
    )
