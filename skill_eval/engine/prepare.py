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
from ..errors import CacheError, JudgeError, SkillEvalError, UsageError
from ..executors.base import ExecutorBase, create_executor
from ..inputs.arms import Arms, new_run_id, resolve_arms, void_reason
from ..inputs.run_checks import check_suite, skill_use_warnings
from ..inputs.suite import load_suite
from ..judges.base import PreflightSettings, preflight_judges
from ..judges.roles import ArmsShape, roles_of
from ..plan.checks import MAX_SAMPLES
from ..plan.executor_options import executor_config
from ..plan.run_plan import RunPlan
from ..stats.verdict import Verdict, skip_verdict
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
    # What a real run would need and this machine lacks (a key, the agent's binary, a jail),
    # one line each: prepared with `preflight=False` (a dry run), found and not raised.
    missing: tuple[str, ...] = ()


def prepare(plan: RunPlan, log: Log, *, preflight: bool = True) -> Prepared:
    """Resolve and check every input of `plan` (see the module docstring). Without
    `preflight` (a dry run) what the executors and judges would need to run here is listed
    in `missing` instead of raised."""
    check_records(plan)
    shard = parse_shard(plan.execution.shard)
    backend = create_backend(
        plan.execution.runner,
        concurrency=plan.execution.concurrency,
        address=plan.execution.ray_address,
    )
    started_at = datetime.now(UTC)
    suite = load_suite(plan.inputs.task_suite)
    for line in suite.source.not_carried_over if suite.source is not None else ():
        log(f"{Path(plan.inputs.task_suite).name}: not carried over: {line}")
    # judges build, fixtures compile, judges pass their references: before any call
    judge_warnings = check_suite(suite, plan.inputs.task_suite, plan.execution.jail)
    check_budget_size(plan, suite)
    state_root = Path(plan.records.state_root).resolve()
    if preflight:  # a dry run writes nothing under the state root
        state_root.mkdir(parents=True, exist_ok=True)
    executor = build_executor(plan, suite, dry=not preflight)
    arms = _arms(plan, suite, executor, state_root, log, judge_warnings)
    by_arm = build_arm_executors(
        arms.listed,
        lambda n, m, model: build_executor(plan, suite, n, m, model, dry=not preflight),
    )
    arms, skip = _decided_without_running(plan, arms, log)
    missing: list[str] = []
    if skip is None:
        arms = _checked_runs(plan, suite, arms, executor, by_arm, log)
        for each in distinct(by_arm) or [executor]:
            if preflight:
                check_can_run(plan, suite, each)
            else:
                missing += [m for m in missing_to_run(plan, suite, each) if m not in missing]
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
        tuple(missing),
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
    plan: RunPlan,
    suite: Suite,
    name: str | None = None,
    skill_mode: str | None = None,
    model: str | None = None,
    *,
    dry: bool = False,
) -> ExecutorBase:
    """The plan's executor (or executor `name` an arm runs on, in `skill_mode`, on `model`
    when the arm names one; `dry`: for a dry run, which writes nothing), refusing up
    front the tasks it cannot run (agent tasks with an executor that cannot act, trigger
    tasks without an executor that can tell whether the skill was invoked: the judges'
    roles say) and a context mode it cannot deliver."""
    name = name or plan.executor.name
    config = executor_config(plan, name, skill_mode, model, remember_versions=not dry)
    executor = create_executor(name, config)
    problem = agent_task_problem(executor, name, suite.tasks)
    for role in roles_of(suite.tasks):
        problem = problem or role.executor_problem(executor, name, suite.tasks)
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


def agent_task_problem(executor: ExecutorBase, executor_name: str, tasks: Any) -> str | None:
    """Why `executor` cannot run these tasks (an agent task with an executor that cannot
    act), naming the first such task and the executor to use; None when it can."""
    if executor.can_act:
        return None
    task = next((t for t in tasks if t.is_agent_task), None)
    if task is None:
        return None
    return (
        f"task {task.id!r} is an agent task (it has files: or allowed_tools:), and the "
        f"{executor_name!r} executor cannot act (no tools, no workspace): run it with "
        "--executor claude-cli, or --mock for a dry run"
    )


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
    roles = roles_of(suite.tasks)
    delivery: str = skill_mode
    for role in roles:
        delivery = role.delivery_mode(suite.tasks, delivery)
    arms = resolve_arms(
        plan.inputs,
        state_root / "skills",
        new_run_id() if plan.inputs.standalone else "",
        delivery_mode=delivery,
        executor=plan.executor.name,
        eval_threshold=None if plan.inputs.standalone else plan.decision.eval_threshold,
    )
    more = (
        []
        if arms.listed
        else skill_use_warnings(suite.tasks, plan.executor.name, executor.can_act, skill_mode)
    )
    arms = replace(arms, warnings=(*arms.warnings, *more, *judge_warnings))
    shape = ArmsShape(
        arms.listed, arms.baseline_kind, plan.decision.early_stop, plan.decision.budget is not None
    )
    for role in roles:
        role.check_arms(suite.tasks, shape)
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


def _checked_runs(
    plan: RunPlan,
    suite: Suite,
    arms: Arms,
    executor: ExecutorBase,
    by_arm: Mapping[str, ExecutorBase],
    log: Log,
) -> Arms:
    """Each executor checks its own inputs against the tasks and the arms it runs (the mock:
    what its scripted outputs leave unscripted); its warnings are logged and kept with the
    arms', an error under --strict, and its notes kept for the summary. Arms on one executor
    share its options: asked once."""
    runs: dict[str, tuple[ExecutorBase, list[str]]] = {}
    for arm in arms.every:
        runs_on = by_arm.get(arm.name, executor)
        runs.setdefault(runs_on.name, (runs_on, []))[1].append(arm.name)
    found = [
        warning
        for runs_on, names in runs.values()
        for warning in runs_on.check_run(suite.tasks, names, strict=plan.inputs.strict)
    ]
    for warning in found:
        log(f"warning: {warning}")
    # notes change how the verdict reads: said with it, in the summary, not before the run
    notes = [n for runs_on, names in runs.values() for n in runs_on.run_notes(suite.tasks, names)]
    found += notes
    return replace(arms, warnings=(*arms.warnings, *found)) if found else arms


def check_can_run(plan: RunPlan, suite: Suite, executor: ExecutorBase) -> None:
    """The executor can run here (binary, key, its jail) and the judges can judge (evaluator
    skills, python callables, pytest and its jail): an error before any attempt."""
    executor.preflight()
    if problems := preflight_judges(suite.tasks, _preflight_settings(plan)):
        raise JudgeError("\n".join(problems))


def missing_to_run(plan: RunPlan, suite: Suite, executor: ExecutorBase) -> list[str]:
    """What `check_can_run` would stop at, every line of it, raised by nothing."""
    found: list[str] = []
    try:
        executor.preflight()
    except SkillEvalError as exc:
        found += str(exc).splitlines()
    try:
        found += preflight_judges(suite.tasks, _preflight_settings(plan))
    except SkillEvalError as exc:  # a preflight that stops outright (no jail for its code)
        found.append(str(exc))
    return found


def _preflight_settings(plan: RunPlan) -> PreflightSettings:
    return PreflightSettings(
        tuple(plan.judging.evaluators_dirs),
        Path.cwd(),
        jailed=not plan.execution.no_jail,
        jail=plan.execution.jail,
    )


__all__ = [
    "Prepared",
    "build_executor",
    "check_can_run",
    "check_records",
    "missing_to_run",
    "prepare",
]
