"""`--early-stop`: a group-sequential version of the policies, so a run with --samples N stops
as soon as the paired interval decides. Pure: no I/O.

Looks. Attempts are planned sample-major (every task and arm once, then again: see
runner.plan_jobs), so after round j every task has j attempts per arm. A look is taken after
each round of pass_k attempts: L = samples // pass_k looks, at information fractions t = i/L.
Every look sees the whole suite (tasks are the unit of replication), and each look's statistics
are exactly those of a fixed-sample run with j samples.

Rule (interval policies: no-regression, non-inferior, superior). The policy's one-sided level
alpha (4% for no-regression, 2.5% for the others) is spent over the looks by the Lan-DeMets
O'Brien-Fleming-type function a(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)). The boundaries
c_1..c_L are those of the canonical group-sequential model (Z_i = S(t_i)/sqrt(t_i), S a
Brownian motion), computed by numerical integration so that the chance of first crossing at
look i is a(t_i) - a(t_{i-1}); look i's test runs at the nominal one-sided level
p_i = 1 - Phi(c_i) (for 3 looks at alpha 2.5%: 0.01%, 0.60%, 2.32%). At look i the run
- passes when the policy's lower bound at level p_i clears its threshold;
- fails (futility) when the upper bound at level p_i is below the threshold;
- goes on otherwise; the last look passes iff its lower bound at p_L clears.
Guarantee: P(false accept) <= alpha, the fixed-sample level, as far as each look's interval
is valid (the same approximation the fixed-sample policy rests on). The looks' statistics are
at least as correlated as the model assumes (the between-task part of the variance does not
shrink with more samples), and by Slepian's inequality more correlation only lowers the
chance that some look crosses. The futility stop can only turn a pass into a fail. The price:
the last look is a little stricter than a fixed-sample run (p_L < alpha), a small loss of
power. scripts/bench_verdicts.py measures both rates and the attempts saved.

`delta` has no interval: its decision reads the pass rates over the first pass_k attempts, so
it is final after the first look (exact curtailment, same decision as without --early-stop).

A run with an attempt in error never stops early: a later sample could change which attempts
count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Literal

from ..core.model import Attempt
from .estimates import Comparison
from .policy import POLICY_ALPHA, threshold_of

RULE = "group-sequential, O'Brien-Fleming-type alpha spending (Lan-DeMets) over sample rounds"
# One-sided level of each interval policy's test (see stats/policy.py).
ALPHA = POLICY_ALPHA
Call = Literal["pass", "fail"]


def spent(t: float, alpha: float) -> float:
    """The O'Brien-Fleming-type spending function: alpha spent by information fraction t."""
    if t <= 0:
        return 0.0
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return 2 - 2 * NormalDist().cdf(z / math.sqrt(min(t, 1.0)))


@lru_cache(maxsize=64)
def boundaries(looks: int, alpha: float) -> tuple[float, ...]:
    """The z boundary of each look: P(Z_1 < c_1, ..., Z_{i-1} < c_{i-1}, Z_i >= c_i) equals
    the alpha spent between looks i-1 and i, for the canonical joint distribution of
    Z_i = S(t_i)/sqrt(t_i), S a standard Brownian motion, t_i = i/looks (Jennison & Turnbull,
    ch. 7). Computed by numerical integration of the density of S over the continuation
    region on a grid (Armitage, McPherson and Rowe 1969)."""
    norm = NormalDist()
    times = [i / looks for i in range(1, looks + 1)]
    spend = [spent(t, alpha) for t in times]
    step = 0.05  # grid on S; the boundaries agree with published tables to 0.01
    bounds: list[float] = []
    grid: list[float] = []
    density: list[float] = []
    previous_t = 0.0
    for i, t in enumerate(times):
        target = spend[i] - (spend[i - 1] if i else 0.0)
        sd = math.sqrt(t - previous_t)
        if i == 0:
            b = math.sqrt(t) * norm.inv_cdf(1 - target)
        else:

            def crossing(
                b: float, sd: float = sd, grid: list[float] = grid, density: list[float] = density
            ) -> float:
                return step * math.fsum(
                    f * (1 - norm.cdf((b - u) / sd)) for u, f in zip(grid, density, strict=True)
                )

            lo, hi = -10.0, 10.0
            for _ in range(60):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if crossing(mid) > target else (lo, mid)
            b = (lo + hi) / 2
        bounds.append(b / math.sqrt(t))
        low = -8 * math.sqrt(t)
        new_grid = [low + step * j for j in range(int((b - low) / step) + 1)]
        if i == 0:
            new_density = [norm.pdf(s / sd) / sd for s in new_grid]
        else:
            new_density = [
                step
                * math.fsum(
                    f * norm.pdf((s - u) / sd) / sd for u, f in zip(grid, density, strict=True)
                )
                for s in new_grid
            ]
        grid, density, previous_t = new_grid, new_density, t
    return tuple(bounds)


def levels(looks: int, alpha: float) -> list[float]:
    """The nominal one-sided level of each look's test: 1 - Phi(c_i)."""
    return [1 - NormalDist().cdf(c) for c in boundaries(looks, alpha)]


def look_rounds(samples: int, pass_k: int) -> list[int]:
    """Attempts per task and arm at each look: pass_k, 2 pass_k, ..., samples."""
    looks = max(1, samples // pass_k)
    rounds = [pass_k * i for i in range(1, looks + 1)]
    rounds[-1] = samples  # samples not a multiple of pass_k: the last look has them all
    return rounds


def rounds_done(attempts: Iterable[Attempt]) -> int:
    """Attempts per task and arm these attempts reach (every task, every arm)."""
    counts: dict[tuple[str, str], int] = {}
    for attempt in attempts:
        key = (attempt.arm, attempt.task_id)
        counts[key] = max(counts.get(key, 0), attempt.index + 1)
    return min(counts.values(), default=0)


def look_of(samples: int, pass_k: int, reached: int) -> int:
    """The 1-based look that `reached` attempts per task and arm correspond to."""
    rounds = look_rounds(samples, pass_k)
    return max(1, sum(1 for r in rounds if r <= reached))


def look_alpha(policy: str, samples: int, pass_k: int, reached: int) -> float | None:
    """The one-sided level the policy uses at the look `reached` attempts make; None for
    delta (no interval)."""
    alpha = ALPHA.get(policy)
    if alpha is None:
        return None
    rounds = look_rounds(samples, pass_k)
    return levels(len(rounds), alpha)[look_of(samples, pass_k, reached) - 1]


def call(
    policy: str,
    comparison: Comparison | None,
    passed: bool | None,
    *,
    alpha: float | None,
    per_task: int,
    margin: float | None,
    errors: bool,
) -> Call | None:
    """Whether this look decides: "pass", "fail" or None (sample on). `passed` is the
    policy's decision at this look's level (policy.decide_policy with `alpha`)."""
    if errors or comparison is None or passed is None or comparison.n_tasks == 0:
        return None
    if policy == "delta":
        return "pass" if passed else "fail"
    if passed:
        return "pass"
    if alpha is None:
        return None
    shown_worse = comparison.paired_test(per_task).clears(
        threshold_of(policy, margin), alpha, "upper"
    )
    return "fail" if shown_worse else None


@dataclass(frozen=True)
class EarlyStop:
    """What the artifact records of a run under --early-stop."""

    policy: str
    looks: int
    rounds: tuple[int, ...]
    levels: tuple[float, ...]
    stopped_at_look: int | None  # None: ran to the last look
    decision: Call | None
    skipped_attempts: int
    planned_attempts: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": RULE
            if self.policy in ALPHA
            else "delta: final after the first look (pass rates read the first pass_k)",
            "policy": self.policy,
            "looks": self.looks,
            "rounds": list(self.rounds),
            "levels": [round(x, 6) for x in self.levels],
            "stopped_early": self.stopped_at_look is not None,
            "stopped_at_look": self.stopped_at_look,
            "decision": self.decision,
            "skipped_attempts": self.skipped_attempts,
            "planned_attempts": self.planned_attempts,
        }


def plan(policy: str, samples: int, pass_k: int) -> tuple[list[int], list[float]]:
    """The rounds at which looks are taken and each look's one-sided level."""
    rounds = look_rounds(samples, pass_k)
    alpha = ALPHA.get(policy)
    return rounds, levels(len(rounds), alpha) if alpha is not None else []


def record(
    policy: str,
    samples: int,
    pass_k: int,
    stopped_at: int | None,
    decision: Call | None,
    skipped: int,
    planned: int,
) -> EarlyStop:
    rounds, spend = plan(policy, samples, pass_k)
    return EarlyStop(
        policy, len(rounds), tuple(rounds), tuple(spend), stopped_at, decision, skipped, planned
    )


def has_errors(attempts: Sequence[Attempt]) -> bool:
    return any(a.status == "error" for a in attempts)


__all__ = [
    "ALPHA",
    "RULE",
    "EarlyStop",
    "call",
    "has_errors",
    "levels",
    "look_alpha",
    "look_of",
    "look_rounds",
    "plan",
    "record",
    "rounds_done",
    "spent",
]
