"""`improve(...)`: the library call behind `skill-eval improve`. It loads the suite and the skill,
builds the executor and the judge context, wires the adapter's evaluate_fn/compare_fn and the
SQLite memory, runs the loop, and writes every version, the winner and the ranking artifact.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.model import Suite
from ..engine.judging import close_judge_cache, judge_context
from ..engine.prepare import build_executor, check_can_run, check_records
from ..engine.spend import Meter, command_meter
from ..errors import BudgetExhausted, SkillEvalError, UsageError
from ..executors.base import ExecutorBase
from ..executors.catalog import has_option
from ..inputs.suite import load_suite
from ..judges.base import JudgeContext
from ..plan.checks import executor_named
from ..plan.run_plan import RunPlan
from ..stats.policy import Policy
from .adapter import make_compare_fn, make_evaluate_fn
from .backends import MOCK as MOCK_IMPROVER
from .backends import MeteredImprover, build_improver
from .decide import IterationSettings
from .detect import detectable_lines
from .evaluation import CompareFn, EvaluateFn
from .folders import FolderError, read_skill_folder, write_versions, write_winner
from .improver import Improver
from .loop import ImproveResult, run_improve
from .memory import CycleRecord, ImproveMemory, format_history
from .ranking import build_ranking_artifact, candidate_id
from .split import set_apart_to_confirm, split_tasks
from .versions import confirmable

# What a proposed version must show against the original: that it is better (a one-sided
# lower bound above 0), not merely that it is not much worse (run's default, no-regression).
CONFIRM_POLICY: Policy = "superior"


@dataclass(frozen=True)
class ImproveRun:
    """What an improve run left behind: the loop's result, its folder under the state root, the
    ranking artifact, and where the winner went (None: nothing was proposed)."""

    result: ImproveResult
    run_dir: Path
    ranking: Path
    winner: Path | None
    best_candidate: str
    notes: tuple[str, ...] = ()
    budget_spent: str | None = None  # the command's cap, when it ended the run

    @property
    def exit_code(self) -> int:
        """0 when a better version is proposed, or the original is already good enough
        (Accept at the first iteration); 1 when none was shown better at this size;
        the budget's code (5) when the command's cap ended the run before a proposal."""
        if self.result.proposed:
            return 0
        if self.budget_spent is not None:
            return BudgetExhausted.exit_code
        return 0 if self.result.decision == "Accept" and len(self.result.versions) == 1 else 1


IMPROVE_ARMS = ("version", "original", "best")  # the arms improve's evaluations run
RULES = "mock_rules"  # the executor option: answer by the skill's [rule:...] markers


def plan_for_improve(**flags: Any) -> RunPlan:
    """The plan improve scores its versions with: `skill-eval run`'s flags by their Python
    names (`RunPlan.from_flags`), standalone, confirmed under --policy superior unless
    another is given, and an executor with scripted answers (the offline one) answering by
    the skill's [rule:...] markers where no --mock-outputs scripts it."""
    flags.setdefault("standalone", True)
    if flags.get("policy") is None:
        flags["policy"] = CONFIRM_POLICY
    name = executor_named(flags)
    if has_option(name, RULES) and flags.get(RULES) is None:
        flags[RULES] = True
    return RunPlan.from_flags(**flags)


def _executor(plan: RunPlan, suite: Suite) -> ExecutorBase:
    """The evaluations' executor, built and checked as `run` builds it (engine/prepare.py):
    its options, the tasks it can run, its own inputs against improve's arms (scripted
    outputs keyed by a run's arm names match none of improve's versions), its preflight."""
    executor = build_executor(plan, suite)
    try:
        executor.check_run(suite.tasks, IMPROVE_ARMS, strict=True)
    except SkillEvalError as exc:
        raise UsageError(
            f"{exc} (improve scores its own versions as arms {', '.join(IMPROVE_ARMS)}: "
            "give scripted outputs as {task_id: output}, which every version gets, or none)"
        ) from None
    check_can_run(plan, suite, executor)
    return executor


def _protected(suite_path: Path, skill_dir: Path) -> tuple[str, ...]:
    """The suite's path inside the skill folder, when it lives there: the improver may not
    edit the tasks it is scored on."""
    try:
        return (suite_path.resolve().relative_to(skill_dir.resolve()).as_posix(),)
    except ValueError:
        return ()


def improve(
    plan: RunPlan,
    *,
    settings: IterationSettings | None = None,
    improver: str | Improver = MOCK_IMPROVER,
    improver_model: str | None = None,
    base_url: str | None = None,
    claude_bin: str | None = None,
    output_dir: str | Path | None = None,
    in_place: bool = False,
    env: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> ImproveRun:
    """Improve the skill folder at `plan.inputs.skill_path` on `plan.inputs.task_suite`; see
    references/improve.md. Build the plan with `plan_for_improve(...)` (run's flags): its
    executor, execution (jail, concurrency, retries), judging and cost caps are the
    evaluations', and `plan.decision.policy` is the confirmation's. `improver`,
    `improver_model`, `base_url` and `claude_bin` choose who rewrites the skill.

    Raises UsageError (bad input) before anything runs; ExecutorError when a model cannot be
    reached. The user's skill is written only with `in_place`.
    """
    if plan.inputs.skill_path is None:
        raise UsageError("improve: the plan names no skill (--skill-path)")
    skill_dir, files, skipped, suite = _read_inputs(plan.inputs.skill_path, plan.inputs.task_suite)
    check_records(plan)
    root = Path(plan.records.state_root)
    s = settings or IterationSettings()
    if plan.records.max_cost_usd is not None:  # the command's one cap, the loop's too
        s = replace(s, max_cost_usd=plan.records.max_cost_usd)
    executor = _executor(plan, suite)
    say = log or (lambda line: None)
    run_dir = root / "improve" / f"{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9:09d}"
    run_dir.mkdir(parents=True)
    meter = command_meter(plan.records.max_cost_usd, plan.records.max_tokens_total)
    chosen = _improver(improver, improver_model, base_url, claude_bin, env, plan, meter)
    ctx = judge_context(plan, suite.directory, root.resolve(), run_dir=run_dir)
    evaluate_fn, compare_fn = _judged_by(suite, executor, plan, s, ctx, meter)
    if compare_fn is not None:
        _warn_if_unconfirmable(suite, s, plan.decision.policy, say)
    for note in skipped:
        say(f"[skill] {note}")
    with ImproveMemory.in_state_root(root) as memory:
        result = run_improve(
            files,
            suite.tasks,
            evaluate_fn,
            chosen,
            memory,
            s,
            skill_id=suite.skill_id,
            compare_fn=compare_fn,
            protected=_protected(suite.path, skill_dir),
            log=say,
            budget=(lambda: meter.reached) if meter is not None else (lambda: None),
        )
        cycles = memory.cycles(result.run_id)
    close_judge_cache(ctx)
    target = skill_dir if in_place else Path(output_dir) if output_dir else run_dir / "improved"
    winner, ranking = _write_run(result, run_dir, skill_dir, target, in_place, suite, cycles)
    notes = tuple(getattr(chosen, "notes", ()))
    spent = meter.reached if meter is not None else None
    return ImproveRun(result, run_dir, ranking, winner, candidate_id(result.best), notes, spent)


def _improver(
    improver: str | Improver,
    model: str | None,
    base_url: str | None,
    claude_bin: str | None,
    env: Mapping[str, str] | None,
    plan: RunPlan,
    meter: Meter | None,
) -> Improver:
    """The improver asked for (a name: built like a grader, jailed as the plan says), its
    spending counted on the command's meter."""
    chosen = (
        improver
        if not isinstance(improver, str)
        else build_improver(
            improver,
            model=model,
            base_url=base_url,
            claude_bin=claude_bin,
            env=env,
            jail=plan.execution.jail,
        )
    )
    return chosen if meter is None else MeteredImprover(chosen, meter)


def _warn_if_unconfirmable(
    suite: Suite, s: IterationSettings, policy: Policy, say: Callable[[str], None]
) -> None:
    """Before the first iteration: when the tasks set apart to confirm the pick are too few
    for any outcome to pass the policy at its level / the versions compared, say so (every
    version would be refused, whatever it does)."""
    split = set_apart_to_confirm(split_tasks(suite.tasks, s.holdout, s.seed), s.seed)
    family = max(1, s.iterate - 1)
    for line in detectable_lines(len(split.confirm), s.confirm_samples, policy, family, s.holdout):
        say(line)  # what the confirmation can see, before anything runs (improve/detect.py)
    if not confirmable(len(split.confirm), policy, family, s.confirm_samples):
        say(
            f"[confirm] warning: the {len(split.confirm)} task(s) set apart to confirm the pick "
            f"cannot pass policy {policy} at its level / {family} (the versions compared), "
            "even if the pick passes every one and the original none: no version can be "
            "proposed. Give the suite more tasks, or a larger --holdout"
        )


def _read_inputs(skill_path: str, task_suite: str) -> tuple[Path, dict[str, str], list[str], Suite]:
    """The skill folder (its files, and notes on what was skipped) and the suite, checked."""
    skill_dir = Path(skill_path)
    if not skill_dir.is_dir():
        raise UsageError(f"--skill-path {skill_dir}: not a directory holding a SKILL.md")
    try:
        files, skipped = read_skill_folder(skill_dir)
    except FolderError as exc:
        raise UsageError(f"--skill-path {exc}") from None
    suite = load_suite(task_suite)
    if len(suite.tasks) < 2:
        raise UsageError(f"{suite.path}: improve needs at least 2 tasks (train and holdout)")
    return skill_dir, files, skipped, suite


def _judged_by(
    suite: Suite,
    executor: ExecutorBase,
    plan: RunPlan,
    s: IterationSettings,
    ctx: JudgeContext,
    meter: Meter | None,
) -> tuple[EvaluateFn, CompareFn | None]:
    """The loop's evaluate_fn (the plan's attempts a task) and, with a holdout to confirm
    on, its compare_fn (`s.confirm_samples` attempts a task and arm), sharing one judge cache
    and one meter for the whole run."""
    evaluate_fn = make_evaluate_fn(
        suite,
        executor,
        decision=plan.decision,
        execution=plan.execution,
        judge_context=ctx,
        meter=meter,
    )
    if s.holdout <= 0:
        return evaluate_fn, None
    return evaluate_fn, make_compare_fn(
        suite,
        executor,
        decision=replace(plan.decision, samples=s.confirm_samples),
        execution=plan.execution,
        judge_context=ctx,
        meter=meter,
        stopped=(lambda: meter.reached) if meter is not None else (lambda: None),
    )


def _write_run(
    result: ImproveResult,
    run_dir: Path,
    skill_dir: Path,
    target: Path,
    in_place: bool,
    suite: Suite,
    cycles: list[CycleRecord],
) -> tuple[Path | None, Path]:
    """Every version and the winner written; the ranking artifact and its HTML report. Returns
    where the winner went (None: nothing proposed) and the ranking's path."""
    kept = write_versions(result, run_dir, skill_dir)
    try:
        winner = write_winner(result, target, skill_dir, in_place=in_place)
    except FolderError as exc:
        raise UsageError(f"--output-dir {exc}") from None
    artifact = build_ranking_artifact(
        result,
        run_id=run_dir.name,
        # The kept copy of the original: inside the ranking's
        # directory, so `run --input` accepts it as the baseline.
        target_path=str(kept[result.original.hash] / "SKILL.md"),
        skill_name=suite.skill_id,
        cycles=cycles,
    )
    ranking = run_dir / "ranking.json"
    ranking.write_text(json.dumps(artifact, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    from ..report.improve_html import render_improve_html  # jinja2 only when improving

    (run_dir / "report.html").write_text(render_improve_html(artifact), encoding="utf-8")
    return winner, ranking


def history(state_root: str | Path, skill_id: str | None = None) -> str:
    """The memory's runs and cycles as text (`skill-eval improve --history`)."""
    path = Path(state_root)
    if not path.is_dir():
        raise UsageError(f"--state-root {path}: no such directory")
    with ImproveMemory.in_state_root(path) as memory:
        return format_history(memory.history(skill_id)) or "no improve runs recorded"
