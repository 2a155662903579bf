"""From an evaluation's attempts to what it found: each arm's results over the suite and the
paired comparison of every other arm against the reference arm, with the policy's decision.
Pure: `summarise` is what `evaluate` returns after its last round, and what the finish step of
a run (and `rejudge`, `merge`) computes again from a run's journal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..core.model import Arm, Attempt, Task, Usage
from ..stats import sequential
from ..stats.accumulate import own_floor, pooled_floor
from ..stats.adaptive import Allocation
from ..stats.analysis import Analysis, analyse
from ..stats.decision import Decision
from ..stats.drift import PoolShift
from ..stats.family import bonferroni, holm_levels
from ..stats.policy import POLICY_ALPHA, threshold_of
from ..stats.results import TaskResult, arm_results, errored_in, pass_rate, unpaired_tasks
from ..stats.sequential import EarlyStop
from .attempt_store import CACHED_FROM
from .runner import attempts_by


@dataclass(frozen=True)
class ArmResult:
    """One arm over the suite: per-task results, its own pass rate (over the tasks it could
    judge), every attempt, and what they used."""

    arm: Arm
    results: tuple[TaskResult, ...]
    pass_rate: float | None
    attempts: tuple[Attempt, ...]
    usage: Usage
    cost_usd: float

    @property
    def name(self) -> str:
        return self.arm.name

    @property
    def errors(self) -> tuple[Attempt, ...]:
        """Attempts that ended in error (the harness's or the service's fault, not the arm's)."""
        return tuple(a for a in self.attempts if a.status == "error")

    def to_dict(self) -> dict[str, Any]:
        skill = self.arm.skill
        return {
            "name": self.name,
            "label": self.arm.label,
            "skill_sha256": skill.sha256 if skill else None,
            "skill_tree_sha256": skill.tree_sha256 if skill else None,
            "pass_rate": self.pass_rate,
            "results": [r.to_dict() for r in self.results],
            "usage": {
                **self.usage.to_dict(),
                "cost_usd": self.cost_usd,
                "attempts": len(self.attempts),
                "errors": len(self.errors),
            },
        }


@dataclass(frozen=True)
class ArmComparison:
    """`arm` against `reference`, paired task by task. Both rates cover the same tasks: a task
    in error in either arm (`unpaired`) is left out of both, so one arm's errors cannot
    flatter it. `analysis` holds the paired statistics and the policy's decision."""

    arm: str
    reference: str
    rate: float | None
    reference_rate: float | None
    delta: float | None
    unpaired: tuple[str, ...]
    errored: dict[str, list[str]]  # tasks in error: in `arm` only, the reference only, both
    analysis: Analysis

    @property
    def passed(self) -> bool | None:
        """The policy's decision; None when nothing could be compared."""
        return self.analysis.policy.passed if self.analysis.policy else None

    def to_dict(self) -> dict[str, Any]:
        a = self.analysis
        return {
            "arm": self.arm,
            "reference": self.reference,
            "rate": self.rate,
            "reference_rate": self.reference_rate,
            "delta": self.delta,
            "unpaired": list(self.unpaired),
            "errored": self.errored,
            "comparison": a.comparison.to_dict() if a.comparison else None,
            "policy": a.policy.to_dict() if a.policy else None,
            "conclusion": a.conclusion,
            "non_discriminating": list(a.non_discriminating),
            "power_hint": a.power_hint,
        }


@dataclass(frozen=True)
class EvaluationResult:
    arms: tuple[ArmResult, ...]
    reference: str
    comparisons: tuple[ArmComparison, ...]  # every arm but the reference, in arm order
    attempts: tuple[Attempt, ...]
    early_stop: EarlyStop | None = None  # with decision.early_stop: where the run stopped
    adaptive: Allocation | None = None  # with decision.budget: how the budget was spent

    def arm(self, name: str) -> ArmResult:
        for result in self.arms:
            if result.name == name:
                return result
        raise KeyError(name)

    def comparison(self, name: str) -> ArmComparison:
        for comparison in self.comparisons:
            if comparison.arm == name:
                return comparison
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (attempts appear within each arm's task results)."""
        return {
            "reference": self.reference,
            "arms": [a.to_dict() for a in self.arms],
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


def summarise(
    tasks: Sequence[Task],
    arms: Sequence[Arm],
    attempts: Sequence[Attempt],
    decision: Decision,
    reference: str,
) -> EvaluationResult:
    """Per-arm results and the comparisons against `reference`, from attempts (pure). The
    reference's attempts drawn from the baseline cache (engine/baseline_reuse.py marks them)
    are not its results: they only give each comparison the bound they would have given
    (stats/drift.py says why they decide nothing)."""
    per_arm, pooled = [], None
    for arm in arms:
        mine = tuple(a for a in attempts if a.arm == arm.name)
        own = tuple(a for a in mine if CACHED_FROM not in a.meta)
        per_arm.append(_arm_result(arm, tasks, own, decision))
        if arm.name == reference and len(own) < len(mine):
            pooled = _arm_result(arm, tasks, mine, decision)
    ref = next(r for r in per_arm if r.name == reference)
    others = [r for r in per_arm if r.name != reference]
    comparisons = tuple(compare(r, ref, decision, pooled=pooled) for r in others)
    if len(comparisons) > 1 and decision.policy in POLICY_ALPHA and not decision.early_stop:
        comparisons = _held_over_family(others, ref, comparisons, decision, pooled)
    return EvaluationResult(tuple(per_arm), reference, comparisons, tuple(attempts))


def _arm_result(
    arm: Arm, tasks: Sequence[Task], mine: Sequence[Attempt], decision: Decision
) -> ArmResult:
    results = tuple(arm_results(tasks, attempts_by(mine, arm.name), decision.pass_k))
    return ArmResult(
        arm,
        results,
        pass_rate(results),
        tuple(mine),
        sum((a.usage for a in mine), Usage()),
        round(sum(a.cost_usd for a in mine), 6),
    )


def _held_over_family(
    arms: Sequence[ArmResult],
    ref: ArmResult,
    comparisons: tuple[ArmComparison, ...],
    decision: Decision,
    pooled: ArmResult | None = None,
) -> tuple[ArmComparison, ...]:
    """Several candidate arms against one reference: Holm's step-down over them (at the
    policy's level / family_size), each decided and worded at the level Holm gives it."""
    base = bonferroni(POLICY_ALPHA[decision.policy], decision.family_size)
    threshold = threshold_of(decision.policy, decision.margin)
    tests = [c.analysis.comparison for c in comparisons]
    p_values = [t.paired_test().p_value(threshold, "lower") if t else 1.0 for t in tests]
    note = f"Holm over {len(comparisons)} candidates"
    levels = dict(zip((a.name for a in arms), holm_levels(p_values, base), strict=True))
    return tuple(compare(a, ref, decision, (max(levels[a.name], 1e-9), note), pooled) for a in arms)


def compare(
    arm: ArmResult,
    ref: ArmResult,
    decision: Decision,
    level: tuple[float, str] | None = None,
    pooled: ArmResult | None = None,
) -> ArmComparison:
    """`arm` against `ref` over the tasks both could judge, with the policy's decision.
    `level`: a one-sided level in place of the policy's, and what to call it (a family's).
    `pooled`: the reference with the attempts drawn from a full baseline cache, whose bound
    the analysis states beside its own (`Analysis.pool`)."""
    mine, theirs = list(arm.results), list(ref.results)
    unpaired = unpaired_tasks(mine, theirs)
    rate = pass_rate([r for r in mine if r.task_id not in unpaired])
    ref_rate = pass_rate([r for r in theirs if r.task_id not in unpaired])
    delta = round(rate - ref_rate, 4) if rate is not None and ref_rate is not None else None
    samples, alpha, note = decision.floor_samples(len(mine)), None, "early-stop level"
    if decision.family_size > 1 and decision.policy in POLICY_ALPHA:
        alpha = POLICY_ALPHA[decision.policy] / decision.family_size
        note = f"Bonferroni share: {decision.family_size} candidates compared"
    if decision.early_stop:  # decide at the look these attempts reach, at its level
        # beside a full cache the baseline made its fresh attempts first, all of them: the
        # candidate's rounds say which look this is
        looked = arm.attempts if pooled is not None else (*arm.attempts, *ref.attempts)
        reached = sequential.rounds_done(looked)
        samples = min(samples, reached) or samples
        alpha = sequential.look_alpha(
            decision.policy, decision.sample_count, decision.pass_k, samples
        )
    if level is not None:
        alpha, note = level

    def analysed(baseline: Sequence[TaskResult], floor: int | None) -> Analysis:
        return analyse(
            mine,
            baseline,
            pass_k=decision.pass_k,
            samples=samples,
            # beside a full cache the baseline made fewer attempts of its own (its fresh
            # ones); pooled with the cache, more (engine/baseline_reuse.py)
            baseline_samples=floor,
            policy=decision.policy,
            min_delta=decision.min_delta,
            margin=decision.margin,
            rates=(rate, ref_rate, delta),
            alpha=alpha,
            alpha_note=note,
            # the score test reads attempts taken a fixed number per task (stats/score.py)
            fixed_attempts=decision.budget is None and not decision.early_stop,
        )

    def counts(results: Sequence[TaskResult]) -> list[int]:
        return [r.stats.n for r in results if r.task_id not in unpaired]

    analysis = analysed(theirs, own_floor(counts(theirs), samples) if pooled else None)
    if pooled is not None:
        reference = analysed(pooled.results, pooled_floor(counts(pooled.results), samples))
        own, cached = sum(counts(theirs)), sum(counts(pooled.results)) - sum(counts(theirs))
        full = len(counts(theirs)) * decision.sample_count
        analysis = _with_pool(analysis, reference, (own, cached, full))
    where = errored_in(mine, theirs)
    return ArmComparison(
        arm.name,
        ref.name,
        rate,
        ref_rate,
        delta,
        tuple(unpaired),
        {arm.name: where["candidate"], ref.name: where["baseline"], "both": where["both"]},
        analysis,
    )


def _with_pool(analysis: Analysis, pooled: Analysis, made: tuple[int, int, int]) -> Analysis:
    """`analysis` with the lower bound the cached attempts would have given pooled in beside
    the run's own (stats/drift.py: PoolShift; `made`: own, cached and full attempts), when
    both have one."""
    mine, theirs = analysis.policy, pooled.policy
    if mine is None or theirs is None or mine.lower is None or theirs.lower is None:
        return analysis
    return replace(analysis, pool=PoolShift("lower", mine.lower, theirs.lower, *made))


__all__ = [
    "ArmComparison",
    "ArmResult",
    "EvaluationResult",
    "compare",
    "summarise",
]
