"""How often does each verdict policy pass a candidate whose true effect we know?

First the contract of the default policy (scripts/verdict_contract.py): at 20 tasks x 3
samples, 1,000 runs for each of seeds 0, 1, 2, the false accepts of a skill 10 points worse
(must stay at or under 5%) and the passes of an unchanged skill, for fixed sampling, an
accumulated baseline (9 cached attempts per task) and adaptive sampling at equal attempts,
each against the oracle bound: the best pass rate any rule with the same false-accept rate
can reach on the same suite.

Then every policy: a suite of tasks with known per-task pass probabilities, the baseline's
drawn once (seeded) from uniform(0.2, 0.8), the candidate's the same, 10 points worse, or 20
points better (clipped to [0, 1]). Each repetition runs every task `samples` times per arm,
scores each task with the harness's own functions (task_stats -> unbiased pass@1 = c/n: a 0/1
pass when samples == 1, decided by the exact test; a pass rate when samples > 1, by the t-floor
interval), pairs the arms with paired_comparison and applies each policy with decide_policy().
A table of pass frequencies is printed, with the coverage of the true delta by the interval and
its mean width.

Then `--early-stop` (skill_eval/stats/sequential.py): the same simulated runs at 3 and 5
samples, decided look by look as `skill-eval run --early-stop` decides them, against the
fixed-sample decision of the same outcomes: each policy's pass rate both ways and the share of
attempts the early stop saved. False accepts (the "10 pts worse" row under an interval policy)
must not exceed the fixed-sample rate's level.

Then the baseline cache that drifted (scripts/drift_bench.py, numpy): the audit's grid of 486
cells, 10/20/50 tasks x 1/3/10 samples x caches of 1/3/10 earlier runs x the cache 0, ±3, ±5,
±10, ±20 points off today's baseline x spread and high suites: false accepts of a skill 10
points worse with their Monte Carlo error, the baseline attempts a full cache saves, how often
the drift test warned, and an unchanged skill's passes beside the cache and without one.

Then the plan (scripts/plan_bench.py): each insufficient run's `tasks_needed` taken and the
same true effect rerun at the size it names: how often the rerun settles (the plan states
80% for runs like it, the true effect drawn from the plan's prior: checked per policy, samples
and kind of result; fixed effects shown beside), and the share of insufficient runs that got a
figure or, failing one, a reason.

    python scripts/bench_verdicts.py [--seed 0] [--reps 500] [--tasks 20]
                                     [--interval auto|t-floor|bootstrap] [--resamples 1000]
                                     [--contract-reps 1000] [--drift-reps 20000]
                                     [--plan-reps 300]
                                     [--only contract|policies|early-stop|drift|plan]

Exit status 1 when the contract, the drift guard or the plan's stated rate does not hold.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from skill_eval.core.model import Status
from skill_eval.stats import sequential
from skill_eval.stats.estimates import paired_comparison, task_stats
from skill_eval.stats.policy import DEFAULT_POLICY, POLICIES, decide_policy

sys.path.insert(0, str(Path(__file__).parent))  # scripts/ is not a package
from plan_bench import grid as plan_grid  # noqa: E402
from plan_bench import print_grid as print_plan  # noqa: E402
from verdict_contract import contract, print_contract  # noqa: E402

SCENARIOS = (("same", 0.0), ("10 pts worse", -0.10), ("20 pts better", 0.20))
SAMPLES = (1, 3)
Row = tuple[str, float, int, dict[str, float], float, float]


def _scores(probs: list[float], samples: int, rng: random.Random) -> dict[str, float | None]:
    scores: dict[str, float | None] = {}
    for i, p in enumerate(probs):
        outcomes: list[Status] = [
            "passed" if rng.random() < p else "failed" for _ in range(samples)
        ]
        scores[f"t{i}"] = task_stats(outcomes, 1).pass_at_k
    return scores


def run(seed: int, reps: int, n_tasks: int, interval: str, resamples: int) -> list[Row]:
    suite_rng = random.Random(seed)
    base = [suite_rng.uniform(0.2, 0.8) for _ in range(n_tasks)]
    rows = []
    for name, shift in SCENARIOS:
        cand = [min(1.0, max(0.0, p + shift)) for p in base]
        true_delta = (sum(cand) - sum(base)) / n_tasks
        for samples in SAMPLES:
            rng = random.Random(f"{seed}/{name}/{samples}")
            passes = dict.fromkeys(POLICIES, 0)
            covered, width = 0, 0.0
            for rep in range(reps):
                comparison = paired_comparison(
                    _scores(cand, samples, rng),
                    _scores(base, samples, rng),
                    samples=samples,
                    interval_method=interval,  # type: ignore[arg-type]
                    seed=rep,
                    resamples=resamples,
                )
                for policy in POLICIES:
                    decision = decide_policy(policy, comparison, samples=samples)
                    passes[policy] += decision.passed
                low, high = comparison.interval or (0.0, 0.0)
                covered += low <= true_delta <= high
                width += high - low
            rows.append(
                (
                    name,
                    true_delta,
                    samples,
                    {p: n / reps for p, n in passes.items()},
                    covered / reps,
                    width / reps,
                )
            )
    return rows


EARLY_SAMPLES = (3, 5)
EarlyRow = tuple[str, int, str, float, float, float]


def _outcomes(probs: list[float], samples: int, rng: random.Random) -> list[list[Status]]:
    return [["passed" if rng.random() < p else "failed" for _ in range(samples)] for p in probs]


def _decide_at(
    cand: list[list[Status]], base: list[list[Status]], policy: str, j: int, alpha: float | None
) -> tuple[bool, object]:
    """The policy's decision on the first j attempts of every task (pass_k 1)."""

    def scores(arm: list[list[Status]]) -> dict[str, float | None]:
        return {f"t{i}": task_stats(o[:j], 1).pass_at_k for i, o in enumerate(arm)}

    comparison = paired_comparison(scores(cand), scores(base), samples=j)
    first = [(sum(o[0] == "passed" for o in arm) / len(arm)) for arm in (cand, base)]
    reported = (first[0], first[1], round(first[0] - first[1], 4))
    decision = decide_policy(
        policy,
        comparison,
        samples=j,  # type: ignore[arg-type]
        reported=reported,
        alpha=alpha,
    )
    return decision.passed, comparison


def run_early(seed: int, reps: int, n_tasks: int) -> list[EarlyRow]:
    """(scenario, samples, policy, fixed pass rate, early-stop pass rate, attempts saved)."""
    suite_rng = random.Random(seed)
    base_p = [suite_rng.uniform(0.2, 0.8) for _ in range(n_tasks)]
    rows: list[EarlyRow] = []
    for name, shift in SCENARIOS:
        cand_p = [min(1.0, max(0.0, p + shift)) for p in base_p]
        for samples in EARLY_SAMPLES:
            rng = random.Random(f"early/{seed}/{name}/{samples}")
            runs = [
                (_outcomes(cand_p, samples, rng), _outcomes(base_p, samples, rng))
                for _ in range(reps)
            ]
            rounds = sequential.look_rounds(samples, 1)
            for policy in POLICIES:
                fixed = early = used = 0
                for cand, base in runs:
                    fixed += _decide_at(cand, base, policy, samples, None)[0]
                    for end in rounds:
                        alpha = sequential.look_alpha(policy, samples, 1, end)
                        passed, comparison = _decide_at(cand, base, policy, end, alpha)
                        call = sequential.call(
                            policy,
                            comparison,
                            passed,  # type: ignore
                            alpha=alpha,
                            per_task=end,
                            margin=None,
                            errors=False,
                        )
                        if call is not None or end == samples:
                            early += passed
                            used += end
                            break
                rows.append(
                    (name, samples, policy, fixed / reps, early / reps, 1 - used / (reps * samples))
                )
    return rows


def print_early(rows: list[EarlyRow], n_tasks: int, reps: int, seed: int) -> None:
    print(
        f"\n--early-stop: {n_tasks} tasks, {reps} reps per row, seed {seed}; pass rate "
        "fixed-sample -> early-stop, and the share of attempts saved"
    )
    header = f"{'scenario':<14} {'samples':>7} " + " ".join(f"{p:>22}" for p in POLICIES)
    print(header)
    print("-" * len(header))
    table: dict[tuple[str, int], dict[str, str]] = {}
    for name, samples, policy, fixed, early, saved in rows:
        table.setdefault((name, samples), {})[policy] = f"{fixed:.1%}->{early:.1%} -{saved:.0%}"
    for (name, samples), cells in table.items():
        print(f"{name:<14} {samples:>7} " + " ".join(f"{cells[p]:>22}" for p in POLICIES))
    for name, samples, policy, fixed, early, saved in rows:
        if policy == DEFAULT_POLICY and samples == 3 and name != "20 pts better":
            what = (
                "accepts a 10-point-worse skill"
                if name == "10 pts worse"
                else "passes an unchanged skill"
            )
            print(
                f"default policy {DEFAULT_POLICY} x 3 samples {what}: fixed {fixed:.1%}, "
                f"early-stop {early:.1%}, attempts saved {saved:.0%}"
            )


def print_policies(rows: list[Row], args: argparse.Namespace, elapsed: float) -> None:
    method = args.interval + (
        f" ({args.resamples} resamples)" if args.interval == "bootstrap" else ""
    )
    print(
        f"\nEvery policy: {args.tasks} tasks, baseline p ~ uniform(0.2, 0.8), {args.reps} reps "
        f"per row, seed {args.seed}, 95% interval: {method} ({elapsed:.0f} s)"
    )
    print(
        "policies: delta (delta >= 0), no-regression (one-sided 96% low > -0.10), "
        "non-inferior (low > -0.05), superior (low > 0)"
    )
    header = (
        f"{'scenario':<14} {'true Δ':>7} {'samples':>7} {'delta':>6} {'no-regr':>7} "
        f"{'non-inf':>7} {'superior':>8} {'coverage':>8} {'width':>6}"
    )
    print(header)
    print("-" * len(header))
    for name, true_delta, samples, share, cov, width in rows:
        print(
            f"{name:<14} {true_delta:>+7.3f} {samples:>7} {share['delta']:>6.1%} "
            f"{share['no-regression']:>7.1%} {share['non-inferior']:>7.1%} "
            f"{share['superior']:>8.1%} {cov:>8.1%} {width:>6.3f}"
        )
    pick = {name: share[DEFAULT_POLICY] for name, _, samples, share, _, _ in rows if samples == 3}
    print(
        f"default policy {DEFAULT_POLICY} at {args.tasks} tasks x 3 samples: accepts a "
        f"10-point-worse skill in {pick['10 pts worse']:.1%} of runs, passes an unchanged "
        f"skill in {pick['same']:.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--interval", choices=("auto", "t-floor", "bootstrap"), default="auto")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap only")
    parser.add_argument("--contract-reps", type=int, default=1000, help="runs per seed")
    parser.add_argument("--drift-reps", type=int, default=20000, help="runs per drift cell")
    parser.add_argument("--plan-reps", type=int, default=300, help="runs per plan cell")
    parser.add_argument("--only", choices=("contract", "policies", "early-stop", "drift", "plan"))
    args = parser.parse_args()
    started = time.perf_counter()
    held = True
    if args.only in (None, "contract"):
        seeds = (0, 1, 2)
        held = print_contract(contract(seeds, args.contract_reps), seeds, args.contract_reps)
    if args.only in (None, "policies"):
        begun = time.perf_counter()
        rows = run(args.seed, args.reps, args.tasks, args.interval, args.resamples)
        print_policies(rows, args, time.perf_counter() - begun)
    if args.only in (None, "early-stop"):
        print_early(run_early(args.seed, args.reps, args.tasks), args.tasks, args.reps, args.seed)
    if args.only in (None, "drift"):
        from drift_bench import grid as drift_grid  # numpy: the bench extra
        from drift_bench import print_grid as print_drift

        rows, checked = drift_grid(args.drift_reps, args.seed)
        held = print_drift(rows, checked, args.drift_reps, args.seed) and held
    if args.only in (None, "plan"):
        cells = plan_grid(args.plan_reps, args.seed, args.tasks)
        held = print_plan(cells, args.plan_reps, args.seed, args.tasks) and held
    print(f"run time {time.perf_counter() - started:.1f} s")
    sys.exit(0 if held else 1)


if __name__ == "__main__":
    main()
