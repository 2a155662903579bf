"""The drift section of scripts/bench_verdicts.py: a baseline cache whose attempts are draws of
another baseline than today's (a model alias that moved, a new agent version, a change behind
the provider's API), over the audit's grid (issue 51): 10, 20 and 50 tasks x 1, 3 and 10
samples x caches of 1, 3 and 10 earlier runs x the cache 0, ±3, ±5, ±10 and ±20 points off
today's baseline x two suites (spread: pass chances 20-80%; high: 85-95%): 486 cells.

Each simulated run is what `skill-eval run --baseline-cache-dir` does (the project's own
functions choose it): the earlier runs made `samples` attempts a task each; where the cache
holds a full pool and drawing saves attempts (stats/drift.py: fresh_counts, saves;
stats/accumulate.py: draw) the run makes only its fresh attempts and draws the rest, else it
makes all its own and draws nothing. Either way it decides on its own attempts by the default
policy (no-regression: the one-sided 96% lower bound above -10 points), with the test
engine/summary.py picks: the exact test at one attempt a task and arm, the t-floor interval
at equal attempts, the score test when the fresh attempts are fewer. The decisions are the
vector forms of scripts/drift_vectors.py, checked decision for decision against the
project's functions on the first runs of every cell.

Printed per cell: the false accepts of a skill exactly 10 points worse than today's baseline,
with two standard errors of Monte Carlo error; per row, the share of baseline attempts the
cache saved, how often the drift test warned at a 10-point drift either way, and the passes
of an unchanged skill beside that cache and without one. The guard holds when every cell, as
measured, is at or under 5%.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
from drift_vectors import (
    Bools,
    agree,
    check_against_project,
    check_guard,
    exact_passes,
    score_passes,
    t_floor_passes,
)

from skill_eval.core.model import Status
from skill_eval.stats import drift
from skill_eval.stats.accumulate import CachedRun, draw, pool_limit
from skill_eval.stats.policy import DEFAULT_POLICY, POLICY_ALPHA, threshold_of

THETA = threshold_of(DEFAULT_POLICY, None)
ALPHA = POLICY_ALPHA[DEFAULT_POLICY]
HELD_TO = 0.05  # the nominal 4% plus the base tests' known excess (references/verdicts.md)
TASKS = (10, 20, 50)
SAMPLES = (1, 3, 10)
POOLS = (1, 3, 10)
DRIFTS = (0, -3, 3, -5, 5, -10, 10, -20, 20)  # points: the cache's pass chances less today's
SUITES = ("spread", "high")
CHECKED = 12  # runs of every cell decided again by the project's own functions


def suite(kind: str, n: int, seed: int) -> list[float]:
    """Today's baseline pass chances: spread 0.2-0.8, high 0.85-0.95."""
    rng = random.Random(f"drift/suite/{kind}/{n}/{seed}")
    low, high = {"spread": (0.2, 0.8), "high": (0.85, 0.95)}[kind]
    return [rng.uniform(low, high) for _ in range(n)]


@dataclass(frozen=True)
class Design:
    """What the run does beside a cache of `pool` earlier runs: its own attempts a task
    (fewer than `samples` where it draws) and the cached ones drawn beside them."""

    own: np.ndarray
    cached: np.ndarray

    @property
    def drawn(self) -> bool:
        return bool(self.cached.sum())


def design(n: int, samples: int, pool: int) -> Design:
    """The engine's choice (engine/baseline_reuse.py), by the project's functions."""
    tasks = [f"t{i}" for i in range(n)]
    outcomes: list[Status] = ["passed"] * samples  # the draw reads counts, never outcomes
    earlier = [CachedRun(f"r{j}", dict.fromkeys(tasks, outcomes)) for j in range(pool)]
    fresh = drift.fresh_counts(tasks, samples)
    if not drift.saves(fresh, samples):
        return Design(np.full(n, samples), np.zeros(n, dtype=np.int64))
    plan = draw("now", tasks, earlier, samples, pool_limit(samples), fresh)
    return Design(
        np.array([plan[t].own for t in tasks]), np.array([plan[t].attempts for t in tasks])
    )


@dataclass
class Cell:
    rate: float
    runs: int
    warned: float | None = None  # share of runs the drift test warned in (when drawn)

    @property
    def error(self) -> float:
        """Two standard errors of the Monte Carlo estimate (one at 1/runs when none passed)."""
        p = max(self.rate, 1 / self.runs)
        return 2 * math.sqrt(p * (1 - p) / self.runs)


@dataclass
class Tally:
    mismatches: int = 0
    checked: int = 0


def simulate(
    cand: list[float],
    base: list[float],
    shift: float,
    samples: int,
    plan: Design,
    runs: int,
    rng: np.random.Generator,
    tally: Tally,
) -> Cell:
    """`runs` runs of a candidate with pass chances `cand` against today's `base`, beside a
    cache `shift` off it: how often the default policy passes the candidate."""
    p, q = np.array(cand), np.array(base)
    n = len(q)
    x = rng.binomial(samples, p, size=(runs, n))
    y = rng.binomial(plan.own, q, size=(runs, n))
    b = plan.own
    passed: Bools
    if plan.drawn:
        passed = score_passes(x, samples, y, b, THETA, ALPHA)
    elif samples == 1:
        passed = exact_passes(x, y, THETA, ALPHA)
    else:
        passed = t_floor_passes(x, y, samples, THETA, ALPHA)
    tally.mismatches += check_against_project(passed, x, samples, y, b, THETA, ALPHA, CHECKED)
    tally.checked += min(CHECKED, runs)
    warned = None
    if plan.drawn:
        k = plan.cached
        y_cached = rng.binomial(k, np.clip(q + shift, 0.0, 1.0), size=(runs, n))
        said = agree(y, b, y_cached, k)
        tally.mismatches += check_guard(said, y, b, y_cached, k, CHECKED)
        tally.checked += min(CHECKED, runs)
        warned = float(1 - said.mean())
    return Cell(float(passed.mean()), runs, warned)


@dataclass
class Row:
    kind: str
    tasks: int
    samples: int
    pool: int
    false_accepts: dict[int, Cell]  # per drift, in points
    saved: float  # share of the baseline's attempts the cache saved
    unchanged: Cell  # passes of an unchanged skill beside this cache (no drift)
    alone: Cell  # the same without a cache


def grid(runs: int, seed: int = 0) -> tuple[list[Row], Tally]:
    rows, tally = [], Tally()
    for kind in SUITES:
        for n in TASKS:
            base = suite(kind, n, seed)
            worse = [q - 0.10 for q in base]
            for s in SAMPLES:
                no_cache = Design(np.full(n, s), np.zeros(n, dtype=np.int64))
                rng = np.random.default_rng([seed, SUITES.index(kind), n, s, 0, 99])
                alone = simulate(base, base, 0.0, s, no_cache, runs, rng, tally)
                for pool in POOLS:
                    plan = design(n, s, pool)
                    cells = {}
                    for i, points in enumerate(DRIFTS):
                        rng = np.random.default_rng([seed, SUITES.index(kind), n, s, pool, i])
                        cells[points] = simulate(
                            worse, base, points / 100, s, plan, runs, rng, tally
                        )
                    rng = np.random.default_rng([seed, SUITES.index(kind), n, s, pool, 98])
                    same = simulate(base, base, 0.0, s, plan, runs, rng, tally)
                    saved = 1 - float(plan.own.sum()) / (n * s)
                    rows.append(Row(kind, n, s, pool, cells, saved, same, alone))
    return rows, tally


def _pct(cell: Cell) -> str:
    return f"{cell.rate * 100:4.1f}±{cell.error * 100:.1f}"


def print_grid(rows: list[Row], tally: Tally, runs: int, seed: int) -> bool:
    """The table, and whether every cell's false accepts, as measured, stay at or under 5%
    and every checked decision matched the project's functions."""
    print(
        f"\nDrift: false accepts (%) of a skill 10 points worse than today's baseline, beside a "
        f"cache of 1, 3 or 10 earlier runs whose pass chances are today's plus the drift; "
        f"{runs} runs a cell, seed {seed}, ± two Monte Carlo standard errors"
    )
    drifts = "".join(f"{d:>+10d}" if d else f"{'0':>10}" for d in DRIFTS)
    header = (
        f"{'suite':<7}{'tasks':>5}{'k':>3}{'pool':>5}{drifts}{'saved':>7}{'warned':>12}"
        f"{'unchanged':>11}{'alone':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        cells = "".join(f"{_pct(r.false_accepts[d]):>10}" for d in DRIFTS)
        warned = [r.false_accepts[d].warned for d in (-10, 10)]
        said = "/".join(f"{w:.0%}" for w in warned if w is not None) or "-"
        print(
            f"{r.kind:<7}{r.tasks:>5}{r.samples:>3}{r.pool:>5}{cells}{r.saved:>7.0%}{said:>12}"
            f"{r.unchanged.rate:>11.1%}{r.alone.rate:>7.1%}"
        )
    return _verdict(rows, tally)


def _verdict(rows: list[Row], tally: Tally) -> bool:
    cells = [(c, r, d) for r in rows for d, c in r.false_accepts.items()]
    worst, row, points = max(cells, key=lambda x: x[0].rate)
    over = [(c, r, d) for c, r, d in cells if c.rate > HELD_TO]
    drawn = [r for r in rows if r.saved > 0]
    print(
        f"drift guard: false accepts at most {worst.rate:.2%} (±{worst.error:.2%}) in any of "
        f"{len(cells)} cells ({row.kind} {row.tasks} x {row.samples}, {row.pool} earlier runs, "
        f"drift {points:+d}), {len(over)} above {HELD_TO:.0%}: "
        f"{'BROKEN' if over else 'holds'}"
    )
    if drawn:
        full = [r for r in drawn if r.pool == max(POOLS)]
        print(
            f"a full cache saves {min(r.saved for r in full):.0%}-{max(r.saved for r in full):.0%}"
            f" of the baseline's attempts where it is drawn ({len(drawn)} of {len(rows)} rows:"
            f" {max(POOLS)} earlier runs at {sorted({r.samples for r in drawn})} samples); "
            "caches short of a full pool, or at 1 sample, save nothing and are not drawn"
        )
        cost = [(r.alone.rate - r.unchanged.rate, r) for r in drawn]
        most, at = max(cost, key=lambda x: x[0])
        print(
            f"the price: an unchanged skill passes up to {most * 100:.1f} points less often "
            f"beside a full cache than without one ({at.kind} {at.tasks} x {at.samples}: "
            f"{at.unchanged.rate:.1%} against {at.alone.rate:.1%})"
        )
    print(
        f"decisions checked against the project's functions: {tally.checked}, "
        f"{tally.mismatches} differ"
    )
    for c, r, d in over:
        print(f"  above {HELD_TO:.0%}: {r.kind} {r.tasks} x {r.samples}, pool {r.pool}, "
              f"drift {d:+d}: {c.rate:.2%}")  # fmt: skip
    return not over and tally.mismatches == 0
