"""The drift section of scripts/bench_verdicts.py: a pooled baseline whose cached attempts are
draws of another baseline than today's (cached runs 5 points lower or higher: a model alias
that moved, a new agent version), over the audit's grid: 20 and 50 tasks x 1, 2, 3, 5 and 10
samples x mid, spread, bimodal and high suites.

Each simulated run is what `skill-eval run --baseline-cache-dir` does when the cache holds a
full pool (the case where pooling saves attempts): it makes its fresh baseline attempts
(stats/drift.py: fresh_counts, 40% of its baseline attempts), the cache fills each task's pool to
4 x samples, the drift guard tests fresh against cached (stats/drift.check); when they agree
the candidate is decided against the pool with the bounds moved out by the drift allowance
(stats/drift.allowance, the score test of stats/score.py on the tallies); when not, the run
makes the rest of its own baseline attempts and decides as a run without a cache. Decisions
are the default policy's (no-regression: the one-sided 96% lower bound above -10 points), by
the test `decide_policy` asks (stats/intervals.PairedTest.clears).

Printed per cell: the false accepts of a skill 10 points worse than today's baseline with the
cache 5 points lower and 5 points higher, and of the same skill in a run without a cache (the
base test's own level, which some cells exceed without any pool), the passes of an unchanged
skill with an unchanged cache (and, for scale, of a run without a cache), how often the guard
refused the pool, and the share of baseline attempts the pool saved. The verdict holds only
when every cell's false accepts, as measured, are at or under the nominal level; the noise
(two standard errors at the nominal level) is printed beside them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from skill_eval.core.model import Status
from skill_eval.stats import drift
from skill_eval.stats.accumulate import pool_limit, pooled_floor
from skill_eval.stats.intervals import PairedTest
from skill_eval.stats.policy import DEFAULT_POLICY, POLICY_ALPHA, threshold_of

THETA = threshold_of(DEFAULT_POLICY, None)
ALPHA = POLICY_ALPHA[DEFAULT_POLICY]
TASKS = (20, 50)
SAMPLES = (1, 2, 3, 5, 10)
SUITES = ("mid", "spread", "bimodal", "high")
DRIFTS = (-0.05, 0.05)


def suite(kind: str, n: int, rng: random.Random) -> list[float]:
    """Today's baseline pass chances: mid 0.4-0.6, spread 0.2-0.8, bimodal half at 0.1-0.25
    and half at 0.75-0.9, high 0.85-0.95 (none where 10 points worse or 5 off leaves [0, 1])."""
    if kind == "bimodal":
        return [rng.uniform(0.1, 0.25) if i % 2 else rng.uniform(0.75, 0.9) for i in range(n)]
    low, high = {"mid": (0.4, 0.6), "spread": (0.2, 0.8), "high": (0.85, 0.95)}[kind]
    return [rng.uniform(low, high) for _ in range(n)]


def _draws(p: float, n: int, rng: random.Random) -> list[Status]:
    return ["passed" if rng.random() < p else "failed" for _ in range(n)]


@dataclass(frozen=True)
class Outcome:
    passed: bool
    pooled: bool
    made: int  # baseline attempts the run made itself


def one_run(
    cand: list[float], base: list[float], shift: float, s: int, rng: random.Random
) -> Outcome:
    """One run with a full pool whose cached attempts are `shift` off today's baseline."""
    tasks = [f"t{i}" for i in range(len(base))]
    limit = pool_limit(s)
    fresh_n = drift.fresh_counts(tasks, s)
    fresh = {t: _draws(q, fresh_n[t], rng) for t, q in zip(tasks, base, strict=True)}
    cached = {
        t: _draws(min(1.0, max(0.0, q + shift)), limit - fresh_n[t], rng)
        for t, q in zip(tasks, base, strict=True)
    }
    candidate = [_draws(p, s, rng) for p in cand]
    guard = drift.check(fresh, cached)
    if guard.agree:
        pool = [fresh[t] + cached[t] for t in tasks]
        shares = [len(cached[t]) / len(pool[i]) for i, t in enumerate(tasks)]
        test = _test(candidate, pool, s, drift.allowance(shares))
        return Outcome(test.clears(THETA, ALPHA, "lower"), True, sum(fresh_n.values()))
    own = [fresh[t] + _draws(q, s - fresh_n[t], rng) for t, q in zip(tasks, base, strict=True)]
    return Outcome(_test(candidate, own, s).clears(THETA, ALPHA, "lower"), False, len(tasks) * s)


def alone(cand: list[float], base: list[float], s: int, rng: random.Random) -> bool:
    """A run without a cache: s attempts per task and arm."""
    return _test([_draws(p, s, rng) for p in cand], [_draws(q, s, rng) for q in base], s).clears(
        THETA, ALPHA, "lower"
    )


def _test(
    cand: Sequence[list[Status]], base: Sequence[list[Status]], s: int, allowance: float = 0.0
) -> PairedTest:
    """The test `skill-eval run` decides by (stats/estimates.paired_comparison's choice)."""
    tallies = [
        (c.count("passed"), len(c), b.count("passed"), len(b))
        for c, b in zip(cand, base, strict=True)
    ]
    diffs = [x / a - y / b for x, a, y, b in tallies]
    binary = all(a == 1 and b == 1 for _, a, _, b in tallies)
    floor = pooled_floor((len(b) for b in base), s)
    return PairedTest.of(diffs, s, binary, floor, tallies, allowance)


@dataclass(frozen=True)
class Cell:
    tasks: int
    samples: int
    kind: str
    false_accepts: dict[float, float]  # per drift of the cache
    base_false_accepts: float  # the same skill in a run without a cache: the base test's level
    refused: dict[float, float]  # share of runs the guard refused, per drift (0.0: none)
    unchanged: float  # passes of an unchanged skill, cache unchanged
    unchanged_alone: float  # the same without a cache
    saved: float  # share of baseline attempts saved, cache unchanged


def cell(n: int, s: int, kind: str, reps: int, seed: int) -> Cell:
    base = suite(kind, n, random.Random(f"drift/suite/{kind}/{n}/{seed}"))
    worse = [q - 0.10 for q in base]
    fa, refused = {}, {}
    for shift in DRIFTS:
        rng = random.Random(f"drift/{kind}/{n}/{s}/{shift}/{seed}")
        runs = [one_run(worse, base, shift, s, rng) for _ in range(reps)]
        fa[shift] = sum(r.passed for r in runs) / reps
        refused[shift] = sum(not r.pooled for r in runs) / reps
    rng = random.Random(f"drift/same/{kind}/{n}/{s}/{seed}")
    same = [one_run(base, base, 0.0, s, rng) for _ in range(reps)]
    refused[0.0] = sum(not r.pooled for r in same) / reps
    plain = sum(alone(base, base, s, rng) for _ in range(reps)) / reps
    saved = 1 - sum(r.made for r in same) / (reps * n * s)
    rng = random.Random(f"drift/alone/{kind}/{n}/{s}/{seed}")
    own = sum(alone(worse, base, s, rng) for _ in range(reps)) / reps
    return Cell(n, s, kind, fa, own, refused, sum(r.passed for r in same) / reps, plain, saved)


def grid(reps: int, seed: int = 0) -> list[Cell]:
    return [cell(n, s, kind, reps, seed) for kind in SUITES for n in TASKS for s in SAMPLES]


def print_grid(cells: list[Cell], reps: int, seed: int) -> bool:
    """The table and whether every cell's false accepts, as measured, stay at or under the
    nominal level (the noise `reps` runs leave is printed, never added to the level)."""
    print(
        f"\nDrift: a full pool whose cached runs are 5 points lower / higher than today's "
        f"baseline; {reps} runs per cell, seed {seed}; fresh share {drift.FRESH_SHARE:.0%}, "
        f"guard level {drift.DRIFT_LEVEL:.0%} two-sided, allowance for "
        f"{drift.DRIFT_TOLERANCE * 100:.0f} points"
    )
    header = (
        f"{'suite':<8}{'tasks':>6}{'k':>4}{'FA -5':>7}{'FA +5':>7}{'FA none':>8}"
        f"{'refused -5/0/+5':>17}{'unchanged pooled':>18}{'alone':>7}{'saved':>7}"
    )
    print(header)
    print("-" * len(header))
    for c in cells:
        refused = "/".join(f"{c.refused[d]:.0%}" for d in (-0.05, 0.0, 0.05))
        print(
            f"{c.kind:<8}{c.tasks:>6}{c.samples:>4}{c.false_accepts[-0.05]:>7.1%}"
            f"{c.false_accepts[0.05]:>7.1%}{c.base_false_accepts:>8.1%}{refused:>17}"
            f"{c.unchanged:>18.1%}{c.unchanged_alone:>7.1%}{c.saved:>7.0%}"
        )
    return _verdict(cells, reps)


def _verdict(cells: list[Cell], reps: int) -> bool:
    worst = max(max(c.false_accepts.values()) for c in cells)
    noise = 2 * (ALPHA * (1 - ALPHA) / reps) ** 0.5
    over = [c for c in cells if max(c.false_accepts.values()) > ALPHA]
    base_over = [c for c in cells if c.base_false_accepts > ALPHA]
    least_saved = min(c.saved for c in cells)
    print(
        f"drift guard: false accepts at most {worst:.2%} in any cell (nominal {ALPHA:.0%}, "
        f"+-{noise:.2%} of noise at {reps} runs), {len(over)} of {len(cells)} cells above it: "
        f"{'BROKEN' if over else 'holds'}; the pool saves at least {least_saved:.0%} of a "
        f"cell's baseline attempts"
    )
    print(
        f"without a cache the base test itself accepts the worse skill in at most "
        f"{max(c.base_false_accepts for c in cells):.2%} of runs ({len(base_over)} cells above "
        f"{ALPHA:.0%})"
    )
    for c in over:
        print(
            f"  above nominal: {c.kind} {c.tasks} x {c.samples}: "
            f"{max(c.false_accepts.values()):.2%} (without a cache {c.base_false_accepts:.2%})"
        )
    return not over
