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

import contextlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from ..core.model import Task
from ..core.workspace import WORKSPACES_DIR
from ..errors import JournalError, RunInterrupted
from ..executors.catalog import runs_jailed
from ..inputs.judge_checks import CODE_JUDGES
from ..inputs.source_checks import judge_types
from ..jail import NO_JAIL, JailUnavailable
from ..jail.providers import choice_line
from ..plan.run_plan import RunPlan
from .baseline_reuse import reusing_baselines
from .cache import drawn_from
from .estimate import estimate_run, prices_of
from .evaluation import EvaluationResult, evaluate
from .finish import EvaluationOutcome, Finished, finish_evaluation
from .jobs import WorkspaceSettings
from .judging import close_judge_cache
from .opening import OpenRun, open_run
from .prepare import Log, Prepared, prepare
from .spend import Meter
from .spending import announce, metered


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


def say_the_jail(prepared: Prepared, log: Log) -> None:
    """The provider `--jail auto` chose, said once as a run that jails something starts (an
    agent, a code judge): the artifact keeps it and the summary does not say it again."""
    plan = prepared.plan
    if plan.execution.no_jail:
        return  # said first, as the run began
    executors = {prepared.executor.name, *(e.name for e in prepared.arm_executors.values())}
    coded = any(set(judge_types(t.judge)) & CODE_JUDGES for t in prepared.suite.tasks)
    if coded or any(map(runs_jailed, executors)):
        with contextlib.suppress(JailUnavailable):  # (its preflight passed: it resolves)
            if line := choice_line(plan.execution.jail):
                log(line)


def run_evaluation(plan: RunPlan, log: Log | None = None) -> EvaluationOutcome:
    """Run one evaluation end to end and write its artifact (see the module docstring).
    Raises SkillEvalError for bad inputs and harness faults, RunInterrupted on Ctrl-C."""
    log = log or _to_stderr
    if plan.execution.no_jail:  # said first: all that follows is worth less without a jail
        log(f"WARNING: {NO_JAIL}")
    prepared = prepare(plan, log)
    say_the_jail(prepared, log)
    if prepared.skip is not None:
        return finish_evaluation(plan, prepared.suite, prepared.arms, _skipped(prepared), log)
    # a resumed run is priced once its journal is read (metered)
    resumed = plan.records.resume is not None
    estimate = estimate_run(prepared) if resumed else announce(prepared, log)
    with open_run(prepared, log) as opened, metered(prepared, opened, estimate, log) as meter:
        run = _evaluator(prepared, opened, meter)
        with reusing_baselines(prepared, opened, log, _fresh_runner(prepared, opened, run)) as x:
            result = _evaluate(prepared, opened, log, run)
    return finish_evaluation(
        plan, prepared.suite, opened.arms, _ran(prepared, opened, result, x, log), log
    )


Evaluate = Callable[..., EvaluationResult]


def _evaluator(prepared: Prepared, opened: OpenRun, meter: Meter | None) -> Evaluate:
    """`evaluate` as this run calls it: its executors, judges, journal, the attempts it holds,
    its backend and its meter; the caller adds the suite, arms and plan sections."""
    return partial(
        evaluate,
        executor=prepared.arm_executors or prepared.executor,
        judge_context=opened.judge_context,
        journal=opened.journal,
        done=opened.done,
        backend=prepared.backend,
        meter=meter,
    )


def _skipped(prepared: Prepared) -> Finished:
    return Finished(
        [], prepared.started_at, prepared.describe, prepared.state_root, skip=prepared.skip
    )


def _fresh_runner(
    prepared: Prepared, opened: OpenRun, run: Evaluate
) -> Callable[[Mapping[str, int]], None]:
    """Runs the baseline's first `counts[task]` attempts of the tasks named, as the run would
    (its executor, judges, journal), before the rest: the drift guard's fresh attempts
    (engine/baseline_reuse.py). Tasks are grouped by count, one evaluation each."""
    plan = prepared.plan

    def fresh(counts: Mapping[str, int]) -> None:
        baseline = opened.arms.baseline
        if baseline is None:
            return
        arm = next(a for a in opened.arms.every if a.name == baseline.name)
        groups: dict[int, list[Task]] = {}
        for task in prepared.suite.tasks:
            if counts.get(task.id, 0) > 0:
                groups.setdefault(counts[task.id], []).append(task)
        for n, tasks in sorted(groups.items()):
            known = {(a.arm, a.task_id, a.index) for a in opened.done}
            result = run(
                replace(prepared.suite, tasks=tuple(tasks)),
                [arm],
                decision=replace(plan.decision, samples=n, budget=None, early_stop=False),
                execution=replace(plan.execution, shard=None),
            )
            opened.done.extend(
                a for a in result.attempts if (a.arm, a.task_id, a.index) not in known
            )

    return fresh


def _evaluate(prepared: Prepared, opened: OpenRun, log: Log, run: Evaluate) -> EvaluationResult:
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
    arm_list = list(arms.every)
    try:
        return run(
            prepared.suite,
            arm_list,
            decision=plan.decision,
            execution=plan.execution,
            workspaces=WorkspaceSettings(
                plan.records.keep_workspaces, keep_root=opened.path / WORKSPACES_DIR
            ),
            reference=arms.baseline.name if arms.baseline is not None else arm_list[-1].name,
            progress=opened.progress,
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
