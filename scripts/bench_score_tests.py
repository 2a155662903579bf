"""Which test should decide against a pooled baseline? The figures behind stats/score.py: the
t-floor interval and four score tests, on the verdict contract's own runs and on a wider grid
of suites.

A score test reads each task's pass/fail attempts (candidate x of a, baseline y of b) instead
of the spread of the per-task differences: tasks fixed, attempts independent draws, so the
mean difference of pass rates D has variance sum_i(p(1-p)/a + q(1-q)/b) / n², taken at the
null: each task's baseline chance q is its restricted maximum-likelihood estimate under
p = q + theta from both arms' attempts (Farrington & Manning 1990, in the closed form of
Miettinen & Nurminen 1985), then z = (D - theta) / sd against a one-sided tail. Variants:
- fm-t: as above, a Student t tail with n - 1 degrees of freedom.
- mn-z: each task's variance times N / (N - 1), N = a + b (Miettinen-Nurminen), normal tail.
- mn-t: the same, a t tail with n - 1 degrees of freedom.
- mn-ta: the same, a t tail with the candidate's attempts less one: what `skill-eval run`
  uses against a pooled baseline (stats/score.py).

`--contract` (the default) runs each on the contract's runs (scripts/verdict_contract.py draws
them from the design's name, suite and seed alone, so every rule meets the same runs) and
prints the contract's table; adaptive designs are left out (their attempt counts depend on
earlier outcomes). `--grid` decides 1,000 runs of a skill 10 points worse on every task and of
an unchanged one for 5 suite shapes x 5, 10, 20, 40 tasks x 7 attempt designs (equal arms, and
a baseline pooled at 4x the candidate's attempts), and prints per shape the worst false-accept
rate and the mean pass rate of the unchanged skill, t-floor against mn-ta and mn-z.

    python scripts/bench_score_tests.py [--grid] [--reps 1000] [--only fm-t|mn-z|mn-t|mn-ta]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import NormalDist

from skill_eval.stats.intervals import PairedTest
from skill_eval.stats.policy import DEFAULT_POLICY, POLICY_ALPHA, threshold_of
from skill_eval.stats.score import Tally, z_statistic
from skill_eval.stats.student_t import t_upper_tail

sys.path.insert(0, str(Path(__file__).parent))  # scripts/ is not a package
from verdict_contract import DESIGNS, Run, contract, print_contract, tallies  # noqa: E402

THETA = threshold_of(DEFAULT_POLICY, None)
ALPHA = POLICY_ALPHA[DEFAULT_POLICY]
Decide = Callable[[Sequence[Tally]], bool]


def score_rule(mn: bool, tail: str) -> Decide:
    """The default policy's question (delta above -10 points at its level) by a score test.
    `tail`: "t" (n - 1 degrees of freedom), "t-attempts" (the candidate's attempts less one)
    or "normal"."""

    def decide(tallies: Sequence[Tally]) -> bool:
        z = z_statistic(tallies, THETA, nurminen=mn)
        if tail == "normal":
            return 1 - NormalDist().cdf(z) <= ALPHA
        df = len(tallies) - 1 if tail == "t" else sum(t[1] for t in tallies) - 1
        return t_upper_tail(z, max(1, df)) <= ALPHA

    return decide


def t_floor(tallies: Sequence[Tally]) -> bool:
    """The t-floor interval's answer, as `skill-eval run` gives it without tallies."""
    a, b = min(t[1] for t in tallies), min(t[3] for t in tallies)
    diffs = [x / a_ - y / b_ for x, a_, y, b_ in tallies]
    test = PairedTest.of(diffs, a, False, b if b != a else None)
    return test.clears(THETA, ALPHA, "lower")


RULES: dict[str, tuple[str, Decide]] = {
    "fm-t": ("Farrington-Manning, t tail", score_rule(mn=False, tail="t")),
    "mn-z": ("Miettinen-Nurminen N/(N-1), normal tail", score_rule(mn=True, tail="normal")),
    "mn-t": ("Miettinen-Nurminen N/(N-1), t tail", score_rule(mn=True, tail="t")),
    "mn-ta": (
        "Miettinen-Nurminen N/(N-1), t tail on the candidate's attempts (skill-eval run's)",
        score_rule(mn=True, tail="t-attempts"),
    ),
}


def on_run(decide: Decide) -> Callable[[Run], bool]:
    return lambda run: decide(list(tallies(run).values()))


SHAPES = ("spread", "high", "top", "mixed", "low")
ATTEMPTS = ((2, 2), (3, 3), (5, 5), (10, 10), (2, 8), (3, 12), (5, 20))


def shape(kind: str, n: int, rng: random.Random) -> list[float]:
    """Baseline pass chances: spread 0.2-0.8, high 0.85-0.95, top 0.95-1, low 0.1-0.2, mixed
    70% at 0.97-0.995 and the rest at 0.3-0.7."""
    ranges = {"spread": (0.2, 0.8), "high": (0.85, 0.95), "top": (0.95, 1.0), "low": (0.1, 0.2)}
    if kind in ranges:
        return [rng.uniform(*ranges[kind]) for _ in range(n)]
    stable = n * 7 // 10
    return [rng.uniform(0.97, 0.995) for _ in range(stable)] + [
        rng.uniform(0.3, 0.7) for _ in range(n - stable)
    ]


def grid(reps: int, rules: dict[str, Decide]) -> None:
    worst: dict[tuple[str, str, str], float] = defaultdict(float)
    passes: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for kind in SHAPES:
        for n in (5, 10, 20, 40):
            for a, b in ATTEMPTS:
                rng = random.Random(f"grid/{kind}/{n}/{a}/{b}")
                base = shape(kind, n, rng)
                arms = "pooled" if b > a else "equal"
                for truth, cand in (("worse", [q - 0.1 for q in base]), ("same", base)):
                    runs = [
                        [
                            (sum(rng.random() < p for _ in range(a)), a)
                            + (sum(rng.random() < q for _ in range(b)), b)
                            for p, q in zip(cand, base, strict=True)
                        ]
                        for _ in range(reps)
                    ]
                    for name, decide in rules.items():
                        share = sum(map(decide, runs)) / reps
                        key = (arms, kind, name)
                        if truth == "worse":
                            worst[key] = max(worst[key], share)
                        else:
                            passes[key].append(share)
    print(
        f"Grid: {reps} runs per cell; per suite shape, over 5-40 tasks: the worst false-accept "
        "rate of a skill 10 points worse on every task / the mean pass rate of an unchanged one"
    )
    for arms in ("equal", "pooled"):
        print(f"\n{arms} arms" + (" (baseline 4x the candidate's attempts)" * (arms == "pooled")))
        print(f"{'shape':<8}" + "".join(f"{name:>18}" for name in rules))
        for kind in SHAPES:
            cells = []
            for rule in rules:
                shares = passes[(arms, kind, rule)]
                cells.append(f"{worst[(arms, kind, rule)]:.1%} / {sum(shares) / len(shares):.1%}")
            print(f"{kind:<8}" + "".join(f"{c:>18}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", action="store_true", help="the wider grid, not the contract")
    parser.add_argument("--reps", type=int, default=1000, help="runs per seed, design or cell")
    parser.add_argument("--only", choices=tuple(RULES))
    args = parser.parse_args()
    started = time.perf_counter()
    if args.grid:
        chosen = {"t-floor": t_floor, "mn-ta": RULES["mn-ta"][1], "mn-z": RULES["mn-z"][1]}
        grid(args.reps, chosen)
    else:
        seeds = (0, 1, 2)
        designs = [d for d in DESIGNS if not d[0].startswith("adaptive")]
        for key, (name, decide) in RULES.items():
            if args.only in (None, key):
                print(f"\n== {name} ({key}) ==")
                print_contract(
                    contract(seeds, args.reps, on_run(decide), designs), seeds, args.reps
                )
    print(f"run time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
