"""From per-task results to the numbers a verdict rests on: per-task pass@k statistics, the
paired comparison with its interval, the policy's decision, and tasks that cannot tell the
arms apart. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.model import Status
from . import estimates as stats
from .drift import PoolShift
from .evidence import NO_EVIDENCE, Evidence, assess
from .policy import Conclusion, Policy, PolicyDecision, conclusion, decide_policy
from .results import TaskResult
from .score import Tally


@dataclass(frozen=True)
class Analysis:
    comparison: stats.Comparison | None
    policy: PolicyDecision | None
    conclusion: Conclusion | None
    non_discriminating: tuple[str, ...]
    power_hint: str | None
    # Whether a failing policy lacked evidence, the margin the run ruled out, what would settle it.
    evidence: Evidence = NO_EVIDENCE
    # Beside a full baseline cache: the bound the cached attempts would have given, pooled in
    # (they decide nothing: stats/drift.py).
    pool: PoolShift | None = None


def task_score(result: TaskResult, pass_k: int) -> float | None:
    """A task's score for pairing: the unbiased pass@k estimate from every sample (so with
    samples == pass_k it is exactly the compatibility 0/1 "some of the first k passed")."""
    s = stats.task_stats(result.outcomes, pass_k)
    if s.n == 0:
        return None
    if s.n == pass_k or s.pass_at_k is None:
        return 1.0 if s.first_k_passed else 0.0
    return s.pass_at_k


def tallies(candidate: Sequence[TaskResult], baseline: Sequence[TaskResult]) -> dict[str, Tally]:
    """Per task judged in both arms: (candidate passes, attempts, baseline passes, attempts),
    errors left out as task_score leaves them out."""
    base = {r.task_id: r.stats for r in baseline if r.stats.n}
    return {
        r.task_id: (r.stats.c, r.stats.n, base[r.task_id].c, base[r.task_id].n)
        for r in candidate
        if r.stats.n and r.task_id in base
    }


def non_discriminating(
    candidate_outcomes: Mapping[str, Sequence[Status]],
    baseline_outcomes: Mapping[str, Sequence[Status]],
) -> list[str]:
    """Tasks that cannot tell the arms apart: every non-error attempt of both arms passed, or
    every one failed. Tasks missing from an arm, or with only errors in an arm, are not listed.
    """
    found = []
    for task_id, cand in candidate_outcomes.items():
        if task_id not in baseline_outcomes:
            continue
        labels = {
            stats.task_stats(cand, 1).label,
            stats.task_stats(baseline_outcomes[task_id], 1).label,
        }
        if labels in ({"stable_pass"}, {"stable_fail"}):
            found.append(task_id)
    return found


def analyse(
    candidate: Sequence[TaskResult],
    baseline: Sequence[TaskResult],
    *,
    pass_k: int,
    samples: int,
    policy: Policy,
    min_delta: float,
    margin: float | None,
    rates: tuple[float | None, float | None, float | None],
    alpha: float | None = None,
    alpha_note: str = "early-stop level",
    baseline_samples: int | None = None,
    fixed_attempts: bool = True,
) -> Analysis:
    """`rates` are the reported (candidate, baseline, delta) over the paired tasks; `alpha`
    a one-sided level in place of the policy's: an --early-stop look's (stats/sequential.py)
    or a family's share (stats/family.py), named by `alpha_note`. `baseline_samples`: the
    baseline's attempts per task when they differ from `samples` (pooled with the cache:
    more; its fresh attempts beside a full cache: fewer; stats/accumulate.py), for the
    interval's pseudo-task floor. `fixed_attempts`: whether each task's attempts were a number
    fixed before the run (not placed by --budget, not cut by --early-stop); with pass@1 the
    comparison then gets each task's tallies and, when the arms' attempts differ, decides by
    the score test (stats/score.py)."""
    if not baseline:
        return Analysis(None, None, None, (), None)
    per_task = max(1, samples // pass_k)
    comparison = stats.paired_comparison(
        {r.task_id: task_score(r, pass_k) for r in candidate},
        {r.task_id: task_score(r, pass_k) for r in baseline},
        samples=per_task,
        baseline_samples=None if baseline_samples is None else max(1, baseline_samples // pass_k),
        tallies=tallies(candidate, baseline) if fixed_attempts and pass_k == 1 else None,
    )
    decision = decide_policy(
        policy,
        comparison,
        min_delta=min_delta,
        margin=margin,
        reported=rates,
        alpha=alpha,
        alpha_note=alpha_note,
    )
    blind = non_discriminating(
        {r.task_id: r.outcomes for r in candidate}, {r.task_id: r.outcomes for r in baseline}
    )
    hint = None
    if comparison.baseline_rate is not None:
        hint = stats.power_hint(
            comparison.baseline_rate, 0.1, samples=samples, n_tasks=len(candidate)
        )
    return Analysis(
        comparison,
        decision,
        conclusion(comparison),
        tuple(blind),
        hint,
        assess(decision, comparison, pass_k),
    )
