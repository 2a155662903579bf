"""Score tests measured against the verdict contract: the figures the README quotes for them,
and why none replaced the t-floor interval of `skill-eval run` (stats/intervals.py).

A score test reads each task's pass/fail attempts (candidate x of a, baseline y of b) instead
of the spread of the per-task differences: tasks fixed, attempts independent draws, so the
mean difference of pass rates D has variance sum_i(p(1-p)/a + q(1-q)/b) / n². The variance is
taken at the null: each task's baseline chance q is its restricted maximum-likelihood estimate
under p = q + theta from both arms' attempts (Farrington & Manning 1990, the closed form of
Miettinen & Nurminen 1985), then z = (D - theta) / sd against a one-sided tail. Variants:
- FM, t tail: as above, Student t with n - 1 degrees of freedom.
- MN, normal tail: each task's variance times N / (N - 1), N = a + b (Miettinen-Nurminen).
- MN, t tail.

Each runs on the same simulated runs as the contract (scripts/verdict_contract.py draws runs
from the design's name, suite and seed alone) and prints the contract's table. Adaptive runs
are left out: their attempt counts depend on earlier outcomes, which a score test with fixed
counts does not allow for.

    python scripts/bench_score_tests.py [--reps 1000] [--only fm-t|mn-z|mn-t]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import NormalDist

from skill_eval.stats.intervals import t_upper_tail
from skill_eval.stats.policy import DEFAULT_POLICY, POLICY_ALPHA, threshold_of

sys.path.insert(0, str(Path(__file__).parent))  # scripts/ is not a package
from verdict_contract import DESIGNS, Run, contract, print_contract  # noqa: E402

Tally = tuple[int, int, int, int]  # candidate passes, attempts, baseline passes, attempts
THETA = threshold_of(DEFAULT_POLICY, None)
ALPHA = POLICY_ALPHA[DEFAULT_POLICY]


def restricted_baseline(tally: Tally, theta: float) -> float:
    """The maximum-likelihood baseline chance q of one task given the candidate's is
    q + theta: the root of the Farrington-Manning cubic, in Miettinen-Nurminen's closed form."""
    x, a, y, b = tally
    p1, p2, ratio = x / a, y / b, b / a
    c3 = 1 + ratio
    c2 = -(1 + ratio + p1 + ratio * p2 + theta * (ratio + 2))
    c1 = theta * theta + theta * (2 * p1 + ratio + 1) + p1 + ratio * p2
    c0 = -p1 * theta * (1 + theta)
    v = c2**3 / (3 * c3) ** 3 - c2 * c1 / (6 * c3 * c3) + c0 / (2 * c3)
    u = math.copysign(math.sqrt(max(c2 * c2 / (3 * c3) ** 2 - c1 / (3 * c3), 0.0)), v)
    if u == 0.0:
        p = -c2 / (3 * c3)
    else:
        w = (math.pi + math.acos(max(-1.0, min(1.0, v / u**3)))) / 3
        p = 2 * u * math.cos(w) - c2 / (3 * c3)
    return min(min(1.0, 1.0 - theta), max(max(0.0, -theta), p - theta))


def z_score(tallies: Sequence[Tally], theta: float, mn: bool) -> float:
    n = len(tallies)
    diff = math.fsum(x / a - y / b for x, a, y, b in tallies) / n
    var = 0.0
    for x, a, y, b in tallies:
        q = restricted_baseline((x, a, y, b), theta)
        p = min(1.0, max(0.0, q + theta))
        var += (p * (1 - p) / a + q * (1 - q) / b) * ((a + b) / (a + b - 1) if mn else 1.0)
    if var <= 0.0:
        return math.copysign(math.inf, diff - theta)
    return (diff - theta) / (math.sqrt(var) / n)


def rule(mn: bool, t_tail: bool) -> Callable[[Run], bool]:
    """A decision of the default policy's question (delta above -10 points at its level)."""

    def decide(run: Run) -> bool:
        tallies = [
            (c.count("passed"), len(c), b.count("passed"), len(b))
            for c, b in zip(run.cand, run.base, strict=True)
        ]
        z = z_score(tallies, THETA, mn)
        tail = t_upper_tail(z, len(tallies) - 1) if t_tail else 1 - NormalDist().cdf(z)
        return tail <= ALPHA

    return decide


RULES = {
    "fm-t": ("Farrington-Manning, t tail", rule(mn=False, t_tail=True)),
    "mn-z": ("Miettinen-Nurminen N/(N-1), normal tail", rule(mn=True, t_tail=False)),
    "mn-t": ("Miettinen-Nurminen N/(N-1), t tail", rule(mn=True, t_tail=True)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="runs per seed and design")
    parser.add_argument("--only", choices=tuple(RULES))
    args = parser.parse_args()
    seeds = (0, 1, 2)
    designs = [d for d in DESIGNS if not d[0].startswith("adaptive")]
    for key, (name, decide) in RULES.items():
        if args.only not in (None, key):
            continue
        started = time.perf_counter()
        print(f"\n== {name} ({key}) ==")
        print_contract(contract(seeds, args.reps, decide, designs), seeds, args.reps)
        print(f"run time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
