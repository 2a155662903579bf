"""`run_evaluation`: the one function behind `skill-eval run` and `scripts/evaluate.py`, as
four steps over a RunPlan:

    prepare   resolve and check every input; a verdict decided without running (engine/prepare)
    open      run directory, journal, judges' context and cache, progress   (engine/opening)
    evaluate  every task with each arm (`engine.evaluation.evaluate`), inside the baseline
              cache's reuse (engine/baseline_reuse)
    finish    results, statistics, verdict, artifact                       (engine/finish)

Suite and configuration errors stop the run in `prepare`, before any model call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..core.model import Task
from ..core.workspace import WORKSPACES_DIR
from ..errors import BudgetExhausted, JournalError, RunInterrupted
from ..jail import NO_JAIL
from ..plan.run_plan import RunPlan
from .baseline_reuse import reusing_baselines
from .cache import drawn_from
from .estimate import Estimate, check_caps, estimate_run, prices_of
from .evaluation import EvaluationResult, evaluate
from .finish import EvaluationOutcome, Finished, evaluation_settings, finish_evaluation
from .judging import close_judge_cache
from .opening import OpenRun, open_run
from .prepare import Log, Prepared, prepare
from .spend import Meter, total


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


def run_evaluation(plan: RunPlan, log: Log | None = None) -> EvaluationOutcome:
    """Run one evaluation end to end and write its artifact (see the module docstring).
    Raises SkillEvalError for bad inputs and harness faults, RunInterrupted on Ctrl-C."""
    log = log or _to_stderr
    if plan.execution.no_jail:  # said first: all that follows is worth less without a jail
        log(f"WARNING: {NO_JAIL}")
    prepared = prepare(plan, log)
    if prepared.skip is not None:
        return finish_evaluation(plan, prepared.suite, prepared.arms, _skipped(prepared), log)
    estimate = estimate_run(prepared)
    if plan.records.resume is None:  # a resumed run is priced once its journal is read
        _announce(estimate, prepared, log)
    with open_run(prepared, log) as opened:
        meter = _meter(prepared, opened, estimate, log)
        fresh = _fresh_runner(prepared, opened, meter)
        with reusing_baselines(prepared, opened, log, fresh) as extras:
            result = _evaluate(prepared, opened, log, meter)
        if meter is not None and meter.reached is not None:
            _out_of_budget(meter, estimate, result, opened)
    return finish_evaluation(
        plan, prepared.suite, opened.arms, _ran(prepared, opened, result, extras, log), log
    )


def _announce(estimate: Estimate, prepared: Prepared, log: Log) -> None:
    """The run's plan and price, first (not with --quiet, which asks for the summary alone);
    a cap the estimate is over stops it here."""
    if prepared.plan.records.progress:
        for line in estimate.lines():
            log(line)
    warning = check_caps(estimate, prepared.plan.records)
    if warning is not None:
        log(f"warning: {warning}")


def _meter(prepared: Prepared, opened: OpenRun, estimate: Estimate, log: Log) -> Meter | None:
    """The run's spending against its caps (None: no cap), from what earlier sessions of a
    resumed run spent; a resumed run's plan and price are said here."""
    records = prepared.plan.records
    prices = prices_of(prepared.executor)
    spent = total(opened.done, prices)
    if records.resume is not None:
        _announce(estimate.after(opened.done, spent), prepared, log)
    if records.max_cost_usd is None and records.max_tokens_total is None:
        return None
    return Meter(records.max_cost_usd, records.max_tokens_total, prices, already=spent)


def _out_of_budget(
    meter: Meter, estimate: Estimate, result: EvaluationResult, opened: OpenRun
) -> None:
    """A run whose cap stopped it before every attempt ran ends here, never as a pass."""
    planned = sum(estimate.attempts.values())
    finished = sum(a.status != "error" and drawn_from(a) is None for a in result.attempts)
    if finished >= planned:
        return  # the cap was reached by the last attempts: the run is whole
    where = str(opened.path)
    flag = "--max-cost-usd" if meter.max_cost_usd is not None else "--max-tokens-total"
    raise BudgetExhausted(
        f"budget exhausted, no verdict (not a pass): {meter.reached}; {finished} of {planned} "
        f"attempts finished and are kept in {where}; finish the run with "
        f"skill-eval run --resume {where} {flag} HIGHER",
        where,
    )


def _skipped(prepared: Prepared) -> Finished:
    return Finished(
        [], prepared.started_at, prepared.describe, prepared.state_root, skip=prepared.skip
    )


def _fresh_runner(
    prepared: Prepared, opened: OpenRun, meter: Meter | None
) -> Callable[[Mapping[str, int]], None]:
    """Runs the baseline's first `counts[task]` attempts of the tasks named, as the run would
    (its executor, judges, journal), before the rest: the drift guard's fresh attempts
    (engine/baseline_reuse.py). Tasks are grouped by count, one evaluation each."""

    def run(counts: Mapping[str, int]) -> None:
        baseline = opened.arms.baseline
        if baseline is None:
            return
        arm = next(a for a in opened.arms.every if a.name == baseline.name)
        settings = replace(
            evaluation_settings(prepared.plan), budget=None, early_stop=False, shard=None
        )
        groups: dict[int, list[Task]] = {}
        for task in prepared.suite.tasks:
            if counts.get(task.id, 0) > 0:
                groups.setdefault(counts[task.id], []).append(task)
        for n, tasks in sorted(groups.items()):
            known = {(a.arm, a.task_id, a.index) for a in opened.done}
            result = evaluate(
                replace(prepared.suite, tasks=tuple(tasks)),
                [arm],
                prepared.arm_executors or prepared.executor,
                settings=replace(settings, samples=n),
                judge_context=opened.judge_context,
                journal=opened.journal,
                done=opened.done,
                backend=prepared.backend,
                stop_when=meter.add if meter is not None else None,
            )
            opened.done.extend(
                a for a in result.attempts if (a.arm, a.task_id, a.index) not in known
            )

    return run


def _evaluate(
    prepared: Prepared, opened: OpenRun, log: Log, meter: Meter | None
) -> EvaluationResult:
    """Every task with each arm; attempts the run already holds are not run again."""
    plan, arms = prepared.plan, opened.arms
    if plan.decision.early_stop and arms.baseline is None:
        log("warning: --early-stop needs a baseline to compare with; every sample runs")
    if opened.progress is not None:  # a pooled baseline's attempts past --samples are extra
        opened.progress.already(
            a
            for a in opened.done
            if a.status != "error" and not (drawn_from(a) and a.index >= plan.sample_count)
        )
    settings = replace(
        evaluation_settings(plan),
        keep_root=opened.path / WORKSPACES_DIR,
        keep_workspaces=plan.records.keep_workspaces,
        shard=prepared.shard,
    )
    arm_list = list(arms.every)
    reference = arms.baseline.name if arms.baseline is not None else arm_list[-1].name
    try:
        return evaluate(
            prepared.suite,
            arm_list,
            prepared.arm_executors or prepared.executor,
            settings=settings,
            reference=reference,
            judge_context=opened.judge_context,
            journal=opened.journal,
            done=opened.done,
            progress=opened.progress,
            backend=prepared.backend,
            stop_when=meter.add if meter is not None else None,
        )
    except KeyboardInterrupt:
        try:  # what --resume will keep: the records on disk, not those known in memory
            saved = opened.journal.saved()
        except JournalError:  # a record cut short: resume says which
            saved = opened.journal.recorded()
        finished = sum(a.status != "error" for a in saved)
        raise RunInterrupted(str(opened.path), finished) from None


def _ran(
    prepared: Prepared,
    opened: OpenRun,
    result: EvaluationResult,
    extras: dict[str, Any],
    log: Log,
) -> Finished:
    """What finish needs of a run that ran: its attempts, the judge cache's counts, where
    --early-stop stopped or how --budget was spent, and a shard's partial verdict (a slice
    decides nothing: `skill-eval merge` joins them)."""
    extras = {**extras, **close_judge_cache(opened.judge_context)}
    if result.adaptive is not None:
        extras["adaptive"] = result.adaptive.to_dict()
        spent = result.adaptive
        log(f"budget: {spent.planned} attempts, {spent.first} per task and arm first")
    stop = result.early_stop
    if stop is not None:
        extras["early_stop"] = stop.to_dict()
        if stop.stopped_at_look is not None:
            log(
                f"early stop: decided at look {stop.stopped_at_look} of {stop.looks}; "
                f"{stop.skipped_attempts} attempts skipped"
            )
    attempts = list(result.attempts)
    partial = None
    if prepared.shard is not None:
        partial, extras["shard"] = prepared.shard.verdict(len(attempts))
    return Finished(
        attempts,
        prepared.started_at,
        prepared.describe,
        prepared.state_root,
        run_dir=opened.path,
        skip=partial,
        extras=extras,
        arm_executors=prepared.arm_describe,
        prices=prices_of(prepared.executor),
    )


__all__ = ["EvaluationOutcome", "run_evaluation"]
