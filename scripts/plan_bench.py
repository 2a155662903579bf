"""Does `tasks_needed` keep its promise? Simulated runs of a known true effect; for each run that
lacked evidence, the plan it suggests (stats/plan.py) is taken and the same true effect rerun
at that size: new tasks like these at the suggested `tasks`, and these tasks at the suggested
`samples_for_these_tasks`. Printed: how often the rerun settles (passes or is shown worse;
the plan states 80%), and the share of insufficient runs that got a figure (the rest name a
reason). Used by scripts/bench_verdicts.py --only plan.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from statistics import median

from skill_eval.core.model import Status
from skill_eval.stats.estimates import paired_comparison, task_stats
from skill_eval.stats.evidence import assess
from skill_eval.stats.policy import Policy, decide_policy

# (policy, true shift of every task's pass probability): cells whose true delta is off the
# policy's threshold (at it, nothing settles but by chance)
CELLS: tuple[tuple[Policy, float], ...] = (
    ("no-regression", 0.0),
    ("no-regression", -0.05),
    ("no-regression", 0.10),
    ("non-inferior", 0.0),
    ("superior", 0.10),
    ("superior", 0.20),
)
MAX_RERUN_TASKS = 3000  # a plan beyond this is counted as given but not rerun


@dataclass
class Cell:
    policy: str
    shift: float
    samples: int
    runs: int = 0
    insufficient: int = 0
    with_figure: int = 0
    reasons: int = 0
    tasks_reruns: int = 0
    tasks_settled: int = 0
    samples_reruns: int = 0
    samples_settled: int = 0
    suggested: list[int] = field(default_factory=list)


def _suite(n: int, shift: float, rng: random.Random) -> tuple[list[float], list[float]]:
    base = [rng.uniform(0.2, 0.8) for _ in range(n)]
    return [min(1.0, max(0.0, p + shift)) for p in base], base


def _scores(probs: list[float], samples: int, rng: random.Random) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for i, p in enumerate(probs):
        outcomes: list[Status] = [
            "passed" if rng.random() < p else "failed" for _ in range(samples)
        ]
        out[f"t{i}"] = task_stats(outcomes, 1).pass_at_k
    return out


def _outcome(
    policy: Policy, cand: list[float], base: list[float], samples: int, rng: random.Random
) -> tuple[str, object]:
    comparison = paired_comparison(
        _scores(cand, samples, rng), _scores(base, samples, rng), samples=samples
    )
    decision = decide_policy(policy, comparison, samples=samples)
    return decision.outcome, assess(decision, comparison)


def cell(policy: Policy, shift: float, n_tasks: int, samples: int, reps: int, seed: int) -> Cell:
    rng = random.Random(f"plan/{seed}/{policy}/{shift}/{samples}")
    out = Cell(policy, shift, samples)
    for _ in range(reps):
        cand, base = _suite(n_tasks, shift, rng)
        outcome, evidence = _outcome(policy, cand, base, samples, rng)
        out.runs += 1
        needed = evidence.tasks_needed  # type: ignore[attr-defined]
        if outcome != "insufficient":
            continue
        out.insufficient += 1
        if needed is None:
            continue
        figure = needed.tasks is not None or needed.samples_for_these_tasks is not None
        out.with_figure += figure
        out.reasons += not figure and needed.reason is not None
        if needed.tasks is not None:
            out.suggested.append(needed.tasks)
            if needed.tasks <= MAX_RERUN_TASKS:
                more_cand, more_base = _suite(needed.tasks, shift, rng)
                again, _ = _outcome(policy, more_cand, more_base, samples, rng)
                out.tasks_reruns += 1
                out.tasks_settled += again != "insufficient"
        if needed.samples_for_these_tasks is not None:
            again, _ = _outcome(policy, cand, base, needed.samples_for_these_tasks, rng)
            out.samples_reruns += 1
            out.samples_settled += again != "insufficient"
    return out


def grid(reps: int, seed: int, n_tasks: int) -> list[Cell]:
    return [cell(p, s, n_tasks, k, reps, seed) for p, s in CELLS for k in (1, 3)]


def _share(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "-"


def print_grid(cells: list[Cell], reps: int, seed: int, n_tasks: int) -> None:
    print(
        f"\ntasks_needed as a plan: {n_tasks} tasks, baseline p ~ uniform(0.2, 0.8), {reps} "
        f"runs per cell, seed {seed}; each insufficient run's plan rerun with the same true "
        "effect (stated: settles 80% of the time)"
    )
    header = (
        f"{'policy':<14} {'shift':>6} {'samples':>7} {'insuff':>7} {'figure':>7} "
        f"{'reason':>7} {'med. tasks':>10} {'settle@tasks':>12} {'settle@samples':>14}"
    )
    print(header)
    print("-" * len(header))
    totals = [0, 0, 0, 0, 0, 0, 0]
    for c in cells:
        print(
            f"{c.policy:<14} {c.shift:>+6.2f} {c.samples:>7} {c.insufficient:>7} "
            f"{_share(c.with_figure, c.insufficient):>7} {_share(c.reasons, c.insufficient):>7} "
            f"{(median(c.suggested) if c.suggested else 0):>10.0f} "
            f"{_share(c.tasks_settled, c.tasks_reruns):>12} "
            f"{_share(c.samples_settled, c.samples_reruns):>14}"
        )
        for i, v in enumerate(
            (
                c.insufficient,
                c.with_figure,
                c.reasons,
                c.tasks_reruns,
                c.tasks_settled,
                c.samples_reruns,
                c.samples_settled,
            )
        ):
            totals[i] += v
    ins, fig, why, tr, ts, sr, ss = totals
    print(
        f"overall: {_share(fig, ins)} of {ins} insufficient runs got a figure, "
        f"{_share(why, ins)} a reason instead; reruns at the suggested tasks settled "
        f"{_share(ts, tr)} ({tr}), at the suggested samples {_share(ss, sr)} ({sr})"
    )
