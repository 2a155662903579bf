"""`run_evaluation`: the one function behind `skill-eval run` and `scripts/evaluate.py`.

Load the suite, resolve the arms, run every task with each arm through `api.evaluate` (the
library entry), decide the verdict and write the artifact. Suite and configuration errors stop
the run before any model call. (Not called evaluate.py: `skill_eval.evaluate` is the function.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from ..backends import create_backend
from ..core.blobs import cut_ingredient
from ..core.model import Attempt
from ..core.paths import safe_component
from ..errors import CacheError, ExecutorError, JudgeError, RunInterrupted, UsageError
from ..evaluators.registry import evaluator_sources
from ..executors.base import agent_task_problem, create_executor, get_executor_spec
from ..executors.mock import check_mock_tasks, load_mock_outputs
from ..inputs.arms import Arms, arms_to_dict, new_run_id, resolve_arms, void_reason
from ..inputs.run_checks import check_suite, skill_use_warnings
from ..inputs.suite import load_suite
from ..judges.base import JudgeContext
from ..judges.judge_cache import JudgeCache, MemoryJudgeCache
from ..judges.llm import build_grader, judge_model
from ..judges.pytest_judge import preflight_pytest
from ..judges.python_judge import preflight_python_judges
from ..judges.rubric import preflight_evaluators
from ..plan.options import RunOptions, check_options, executor_config
from ..stats.analysis import Analysis
from ..stats.results import TaskResult, first_failures
from ..stats.verdict import (
    RunHealth,
    Verdict,
    decide_verdict,
    guard_excluded,
    skip_verdict,
    worst_case,
)
from ..triggers import figures as trigger_figures
from ..triggers import run as trigger_run
from . import artifact as artifact_mod
from . import compat
from .cache import BaselineCache, BaselineIngredients, baseline_key, parse_duration
from .evaluation import EvaluationSettings, evaluate, summarise
from .fingerprint import ArmSkill, Inputs, ingredients
from .fingerprint import fingerprint as fingerprint_of
from .journal_key import journal_key
from .progress import Progress
from .rundir import open_run_dir
from .runner import JOURNAL_NAME, Journal
from .shards import parse_shard
from .workspace import WORKSPACES_DIR, KeepPolicy


@dataclass(frozen=True)
class EvaluationOutcome:
    artifact: dict[str, Any]
    path: Path
    run_dir: Path | None

    @property
    def verdict(self) -> str:
        return str(self.artifact["evaluation"]["verdict"])


def _evaluator_dirs(opts: RunOptions) -> tuple[Path, ...]:
    return tuple(s.path for s in evaluator_sources(opts.evaluators_dirs) if s.path is not None)


def run_evaluation(opts: RunOptions, log: Callable[[str], None] | None = None) -> EvaluationOutcome:
    """Run one evaluation end to end and write its artifact."""
    log = log or (lambda message: print(message, file=sys.stderr))
    check_options(opts)
    shard = parse_shard(opts.shard)
    backend = create_backend(opts.backend, concurrency=opts.concurrency, address=opts.ray_address)
    started_at = datetime.now(UTC)
    suite = load_suite(opts.task_suite)
    check_suite(suite, opts.task_suite)  # judges build, fixtures compile: before any call
    state_root = Path(opts.state_root).resolve()
    state_root.mkdir(parents=True, exist_ok=True)
    mock_outputs = load_mock_outputs(Path(opts.mock_outputs)) if opts.mock_outputs else None
    if mock_outputs is not None:
        check_mock_tasks(
            Path(opts.mock_outputs or ""), mock_outputs, {task.id for task in suite.tasks}
        )
    executor_name = opts.executor_name
    executor = create_executor(
        executor_name,
        executor_config(
            opts, executor_name, **({"mock_outputs": mock_outputs} if mock_outputs else {})
        ),
    )
    if (
        problem := agent_task_problem(executor, executor_name, suite.tasks)
        or trigger_run.executor_problem(executor, executor_name, suite)
    ) is not None:
        raise UsageError(problem)
    describe = executor.describe()

    # Candidate skills resolved from a ranking are copied under <state-root>/skills/.
    arms = resolve_arms(
        opts,
        state_root / "skills",
        new_run_id() if opts.standalone else "",
        trigger_run.delivery_mode(suite, opts.skill_mode),
    )
    arms = replace(
        arms,
        warnings=(
            *arms.warnings,
            *skill_use_warnings(suite.tasks, executor_name, executor.can_act, opts.skill_mode),
        ),
    )
    trigger_run.check_arms(suite, arms.baseline_kind, opts.early_stop)
    for warning in arms.warnings:
        log(f"warning: {warning}")
    threshold = None if opts.standalone else opts.eval_threshold
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
        # Nothing would be compared: an error, not a pass, and no model call is spent.
        skip = Verdict("error", void)
    if skip is not None:
        return finish_evaluation(
            opts, suite, arms, state_root, None, [], skip, started_at, describe, log=log
        )
    executor.preflight()
    judge_problems = (
        preflight_evaluators(suite.tasks, opts.evaluators_dirs, Path.cwd())
        + preflight_python_judges(suite.tasks)
        + preflight_pytest(suite.tasks)
    )
    if judge_problems:
        raise JudgeError("\n".join(judge_problems))

    parts = ingredients(
        suite,
        Inputs(
            skills={
                arm.name: ArmSkill(arm.skill_sha256, arm.skill.directory if arm.skill else None)
                for arm in (arms.candidate, arms.baseline)
                if arm is not None
            },
            executor=describe,
            skill_mode=opts.skill_mode,
            pass_k=opts.pass_k,
            samples=opts.sample_count,
            judge_backend=judge_backend_name(opts, executor_name),
            judge_model=judge_model(
                JudgeContext(suite_dir=suite.directory, judge_model=opts.judge_model)
            ),
            evaluator_dirs=_evaluator_dirs(opts),
            # a shard resumes only itself; a non-default cut changes what judges see
            extra={
                **({"shard": shard.label} if shard else {}),
                **cut_ingredient(opts.max_output_bytes),
            },
        ),
    )
    fingerprint = fingerprint_of(parts)
    label = (
        safe_component(arms.run_id)
        if opts.standalone
        else f"{safe_component(arms.run_id)}--{safe_component(arms.candidate_id)}"
    )
    label += f"--shard-{shard.index}-of-{shard.count}" if shard else ""
    key = journal_key(opts.journal_key, state_root)  # signs the journal; a bad file stops here
    run = open_run_dir(
        state_root,
        label=label,
        run_id=arms.run_id,
        fingerprint=fingerprint,
        resume=opts.resume,
        info={
            "candidate_id": arms.candidate_id,
            "task_suite": str(suite.path),
            "created_at": started_at.isoformat(),
            "options": asdict(opts),
            "executor": describe,  # for `merge`
            "arms": arms_to_dict(arms),
        },
        warn=lambda m: log(f"warning: {m}"),
        ingredients=parts,
    )
    if opts.resume == "" and not run.resumed:
        log("resume: no earlier run has these inputs; starting a new run")
    arms = replace(arms, run_id=run.run_id)
    run_dir, resumed = run.path, run.resumed

    ctx = judge_context(opts, suite.directory, executor_name, state_root, run_dir=run_dir)
    journal = Journal(run_dir / JOURNAL_NAME, opts.max_preview_chars, key)
    done = journal.read() if resumed else []
    arm_list = [a for a in (arms.candidate, arms.baseline) if a is not None]
    pairs = len(suite.tasks) * opts.sample_count
    per_arm = sum(shard.owns(p) for p in range(pairs)) if shard else pairs
    progress = (
        Progress(
            {a.name: per_arm for a in arm_list},
            level=lambda: getattr(executor, "concurrency_level", None),
        )
        if opts.progress
        else None
    )
    if resumed:
        log(
            f"resume: {sum(a.status != 'error' for a in done)} finished attempts kept "
            f"from {run_dir}"
        )
    extras: dict[str, Any] = {}
    cache = _open_baseline_cache(opts, arms, log)
    cache_key, hit = None, None
    if cache is not None:
        skill = arms.baseline.skill if arms.baseline else None
        cache_key = baseline_key(
            suite,
            BaselineIngredients(
                skill_sha256=skill.sha256 if skill else None,
                skill_directory=skill.directory if skill else None,
                executor=describe,
                skill_mode=opts.skill_mode,
                pass_k=opts.pass_k,
                samples=opts.sample_count,
                judge_backend=ctx.judge_backend,
                judge_model=judge_model(ctx),
                evaluator_dirs=_evaluator_dirs(opts),
                max_output_bytes=opts.max_output_bytes,
            ),
        )
        hit = cache.get(cache_key)
        reused = _reuse_cached(hit.attempts if hit else (), done, suite, opts.sample_count, journal)
        extras["baseline_cache"] = {
            "enabled": True,
            "hit": hit is not None,
            "key": cache_key,
            "age_seconds": round(hit.age_seconds) if hit else None,
            "attempts_from_cache": reused,
            "directory": str(cache.directory),
        }
        if reused:
            log(
                f"baseline: {reused} attempts from the cache (age "
                f"{round(hit.age_seconds) if hit else 0} s)"
            )
    if opts.early_stop and arms.baseline is None:
        log("warning: --early-stop needs a baseline to compare with; every sample runs")
    if progress is not None:
        progress.already(a for a in done if a.status != "error")
    try:
        settings = replace(
            evaluation_settings(opts),
            keep_root=run_dir / WORKSPACES_DIR,
            keep_workspaces=cast(KeepPolicy, opts.keep_workspaces),
            shard=shard,
        )
        result = evaluate(
            suite,
            arm_list,
            executor,
            settings=settings,
            reference=arm_list[-1].name,
            judge_context=ctx,
            journal=journal,
            done=done,
            progress=progress,
            backend=backend,
        )
    except KeyboardInterrupt:
        finished = sum(a.status != "error" for a in journal.recorded())
        raise RunInterrupted(str(run_dir), finished) from None
    finally:
        if progress is not None:
            progress.close()
        journal.close()
        run.release()  # the run directory's lock (another --resume may now continue it)
        if cache is not None and cache_key is not None:
            # From memory, never the file again: judged code may have reached the file.
            stored = [a for a in journal.recorded() if a.arm == "baseline"]
            cache.put(cache_key, stored, created_at=hit.created_at if hit else None)
            cache.close()
    attempts = list(result.attempts)
    extras.update(close_judge_cache(ctx))
    if result.early_stop is not None:
        extras["early_stop"] = result.early_stop.to_dict()
        if result.early_stop.stopped_at_look is not None:
            log(
                f"early stop: decided at look {result.early_stop.stopped_at_look} of "
                f"{result.early_stop.looks}; {result.early_stop.skipped_attempts} attempts "
                "skipped"
            )
    partial = None
    if shard is not None:  # one slice decides nothing: `skill-eval merge` joins them
        partial, extras["shard"] = shard.verdict(len(attempts))
    return finish_evaluation(
        opts,
        suite,
        arms,
        state_root,
        run_dir,
        attempts,
        partial,
        started_at,
        describe,
        log=log,
        extras=extras,
    )


def evaluation_settings(opts: RunOptions) -> EvaluationSettings:
    """What `evaluate` needs of the run's options."""
    return EvaluationSettings(
        pass_k=opts.pass_k,
        samples=opts.sample_count,
        policy=opts.policy,  # type: ignore[arg-type]  # check_options
        min_delta=opts.min_delta,
        margin=opts.margin,
        concurrency=opts.concurrency,
        max_retries=opts.max_retries,
        max_output_bytes=opts.max_output_bytes,
        early_stop=opts.early_stop,
    )


def _open_baseline_cache(
    opts: RunOptions, arms: Arms, log: Callable[[str], None]
) -> BaselineCache | None:
    if not opts.baseline_cache_dir or arms.baseline is None:
        return None
    try:
        return BaselineCache(
            Path(opts.baseline_cache_dir),
            parse_duration(opts.baseline_ttl),
            warn=lambda m: log(f"warning: {m}"),
        )
    except CacheError as exc:
        log(f"warning: {exc}; running without the baseline cache")
        return None


def _reuse_cached(
    cached: Iterable[Attempt], done: list[Attempt], suite: Any, samples: int, journal: Journal
) -> int:
    """Add cached baseline attempts this run still lacks to `done` and to the journal."""
    have = {(a.arm, a.task_id, a.index) for a in done if a.status != "error"}
    task_ids = {t.id for t in suite.tasks}
    reused = 0
    for attempt in cached:
        key = ("baseline", attempt.task_id, attempt.index)
        if (
            attempt.arm != "baseline"
            or key in have
            or attempt.task_id not in task_ids
            or attempt.index >= samples
        ):
            continue
        done.append(journal.append(attempt))  # its blobs copied from the cache into the run
        have.add(key)
        reused += 1
    return reused


def close_judge_cache(ctx: JudgeContext) -> dict[str, Any]:
    """Close the judge cache; its hit and miss counts for the artifact."""
    if ctx.cache is None or ctx.cache.directory is None:  # off, or in memory (--mock)
        return {}
    ctx.cache.close()
    return {"judge_cache": {"directory": str(ctx.cache.directory), **ctx.cache.stats()}}


def judge_backend_name(opts: RunOptions, executor_name: str) -> str:
    """The grader model-graded judges use: --judge-executor, else the executor's own when it
    can grade, else the mock grader (always the mock under --mock)."""
    try:
        can_grade = get_executor_spec(executor_name).grader is not None
    except ExecutorError:  # rejudge of a run whose plugin executor is gone: judges still run
        can_grade = False
    backend = opts.judge_executor or (executor_name if can_grade else "mock")
    return "mock" if opts.mock else backend


JUDGE_REQUESTS_NAME = "judge-requests.jsonl"  # what the mock grader was asked, in a run dir


def judge_context(
    opts: RunOptions,
    suite_dir: Path,
    executor_name: str,
    state_root: Path,
    run_dir: Path | None = None,
) -> JudgeContext:
    """Where model-graded judges send their calls (the grader of `--judge-executor`, by
    default the executor's own when it can grade, else the mock grader), and the judge cache
    they share. The mock grader records its requests in the run directory."""
    backend = judge_backend_name(opts, executor_name)
    cache: JudgeCache | MemoryJudgeCache | None = None
    if opts.no_judge_cache:
        cache = None
    elif backend == "mock":
        cache = MemoryJudgeCache()
    else:
        cache = JudgeCache(
            Path(opts.judge_cache_dir) if opts.judge_cache_dir else state_root / "judge-cache"
        )
    options = {
        "claude_bin": opts.claude_bin,
        "evaluators_dirs": list(opts.evaluators_dirs),
        "project_dir": str(Path.cwd()),
    }
    record = run_dir / JUDGE_REQUESTS_NAME if backend == "mock" and run_dir else None
    grader = build_grader(backend, options={**options, "record": record})
    return JudgeContext(
        suite_dir=suite_dir,
        mock=backend == "mock",
        judge_backend=backend,
        judge_model=opts.judge_model,
        cache=cache,
        backend_options=options,
        grader=grader,
    )


def finish_evaluation(
    opts: RunOptions,
    suite: Any,
    arms: Arms,
    state_root: Path,
    run_dir: Path | None,
    attempts: list[Attempt],
    skip: Verdict | None,
    started_at: datetime,
    describe: dict[str, Any],
    log: Callable[[str], None],
    extras: dict[str, Any] | None = None,
    output: Path | None = None,
) -> EvaluationOutcome:
    """Results, statistics, verdict and the artifact, from a run's attempts."""
    ran = skip is None
    rated = trigger_run.ordinary_suite(suite)  # trigger tasks of a mixed suite: apart
    cand, base, unpaired, rates, analysis, errored, decided = _decide(
        opts, rated, arms, attempts, ran
    )
    if rated is not suite:  # the per-task results still list every task
        cand, base = _decide(opts, suite, arms, attempts, ran)[:2]
    notes = [_errors_note(errored)] if unpaired else []
    verdict = (
        skip
        if skip is not None
        else guard_excluded(  # errors never profit a pass
            decided,
            errored,
            lambda: _decide(opts, rated, arms, worst_case(attempts, errored), ran)[-1],
        )
    )
    triggers = (
        trigger_figures.section(
            suite.tasks,
            attempts,
            [a.name for a in (arms.candidate, arms.baseline) if a],
            samples=opts.sample_count,
            policy=opts.policy,  # type: ignore[arg-type]
            min_delta=opts.min_delta,
            margin=opts.margin,
        )
        if ran
        else None
    )
    verdict = trigger_run.combine(verdict, triggers)
    verdict = replace(verdict, warnings=(*notes, *verdict.warnings))
    for warning in verdict.warnings:
        log(f"warning: {warning}")
    data = artifact_mod.build(
        opts=opts,
        suite=suite,
        arms=arms,
        run_dir=run_dir,
        candidate=cand,
        baseline=base,
        rates=rates,
        verdict=verdict,
        started_at=started_at,
        executor=describe,
        attempts=attempts,
        state_root=state_root,
        analysis=analysis,
    )
    if triggers is not None:  # only suites with trigger tasks: other artifacts unchanged
        data["triggers"] = triggers
    data.update(extras or {})
    path = output or (Path(opts.output) if opts.output else None)
    if path is not None:  # a path the user chose: written there
        data = artifact_mod.write(data, path)
    else:  # the default name, or a suffixed one when another run holds it
        wanted = artifact_mod.default_path(state_root, arms.run_id, arms.candidate_id)
        data, path = artifact_mod.write_unique(data, wanted)
        if path != wanted:
            log(f"warning: {wanted} belongs to another run; this artifact is {path.name}")
    if trace := compat.write_trace(data, suite.tasks, state_root, opts.min_pass_rate):
        log(f"failure trace: {trace}")  # the original evaluator's, for its pipeline
    return EvaluationOutcome(data, path.resolve(), run_dir)


Rates = tuple[float | None, float | None, float | None]


def _decide(
    opts: RunOptions, suite: Any, arms: Arms, attempts: list[Attempt], ran: bool
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
    api.ArmComparison), analysis, the tasks in error per arm, and the verdict of these
    attempts."""
    cand: list[TaskResult] = []
    base: list[TaskResult] = []
    rates: Rates = (None, None, None)
    analysis = Analysis(None, None, None, (), None)
    unpaired: tuple[str, ...] = ()
    errored: dict[str, list[str]] = {}
    if not ran:
        return cand, base, unpaired, rates, analysis, errored, Verdict("skipped")
    arm_list = [a for a in (arms.candidate, arms.baseline) if a is not None]
    result = summarise(
        suite.tasks, arm_list, attempts, evaluation_settings(opts), reference=arm_list[-1].name
    )
    cand = list(result.arm("candidate").results)
    if arms.baseline is not None:
        base = list(result.arm("baseline").results)
        comparison = result.comparison("candidate")
        rates = (comparison.rate, comparison.reference_rate, comparison.delta)
        analysis, unpaired = comparison.analysis, comparison.unpaired
        errored = comparison.errored
    else:
        rates = (result.arm("candidate").pass_rate, None, None)
    policy = analysis.policy
    verdict = decide_verdict(
        candidate_rate=rates[0],
        baseline_rate=rates[1],
        baseline_kind=arms.baseline_kind,  # type: ignore[arg-type]
        health=RunHealth.worst_arm(attempts, opts.max_error_rate),
        min_pass_rate=opts.min_pass_rate,
        policy_passed=policy.passed if policy else None,
        policy_reason=policy.reasoning if policy else "",
        first_failures=first_failures({"candidate": cand, "baseline": base}),
    )
    return cand, base, unpaired, rates, analysis, errored, verdict


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
