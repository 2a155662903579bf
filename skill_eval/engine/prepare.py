"""The prepare step of a run: every input resolved and checked before a run directory is
opened or a model called. The suite loads and its judges build; the executor is built from
the plan's executor section (and refuses tasks it cannot run); the arms' skills resolve; a
candidate below the threshold, one that could not be built and arms that do not differ are
decided here (a `skip` verdict, nothing runs); else the executor and the judges preflight.
With --arm every arm's executor is built (engine/arm_executors.py) and each preflights.

The only writes: the state root itself and, in pipeline mode, the candidate's skill copied
under `<state-root>/skills/`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..backends import Backend, create_backend
from ..core.model import Suite
from ..errors import CacheError, JudgeError, UsageError
from ..executors.base import ExecutorBase, agent_task_problem, create_executor
from ..executors.mock import check_mock_tasks, load_mock_outputs
from ..inputs.arms import Arms, new_run_id, resolve_arms, void_reason
from ..inputs.run_checks import check_suite, skill_use_warnings
from ..inputs.suite import load_suite
from ..jail import require
from ..judges.pytest_judge import has_pytest_judge, preflight_pytest
from ..judges.python_judge import preflight_python_judges
from ..judges.rubric import preflight_evaluators
from ..plan.checks import MAX_SAMPLES
from ..plan.executor_options import executor_config
from ..plan.run_plan import RunPlan
from ..stats.verdict import Verdict, skip_verdict
from ..triggers import run as trigger_run
from .arm_executors import build_arm_executors, describe_arms, distinct
from .cache import parse_duration
from .shards import Shard, parse_shard

Log = Callable[[str], None]


@dataclass(frozen=True)
class Prepared:
    """A run's inputs, resolved and checked. `skip` is a verdict decided without running
    (skipped, or error for arms that do not differ); then nothing else runs."""

    plan: RunPlan
    suite: Suite
    executor: ExecutorBase
    describe: dict[str, Any]  # the executor's identity, for the manifest and fingerprints
    arms: Arms
    state_root: Path
    started_at: datetime
    backend: Backend
    shard: Shard | None
    skip: Verdict | None
    # --arm: each arm's executor by arm name, and what identifies it (its delivery, its
    # executor's describe()); empty for the two-arm run, whose arms `executor` runs.
    arm_executors: Mapping[str, ExecutorBase] = field(default_factory=dict)
    arm_describe: Mapping[str, Any] = field(default_factory=dict)


def prepare(plan: RunPlan, log: Log) -> Prepared:
    """Resolve and check every input of `plan` (see the module docstring)."""
    check_records(plan)
    shard = parse_shard(plan.execution.shard)
    backend = create_backend(
        plan.execution.runner,
        concurrency=plan.execution.concurrency,
        address=plan.execution.ray_address,
    )
    started_at = datetime.now(UTC)
    suite = load_suite(plan.inputs.task_suite)
    # judges build, fixtures compile, judges pass their references: before any call
    judge_warnings = check_suite(suite, plan.inputs.task_suite)
    check_budget_size(plan, suite)
    state_root = Path(plan.records.state_root).resolve()
    state_root.mkdir(parents=True, exist_ok=True)
    executor = build_executor(plan, suite)
    arms = _arms(plan, suite, executor, state_root, log, judge_warnings)
    by_arm = build_arm_executors(arms.listed, lambda n, m: build_executor(plan, suite, n, m))
    arms, skip = _decided_without_running(plan, arms, log)
    if skip is None:
        for each in distinct(by_arm) or [executor]:
            preflight(plan, suite, each)
    return Prepared(
        plan,
        suite,
        executor,
        executor.describe(),
        arms,
        state_root,
        started_at,
        backend,
        shard,
        skip,
        by_arm,
        describe_arms(arms.listed, by_arm),
    )


def check_records(plan: RunPlan) -> None:
    """Paths that cannot work and a time to live that is none, found before anything runs."""
    records = plan.records
    state = Path(records.state_root)
    if state.exists() and not state.is_dir():
        raise UsageError(f"--state-root {state}: exists and is not a directory")
    if records.output:
        out = Path(records.output)
        if out.is_dir():
            raise UsageError(f"--output {out}: is a directory; give a file path")
        if out.parent.exists() and not out.parent.is_dir():
            raise UsageError(f"--output {out}: {out.parent} is not a directory")
    try:
        parse_duration(records.baseline_ttl)
    except CacheError as exc:
        raise UsageError(f"--baseline-ttl: {exc}") from None


def check_budget_size(plan: RunPlan, suite: Suite) -> None:
    """--budget covers every task in both arms at least once, and no more than --samples'
    ceiling would."""
    budget, tasks = plan.decision.budget, len(suite.tasks)
    if budget is None:
        return
    least, most = 2 * tasks, 2 * tasks * MAX_SAMPLES
    if not least <= budget <= most:
        raise UsageError(
            f"--budget {budget}: the suite's {tasks} tasks need at least {least} attempts (one "
            f"per task and arm) and take at most {most} ({MAX_SAMPLES} per task and arm)"
        )


def build_executor(
    plan: RunPlan, suite: Suite, name: str | None = None, skill_mode: str | None = None
) -> ExecutorBase:
    """The plan's executor (or executor `name` an arm runs on, in `skill_mode`), refusing up
    front the tasks it cannot run (agent tasks with an executor that cannot act, trigger
    tasks without Claude Code) and a context mode it cannot deliver. Scripted mock outputs
    named by a file are read here and their task ids checked against the suite (a typo
    would silently fall back to the default output)."""
    name = name or plan.executor.name
    own = plan.executor.options if name == plan.executor.name else plan.executor.arm_options
    options = own if name == plan.executor.name else own.get(name) or {}
    extra: dict[str, Any] = {}
    scripted = options.get("mock_outputs")
    if isinstance(scripted, str):
        outputs = load_mock_outputs(Path(scripted))
        check_mock_tasks(Path(scripted), outputs, {task.id for task in suite.tasks})
        extra["mock_outputs"] = outputs
    executor = create_executor(name, executor_config(plan, name, skill_mode, **extra))
    problem = agent_task_problem(executor, name, suite.tasks) or trigger_run.executor_problem(
        executor, name, suite
    )
    # (an arm's delivery is checked by arm_executors.delivery_problem, in the arm's words)
    context = skill_mode is None and plan.executor.skill_mode == "context"
    if problem is None and context and executor.context_file is None:
        problem = (
            f"--skill-mode context: the {name!r} executor reads no always-on context file "
            "(CLAUDE.md, AGENTS.md) it could write the skill into"
        )
    if problem is not None:
        raise UsageError(problem)
    return executor


def _arms(
    plan: RunPlan,
    suite: Suite,
    executor: ExecutorBase,
    state_root: Path,
    log: Log,
    judge_warnings: Sequence[str] = (),
) -> Arms:
    """The arms with every warning about them (and the suite's judges) logged. Candidate
    skills resolved from a ranking are copied under <state-root>/skills/."""
    skill_mode = plan.executor.skill_mode
    arms = resolve_arms(
        plan.inputs,
        state_root / "skills",
        new_run_id() if plan.inputs.standalone else "",
        delivery_mode=trigger_run.delivery_mode(suite, skill_mode),
        executor=plan.executor.name,
        eval_threshold=None if plan.inputs.standalone else plan.decision.eval_threshold,
    )
    more = (
        []
        if arms.listed
        else skill_use_warnings(suite.tasks, plan.executor.name, executor.can_act, skill_mode)
    )
    arms = replace(arms, warnings=(*arms.warnings, *more, *judge_warnings))
    if arms.listed:
        trigger_run.check_deliveries(suite, arms.listed)
    else:
        trigger_run.check_arms(
            suite, arms.baseline_kind, plan.decision.early_stop, plan.decision.budget is not None
        )
    for warning in arms.warnings:
        log(f"warning: {warning}")
    return arms


def _decided_without_running(plan: RunPlan, arms: Arms, log: Log) -> tuple[Arms, Verdict | None]:
    """A pipeline candidate scored below --eval-threshold or not built is skipped; arms that
    would compare nothing are an error, not a pass, and no model call is spent on them."""
    threshold = None if plan.inputs.standalone else plan.decision.eval_threshold
    if threshold is not None and arms.candidate_score is None:
        unscored = (
            f"candidate {arms.candidate_id!r} has no score in the ranking, so "
            f"--eval-threshold {threshold:g} was not applied"
        )
        log(f"warning: {unscored}")
        arms = replace(arms, warnings=(*arms.warnings, unscored))
    skip = skip_verdict(arms.candidate_score, threshold) or (
        Verdict("skipped", arms.unbuilt) if arms.unbuilt else None
    )
    if skip is None and (void := void_reason(arms)) is not None:
        skip = Verdict("error", void)
    return arms, skip


def preflight(plan: RunPlan, suite: Suite, executor: ExecutorBase) -> None:
    """The executor can run here (binary, key, its jail) and the judges can judge (evaluator
    skills, python callables, pytest and its jail): an error before any attempt."""
    executor.preflight()
    if not plan.execution.no_jail and any(has_pytest_judge(t.judge) for t in suite.tasks):
        require("bubblewrap")  # JailUnavailable naming what to install, or --no-jail
    problems = (
        preflight_evaluators(suite.tasks, plan.judging.evaluators_dirs, Path.cwd())
        + preflight_python_judges(suite.tasks)
        + preflight_pytest(suite.tasks)
    )
    if problems:
        raise JudgeError("\n".join(problems))


__all__ = ["Prepared", "build_executor", "check_records", "preflight", "prepare"]
