"""The finish step of a run (and of `rejudge` and `merge`): from a run's attempts to per-task
results, pass rates, analysis, the verdict, and the artifact written where the plan says (or
under `<state-root>/evaluations/`). What decides is stats/ and the policy; this composes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.model import Attempt
from ..executors.pricing import PriceTable
from ..inputs.arms import Arms
from ..judges.roles import rated_tasks, roles_of
from ..plan.run_plan import RunPlan
from ..stats.analysis import Analysis
from ..stats.results import TaskResult, first_failures
from ..stats.verdict import RunHealth, Verdict, decide_verdict, guard_excluded, worst_case
from . import arm_figures, compat
from . import artifact as artifact_mod
from .baseline_reuse import pool_section
from .evaluation import summarise


@dataclass(frozen=True)
class EvaluationOutcome:
    """What a run leaves: its artifact (as written), where, and its run directory (None when
    nothing ran: a skipped candidate)."""

    artifact: dict[str, Any]
    path: Path
    run_dir: Path | None

    @property
    def verdict(self) -> str:
        return str(self.artifact["evaluation"]["verdict"])


def rated_suite(suite: Any) -> Any:
    """The suite whose tasks the pass rates cover: the suite itself, or its tasks less those
    the judges' roles rate apart (a mixed suite's trigger tasks)."""
    tasks = rated_tasks(suite.tasks)
    return suite if len(tasks) == len(suite.tasks) else replace(suite, tasks=tasks)


@dataclass(frozen=True)
class Finished:
    """What a run hands to `finish_evaluation` besides the plan, suite and arms."""

    attempts: list[Attempt]
    started_at: datetime
    executor: dict[str, Any]  # the executor's describe(), for the manifest
    state_root: Path
    run_dir: Path | None = None
    skip: Verdict | None = None  # a verdict decided without attempts (skipped, void) or partial
    extras: dict[str, Any] | None = None  # more top-level artifact sections
    output: Path | None = None  # the artifact's path, beating the plan's
    # --arm: each arm's delivery and executor describe() (engine/arm_executors.py)
    arm_executors: Mapping[str, Any] | None = None
    prices: PriceTable | None = None  # what judgements cost (--price-file); None: built-in


def finish_evaluation(
    plan: RunPlan, suite: Any, arms: Arms, run: Finished, log: Callable[[str], None]
) -> EvaluationOutcome:
    """Results, statistics, verdict and the artifact, from a run's attempts."""
    verdict, cand, base, rates, analysis = _verdict(plan, suite, arms, run)
    ran = [a.name for a in (arms.candidate, arms.baseline) if a]
    sections: dict[str, Any] = {}  # what the judges' roles add (trigger tasks: `triggers`)
    for role in roles_of(suite.tasks) if run.skip is None else []:
        sections[role.key] = role.section(suite.tasks, run.attempts, ran, plan.decision)
        verdict = role.guard(verdict, sections[role.key])
    for warning in verdict.warnings:
        log(f"warning: {warning}")
    data = artifact_mod.build(
        plan=plan,
        suite=suite,
        arms=arms,
        run_dir=run.run_dir,
        candidate=cand,
        baseline=base,
        rates=rates,
        verdict=verdict,
        started_at=run.started_at,
        executor=run.executor,
        attempts=run.attempts,
        state_root=run.state_root,
        analysis=analysis,
        prices=run.prices,
    )
    data.update((key, value) for key, value in sections.items() if value is not None)
    if arms.listed and run.skip is None:  # only runs with --arm: two-arm artifacts unchanged
        data["arms"] = arm_figures.section(
            suite.tasks,
            rated_suite(suite).tasks,
            arms.listed,
            _names(arms)[1],
            run.attempts,
            plan.decision,
            run.arm_executors or {},
        )
    if run.skip is None and run.run_dir is not None and _pools(plan, arms):
        data["baseline_pool"] = pool_section(
            run.attempts,
            [t.id for t in suite.tasks],
            run.run_dir.name,
            plan.sample_count,
            (run.extras or {}).get("baseline_cache"),
            analysis.pool,
        )
    data.update(run.extras or {})
    data, path = _write(plan, arms, data, run, log)
    if trace := compat.write_trace(data, suite.tasks, run.state_root, plan.decision.min_pass_rate):
        log(f"failure trace: {trace} ({compat.TRACE_IS})")
    return EvaluationOutcome(data, path.resolve(), run.run_dir)


def _pools(plan: RunPlan, arms: Arms) -> bool:
    """Whether the run's baseline pools cached attempts (engine/baseline_reuse.py)."""
    return bool(plan.records.baseline_cache_dir) and arms.baseline is not None


def _verdict(
    plan: RunPlan, suite: Any, arms: Arms, run: Finished
) -> tuple[Verdict, list[TaskResult], list[TaskResult], Rates, Analysis]:
    """The verdict (errors never profit a pass), per-task results of every task, rates and
    analysis. Tasks whose judges' roles rate them apart (trigger tasks of a mixed suite) are
    left out of the rates."""
    ran = run.skip is None
    rated = rated_suite(suite)
    cand, base, unpaired, rates, analysis, errored, decided = _decide(
        plan, rated, arms, run.attempts, ran
    )
    if rated is not suite:  # the per-task results still list every task
        cand, base = _decide(plan, suite, arms, run.attempts, ran)[:2]
    verdict = (
        run.skip
        if run.skip is not None
        else guard_excluded(
            decided,
            errored,
            lambda: _decide(
                plan, rated, arms, worst_case(run.attempts, errored, _names(arms)), ran
            )[-1],
        )
    )
    notes = [_errors_note(errored)] if unpaired else []
    return replace(verdict, warnings=(*notes, *verdict.warnings)), cand, base, rates, analysis


def _write(
    plan: RunPlan, arms: Arms, data: dict[str, Any], run: Finished, log: Callable[[str], None]
) -> tuple[dict[str, Any], Path]:
    """The artifact written where asked, or at its default name (suffixed when another run
    holds that name)."""
    path = run.output or (Path(plan.records.output) if plan.records.output else None)
    if path is not None:  # a path the user chose: written there
        return artifact_mod.write(data, path), path
    wanted = artifact_mod.default_path(run.state_root, arms.run_id, arms.candidate_id)
    data, path = artifact_mod.write_unique(data, wanted)
    if path != wanted:
        log(f"warning: {wanted} belongs to another run; this artifact is {path.name}")
    return data, path


Rates = tuple[float | None, float | None, float | None]


def _decide(
    plan: RunPlan, suite: Any, arms: Arms, attempts: list[Attempt], ran: bool
) -> tuple[
    list[TaskResult],
    list[TaskResult],
    tuple[str, ...],
    Rates,
    Analysis,
    dict[str, list[str]],
    Verdict,
]:
    """Per-task results, pass rates (with a baseline, both over the same tasks: see
    evaluation.ArmComparison), analysis, the tasks in error per arm, and the verdict of
    these attempts."""
    cand: list[TaskResult] = []
    base: list[TaskResult] = []
    rates: Rates = (None, None, None)
    analysis = Analysis(None, None, None, (), None)
    unpaired: tuple[str, ...] = ()
    errored: dict[str, list[str]] = {}
    if not ran:
        return cand, base, unpaired, rates, analysis, errored, Verdict("skipped")
    name, ref = _names(arms)
    result = summarise(suite.tasks, arms.every, attempts, plan.decision, ref)
    cand = list(result.arm(name).results)
    if arms.baseline is not None:
        base = list(result.arm(ref).results)
        comparison = result.comparison(name)  # with --arm: at its Holm level in the family
        rates = (comparison.rate, comparison.reference_rate, comparison.delta)
        analysis, unpaired = comparison.analysis, comparison.unpaired
        where = comparison.errored
        errored = {"candidate": where[name], "baseline": where[ref], "both": where["both"]}
    else:
        rates = (result.arm(name).pass_rate, None, None)
    policy = analysis.policy
    verdict = decide_verdict(
        candidate_rate=rates[0],
        baseline_rate=rates[1],
        baseline_kind=arms.baseline_kind,
        health=RunHealth.worst_arm(attempts, plan.decision.max_error_rate),
        min_pass_rate=plan.decision.min_pass_rate,
        policy_passed=policy.passed if policy else None,
        policy_reason=policy.reasoning if policy else "",
        first_failures=first_failures(
            {_said(arms, "candidate", name): cand, _said(arms, "baseline", ref): base}
        ),
    )
    return cand, base, unpaired, rates, analysis, errored, verdict


def _names(arms: Arms) -> tuple[str, str]:
    """(the candidate's arm name, the reference's): the baseline, or the candidate alone."""
    name = arms.candidate.name
    return name, arms.baseline.name if arms.baseline is not None else name


def _said(arms: Arms, role: str, name: str) -> str:
    """How a verdict's lines name an arm: its role, and its own name when --arm named it."""
    return f"{role} ({name})" if arms.listed else role


def _errors_note(where: dict[str, list[str]]) -> str:
    """Tasks left out of both pass rates, counted per arm (a task may have failed in both)."""
    total = sum(len(ids) for ids in where.values())
    parts = [
        f"{len(ids)} in {'both arms' if arm == 'both' else 'the ' + arm + ' only'} "
        f"({', '.join(ids)})"
        for arm, ids in where.items()
        if ids
    ]
    return f"{total} task(s) ended in error and are left out of both pass rates: " + "; ".join(
        parts
    )


__all__ = ["EvaluationOutcome", "Finished", "finish_evaluation"]
