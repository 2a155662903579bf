"""What does `improve`'s gate propose, and what can it detect? The loop's pick and confirmation,
simulated with the harness's own decision functions on suites of known per-task pass chances
(uniform 0.2-0.8, seeded), for one version 0, 5, 10 or 20 points better than the original
(the other equal to it) at 20, 40 and 100 tasks.

Each repetition splits the tasks as improve does (train, then the held-out tasks cut in two:
improve.split), scores the original and both versions once on the selection half (one
attempt a task and version, as the loop does), picks the best as improve.versions.select_best
does (ties to the earlier version, so an equal pick is the original), and confirms a pick on
the half set apart on fresh attempts (`--confirm-samples`, default 3) with
paired_comparison + decide_policy under policy superior at its level / 2.

Printed per cell: how often a version is proposed (at 0 points: a false proposal; else the
power of the whole gate), how often the better version was picked, how often the
confirmation passed when it was, and the lift `improve` states before its first iteration
that its confirmation detects 4 times in 5 (improve/detect.py, at a 50% pass rate where
attempts vary most): the confirmation rate at that lift should be about 80% or more.

    python scripts/bench_improve.py [--reps 2000] [--seed 0] [--confirm-samples 3]
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from skill_eval.core.model import Status
from skill_eval.improve.split import set_apart_to_confirm, split_tasks
from skill_eval.stats.estimates import paired_comparison, task_stats
from skill_eval.stats.policy import POLICY_ALPHA, decide_policy
from skill_eval.stats.power import detectable_lift

VERSIONS = 2  # versions besides the original (improve's default --iterate 3)
HOLDOUT = 0.4  # improve's default --holdout
TASKS = (20, 40, 100)
LIFTS = (0.0, 0.05, 0.10, 0.20)
ALPHA = POLICY_ALPHA["superior"] / VERSIONS
MAX_CHECKED = 0.5  # a stated lift above this is clipped at a pass chance of 1 on most tasks


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
    pick: dict[str, float], base: dict[str, float], on: list[str], samples: int, rng: random.Random
) -> bool:
    comparison = paired_comparison(
        _scores(on, pick, samples, rng), _scores(on, base, samples, rng), samples=samples
    )
    return decide_policy("superior", comparison, samples=samples, alpha=ALPHA).passed


@dataclass(frozen=True)
class Cell:
    tasks: int
    lift: float
    proposed: float  # share of runs that proposed a version
    picked: float  # share that picked the better version (0: any version, at lift 0)
    confirmed: float | None  # share of those picks the confirmation passed
    set_apart: int  # tasks the pick is confirmed on
    stated: float  # the lift improve says its confirmation detects 4 times in 5


def cell(n_tasks: int, lift: float, samples: int, reps: int, seed: int) -> Cell:
    suite_rng = random.Random(f"suite/{seed}/{n_tasks}")
    base = {f"t{i}": suite_rng.uniform(0.2, 0.8) for i in range(n_tasks)}
    lifted = {k: min(1.0, p + lift) for k, p in base.items()}
    versions = [lifted, base]  # the first is `lift` better, the other equal
    tasks = [_Task(i) for i in range(n_tasks)]
    rng = random.Random(f"reps/{seed}/{n_tasks}/{lift}/{samples}")
    proposed = picked = confirmed = 0
    apart = 0
    for rep in range(reps):
        split = set_apart_to_confirm(split_tasks(tasks, HOLDOUT, rep), rep)
        apart = len(split.confirm)
        rates = [_rate(_scores(list(split.holdout), p, 1, rng)) for p in [base, *versions]]
        best = max(range(len(rates)), key=lambda i: (rates[i], -i))
        if not best:
            continue
        good = best == 1 or lift == 0
        picked += good
        if _confirmed(versions[best - 1], base, list(split.confirm), samples, rng):
            proposed += 1
            confirmed += good
    stated = detectable_lift(apart, samples, ALPHA)
    return Cell(
        n_tasks,
        lift,
        proposed / reps,
        picked / reps,
        confirmed / picked if picked and lift else None,
        apart,
        stated,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--confirm-samples", type=int, default=3)
    args = parser.parse_args()
    started = time.monotonic()
    print(
        f"{VERSIONS} versions besides the original (one `lift` better, one equal), holdout "
        f"{HOLDOUT}, confirmed at {args.confirm_samples} samples under policy superior at its "
        f"level / {VERSIONS}; {args.reps} repetitions a cell, seed {args.seed}"
    )
    header = (
        f"{'tasks':>5} {'set apart':>9} {'lift':>5} {'proposed':>9} {'picked':>7} "
        f"{'confirmed':>9} {'improve says it detects':>24}"
    )
    print(header)
    print("-" * len(header))
    for n_tasks in TASKS:
        cells = [cell(n_tasks, lift, args.confirm_samples, args.reps, args.seed) for lift in LIFTS]
        stated = cells[0].stated
        if stated <= MAX_CHECKED:  # and at the lift improve states, where it can be had
            cells.append(cell(n_tasks, stated, args.confirm_samples, args.reps, args.seed))
        for c in cells:
            shown = "-" if c.confirmed is None else f"{c.confirmed:.1%}"
            says = "over 100" if c.stated > 1 else f"{c.stated * 100:.0f}"
            mark = " (the stated lift)" if c.lift == stated else ""
            print(
                f"{c.tasks:>5} {c.set_apart:>9} {c.lift * 100:>+5.0f} {c.proposed:>9.1%} "
                f"{c.picked:>7.1%} {shown:>9} {says + ' points, 4 in 5':>24}{mark}"
            )
    print(
        "proposed at +0: a false proposal (the policy's level is 2.5%); picked: the better "
        "version had the best holdout rate; confirmed: of those picks, how many the "
        f"confirmation passed ({time.monotonic() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
