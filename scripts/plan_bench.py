"""Does `tasks_needed` keep its promise? Simulated runs; for each run that lacked evidence, the
plan it suggests (stats/plan.py) is taken and the same true effect rerun at that size: new
tasks like these at the suggested `tasks`, and these tasks at the suggested
`samples_for_these_tasks`. The plan states a predictive probability (80%): averaged over the
true delta given the run, under the plan's prior (N(0, PRIOR_SD^2)). So the promise is checked
on runs whose true shift is drawn from that prior ("prior" cells), per policy and samples and
per kind of result (how far the shrunk effect sits from the threshold); cells of one fixed
shift show what a single true effect gets, which no plan can hold at 80% (near the threshold
nothing settles but by chance). Also printed: the share of insufficient runs that got a
figure (the rest name a reason). Used by scripts/bench_verdicts.py --only plan.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from statistics import median

from skill_eval.core.model import Status
from skill_eval.stats.estimates import paired_comparison, task_stats
from skill_eval.stats.evidence import assess
from skill_eval.stats.plan import PRIOR_SD, SETTLE_PROBABILITY
from skill_eval.stats.policy import Policy, decide_policy, threshold_of

PRIOR = None  # a cell's shift: drawn from the plan's prior for each run
POLICIES: tuple[Policy, ...] = ("no-regression", "non-inferior", "superior")
# (policy, true shift of every task's pass probability): one fixed effect each, off the
# policy's threshold (at it, nothing settles but by chance)
FIXED: tuple[tuple[Policy, float], ...] = (
    ("no-regression", 0.0),
    ("no-regression", -0.05),
    ("no-regression", 0.10),
    ("non-inferior", 0.0),
    ("superior", 0.10),
    ("superior", 0.20),
)
CELLS: tuple[tuple[Policy, float | None], ...] = tuple((p, PRIOR) for p in POLICIES) + FIXED
# kinds of result: how far the planned (shrunk) effect sits from the threshold, in points
KINDS = ((0.0, 3.0, "under 3 points"), (3.0, 8.0, "3 to 8 points"), (8.0, 200.0, "8 or more"))
MAX_RERUN_TASKS = 3000  # a plan beyond this is counted as given but not rerun
SLACK = 3.0  # binomial standard errors a measured rate may stray from the stated one


@dataclass
class Tally:
    reruns: int = 0
    settled: int = 0

    def add(self, settled: bool) -> None:
        self.reruns += 1
        self.settled += settled


@dataclass
class Cell:
    policy: str
    shift: float | None
    samples: int
    runs: int = 0
    insufficient: int = 0
    with_figure: int = 0
    reasons: int = 0
    unrun: int = 0
    at_tasks: Tally = field(default_factory=Tally)
    at_samples: Tally = field(default_factory=Tally)
    kinds: dict[str, Tally] = field(default_factory=dict)
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


def _kind(effect: float | None, policy: str) -> str:
    away = abs((effect or 0.0) - threshold_of(policy, None)) * 100
    return next(name for low, high, name in KINDS if low <= away < high)


def cell(
    policy: Policy, shift: float | None, n_tasks: int, samples: int, reps: int, seed: int
) -> Cell:
    rng = random.Random(f"plan/{seed}/{policy}/{shift}/{samples}")
    out = Cell(policy, shift, samples)
    for _ in range(reps):
        true = rng.gauss(0.0, PRIOR_SD) if shift is PRIOR else shift
        cand, base = _suite(n_tasks, true, rng)
        outcome, evidence = _outcome(policy, cand, base, samples, rng)
        out.runs += 1
        needed = evidence.tasks_needed  # type: ignore[attr-defined]
        if outcome != "insufficient" or needed is None:
            continue
        out.insufficient += 1
        figure = needed.tasks is not None or needed.samples_for_these_tasks is not None
        out.with_figure += figure
        out.reasons += not figure and needed.reason is not None
        if needed.tasks is not None:
            out.suggested.append(needed.tasks)
            if needed.tasks > MAX_RERUN_TASKS:
                out.unrun += 1
            else:
                more_cand, more_base = _suite(needed.tasks, true, rng)
                again, _ = _outcome(policy, more_cand, more_base, samples, rng)
                out.at_tasks.add(again != "insufficient")
                kind = out.kinds.setdefault(_kind(needed.effect, policy), Tally())
                kind.add(again != "insufficient")
        if needed.samples_for_these_tasks is not None:
            again, _ = _outcome(policy, cand, base, needed.samples_for_these_tasks, rng)
            out.at_samples.add(again != "insufficient")
    return out


def grid(reps: int, seed: int, n_tasks: int) -> list[Cell]:
    return [cell(p, s, n_tasks, k, reps, seed) for p, s in CELLS for k in (1, 3)]


def holds(tally: Tally) -> bool | None:
    """Whether a measured settle rate is the stated one within SLACK standard errors; None
    with no rerun."""
    if not tally.reruns:
        return None
    p = SETTLE_PROBABILITY
    return abs(tally.settled / tally.reruns - p) <= SLACK * math.sqrt(p * (1 - p) / tally.reruns)


def _rate(t: Tally, judge: bool = False) -> str:
    if not t.reruns:
        return "-"
    mark = {True: " ok", False: " MISS", None: ""}[holds(t)] if judge else ""
    return f"{t.settled / t.reruns:.1%} ({t.reruns}){mark}"


def _share(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "-"


def _merge(tallies: list[Tally]) -> Tally:
    return Tally(sum(t.reruns for t in tallies), sum(t.settled for t in tallies))


def print_grid(cells: list[Cell], reps: int, seed: int, n_tasks: int) -> bool:
    """Print the table; True when every prior cell, and every kind of result over them, settles
    at the stated rate (within SLACK standard errors)."""
    print(
        f"\ntasks_needed as a plan: {n_tasks} tasks, baseline p ~ uniform(0.2, 0.8), {reps} runs "
        f"per cell, seed {seed}; each insufficient run's plan rerun with the same true effect. "
        f"Stated: settles {SETTLE_PROBABILITY:.0%} of the time for runs like it, the true shift "
        f"drawn from the plan's prior N(0, {PRIOR_SD * 100:.0f} points^2) ('prior' rows: held to "
        f"it within {SLACK:.0f} standard errors); a fixed shift is one effect, not promised"
    )
    header = (
        f"{'policy':<14} {'shift':>6} {'samples':>7} {'insuff':>6} {'figure':>7} "
        f"{'reason':>6} {'med. tasks':>10} {'settle@tasks':>18} {'settle@samples':>18}"
    )
    print(header)
    print("-" * len(header))
    for c in cells:
        prior = c.shift is PRIOR
        shift = "prior" if c.shift is None else f"{c.shift:+.2f}"
        print(
            f"{c.policy:<14} {shift:>6} {c.samples:>7} {c.insufficient:>6} "
            f"{_share(c.with_figure, c.insufficient):>7} {_share(c.reasons, c.insufficient):>6} "
            f"{(median(c.suggested) if c.suggested else 0):>10.0f} "
            f"{_rate(c.at_tasks, prior):>18} {_rate(c.at_samples, prior):>18}"
        )
    priors = [c for c in cells if c.shift is PRIOR]
    kinds = {name: _merge([c.kinds[name] for c in priors if name in c.kinds]) for *_, name in KINDS}
    print("prior rows by kind of result (shrunk effect from the threshold), reruns at the tasks:")
    print("  " + "; ".join(f"{name}: {_rate(t, True)}" for name, t in kinds.items()))
    ins = sum(c.insufficient for c in cells)
    print(
        f"figures: {_share(sum(c.with_figure for c in cells), ins)} of {ins} insufficient runs "
        f"got one, {_share(sum(c.reasons for c in cells), ins)} a reason instead; "
        f"{sum(c.unrun for c in cells)} plans beyond {MAX_RERUN_TASKS} tasks not rerun"
    )
    checks = [holds(t) for c in priors for t in (c.at_tasks, c.at_samples)]
    checks += [holds(t) for t in kinds.values()]
    missed = [c for c in checks if c is False]
    verdict = "holds" if not missed else f"misses ({len(missed)} of {len(checks)} checks)"
    print(f"the stated {SETTLE_PROBABILITY:.0%} for runs like this one: {verdict}")
    return not missed
