"""What does `improve`'s gate propose? The loop's pick and confirmation, simulated with the
harness's own decision functions on a suite of known per-task pass probabilities (uniform
0.2-0.8, seeded), for versions all equal to the original and for one version 20 points better.

Each repetition splits the tasks as improve does (train, then the held-out tasks cut in two:
improve.split), scores the original and K versions once on the selection half (one attempt a
task and version, as the loop does), picks the best as improve.versions.select_best does (ties
to the earlier version, so an equal pick is the original), and confirms a pick on the half set
apart, on fresh attempts (`--confirm-samples`: 1, or the default 3), with paired_comparison +
decide_policy at the policy's level / K. Printed: how often a version is proposed, under
today's gate (policy superior on the tasks set apart) and under the gate it replaced (the
whole holdout picks, policy no-regression on one fresh attempt at the same tasks).

    python scripts/bench_improve.py [--reps 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time

from skill_eval.core.model import Status
from skill_eval.improve.split import set_apart_to_confirm, split_tasks
from skill_eval.stats.estimates import paired_comparison, task_stats
from skill_eval.stats.policy import POLICY_ALPHA, Policy, decide_policy

VERSIONS = 2  # versions besides the original (improve's default --iterate 3)
LIFT = 0.20


class _Task:
    def __init__(self, i: int) -> None:
        self.id, self.category = f"t{i}", None


def _scores(
    ids: list[str], probs: dict[str, float], samples: int, rng: random.Random
) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for task in ids:
        runs: list[Status] = [
            "passed" if rng.random() < probs[task] else "failed" for _ in range(samples)
        ]
        out[task] = task_stats(runs, 1).pass_at_k
    return out


def _rate(scores: dict[str, float | None]) -> float:
    values = [v for v in scores.values() if v is not None]
    return sum(values) / len(values)


def _confirmed(
    pick: dict[str, float],
    base: dict[str, float],
    on: list[str],
    samples: int,
    policy: Policy,
    rng: random.Random,
) -> bool:
    comparison = paired_comparison(
        _scores(on, pick, samples, rng), _scores(on, base, samples, rng), samples=samples
    )
    alpha = POLICY_ALPHA[policy] / VERSIONS
    return decide_policy(policy, comparison, samples=samples, alpha=alpha).passed


def proposals(
    n_tasks: int, holdout: float, samples: int, better: bool, reps: int, seed: int
) -> tuple[float, float]:
    """(share proposed by today's gate, share proposed by the gate it replaced)."""
    suite_rng = random.Random(f"suite/{seed}/{n_tasks}")
    base = {f"t{i}": suite_rng.uniform(0.2, 0.8) for i in range(n_tasks)}
    lifted = {k: min(1.0, p + LIFT) for k, p in base.items()}
    versions = [lifted if better and v == 0 else base for v in range(VERSIONS)]
    tasks = [_Task(i) for i in range(n_tasks)]
    rng = random.Random(f"reps/{seed}/{n_tasks}/{holdout}/{samples}/{better}")
    new = old = 0
    for rep in range(reps):
        split = set_apart_to_confirm(split_tasks(tasks, holdout, rep), rep)
        held = list(split.holdout) + list(split.confirm)
        # today: pick on the selection half, confirm on the half set apart
        rates = [_rate(_scores(list(split.holdout), p, 1, rng)) for p in [base, *versions]]
        best = max(range(len(rates)), key=lambda i: (rates[i], -i))
        if best and _confirmed(
            versions[best - 1], base, list(split.confirm), samples, "superior", rng
        ):
            new += 1
        # before: pick on the whole holdout, confirm on fresh attempts at the same tasks
        rates = [_rate(_scores(held, p, 1, rng)) for p in [base, *versions]]
        best = max(range(len(rates)), key=lambda i: (rates[i], -i))
        if best and _confirmed(versions[best - 1], base, held, 1, "no-regression", rng):
            old += 1
    return new / reps, old / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.monotonic()
    print(f"{VERSIONS} versions besides the original, {args.reps} repetitions a cell")
    print(
        f"{'tasks':>5} {'holdout':>7} {'confirm':>7}  {'versions':<22} "
        f"{'proposed now':>12} {'before':>8}"
    )
    for n_tasks in (40, 80):
        for holdout in (0.4, 0.6):
            for samples in (1, 3):
                for better in (False, True):
                    now, before = proposals(n_tasks, holdout, samples, better, args.reps, args.seed)
                    what = f"one {LIFT * 100:.0f} points better" if better else "all equal"
                    print(
                        f"{n_tasks:>5} {holdout:>7} {samples:>7}  {what:<22} "
                        f"{now:>12.1%} {before:>8.1%}"
                    )
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
