"""`evaluate`: the library entry every mode ends in (`skill-eval run`, the improve loop, a
future review). Any number of labelled arms, in memory (a `Skill` need not exist on disk),
run over one suite with one executor; returns each arm's results and the paired comparison of
every other arm against the reference arm (the first, unless named). Writes no artifact:
`run_evaluation` (engine/conductor.py) resolves paths, calls this and builds the artifact.

    from skill_eval import Arm, Skill, evaluate, load_suite
    result = evaluate(load_suite("suite.yaml"),
                      [Arm("v1", Skill("v1", old_text)), Arm("v2", Skill("v2", new_text))],
                      "mock")
    result.arm("v2").pass_rate, result.comparison("v2").delta
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..backends import Backend
from ..core.blobs import DEFAULT_MAX_OUTPUT_BYTES
from ..core.model import Arm, Attempt, Suite, Task, Usage
from ..core.workspace import KeepPolicy
from ..errors import ExecutorError, UsageError
from ..executors.base import ExecutorBase, create_executor, get_executor_spec
from ..judges.base import JudgeContext, build_judge
from ..stats import sequential
from ..stats.analysis import Analysis, analyse
from ..stats.family import bonferroni, holm_levels
from ..stats.policy import DEFAULT_POLICY, POLICY_ALPHA, Policy, threshold_of
from ..stats.results import TaskResult, arm_results, errored_in, pass_rate, unpaired_tasks
from ..stats.sequential import EarlyStop
from .progress import Progress
from .runner import Job, Journal, Runner, RunSettings, attempts_by, plan_jobs
from .shards import Shard


@dataclass(frozen=True)
class EvaluationSettings:
    """How an evaluation runs and decides. `samples` (attempts per task and arm) defaults to
    `pass_k`; `policy`, `min_delta` and `margin` decide each comparison (see stats/policy.py)."""

    pass_k: int = 1
    samples: int | None = None
    policy: Policy = DEFAULT_POLICY
    min_delta: float = 0.0
    margin: float | None = None
    concurrency: int = 8
    max_retries: int = 5
    # Which final workspaces are kept (none | failed | all), where (None: where they were made).
    keep_workspaces: KeepPolicy = "none"
    workspace_parent: Path | None = None
    keep_root: Path | None = None
    shard: Shard | None = None  # run only this slice of the (task, sample) pairs
    # An executor output longer than this is cut before judging, the cut marked (None: never).
    max_output_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES
    # Stop sampling once the paired interval decides (stats/sequential.py); off: every sample runs.
    early_stop: bool = False
    # Candidates each comparison is one of (e.g. one improve run's versions): decided at the
    # policy's level / family_size (stats/family.py). Several candidate arms: Holm over them.
    family_size: int = 1

    @property
    def sample_count(self) -> int:
        return self.samples if self.samples is not None else self.pass_k


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
    early_stop: EarlyStop | None = None  # with settings.early_stop: where the run stopped

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


def evaluate(
    suite: Suite,
    arms: Sequence[Arm],
    executor: ExecutorBase | str,
    *,
    settings: EvaluationSettings | None = None,
    reference: str | None = None,
    judge_context: JudgeContext | None = None,
    journal: Journal | None = None,
    done: Iterable[Attempt] = (),
    progress: Callable[[Attempt], None] | None = None,
    backend: Backend | None = None,
) -> EvaluationResult:
    """Run every arm on every task `settings.samples` times, judge, and compare.

    `executor` is an executor or a registered name (built with its defaults); call its
    `preflight()` first if you want a clear error before any attempt. `reference` names the
    arm the others are compared against (default: the first). `judge_context` defaults to
    the executor's own grader when it has one (else the mock grader) and an in-memory judge
    cache. `journal` records each attempt as it finishes; attempts in `done` that did not end
    in error are kept and not run again (resume). `backend` runs the attempts (default: a
    thread pool of `settings.concurrency`)."""
    settings = settings or EvaluationSettings()
    reference = _check_arms(arms, reference)
    if isinstance(executor, str):
        executor = create_executor(executor)
    ctx = judge_context or default_judge_context(suite, executor.name)
    runner = Runner(
        executor,
        {t.id: build_judge(t.judge) for t in suite.tasks},
        ctx,
        journal,
        RunSettings(
            concurrency=settings.concurrency,
            max_retries=settings.max_retries,
            progress=progress,
            # the run's Progress also shows a sent batch's counts (--batch)
            batch_status=progress.batch if isinstance(progress, Progress) else None,
            keep_workspaces=settings.keep_workspaces,
            workspace_parent=settings.workspace_parent,
            keep_root=settings.keep_root,
            max_output_bytes=settings.max_output_bytes,
        ),
        backend=backend,
    )
    jobs = plan_jobs(arms, suite.tasks, settings.sample_count)
    if settings.shard is not None:
        jobs = settings.shard.select(jobs, suite.tasks)
    if settings.early_stop and len(arms) == 2:
        return _run_sequential(runner, jobs, list(done), suite.tasks, arms, settings, reference)
    attempts = runner.run(jobs, done)
    return summarise(suite.tasks, arms, attempts, settings, reference)


def _run_sequential(
    runner: Runner,
    jobs: Sequence[Job],
    done: list[Attempt],
    tasks: Sequence[Task],
    arms: Sequence[Arm],
    settings: EvaluationSettings,
    reference: str,
) -> EvaluationResult:
    """--early-stop: run the jobs one look's rounds at a time (jobs are sample-major), decide
    after each look, and leave the remaining rounds unplanned once a look decides. Attempts
    not run are counted as skipped: neither failed nor in error."""
    rounds, _ = sequential.plan(settings.policy, settings.sample_count, settings.pass_k)
    attempts: list[Attempt] = []
    start, stopped, decision = 0, None, None
    for look, end in enumerate(rounds, start=1):
        batch = [job for job in jobs if start <= job.index < end]
        attempts += runner.run(batch, [a for a in done if start <= a.index < end])
        start = end
        result = summarise(tasks, arms, attempts, settings, reference)
        comparison = result.comparisons[0]
        decision = sequential.call(
            settings.policy,
            comparison.analysis.comparison,
            comparison.passed,
            alpha=sequential.look_alpha(
                settings.policy, settings.sample_count, settings.pass_k, end
            ),
            per_task=max(1, end // settings.pass_k),
            margin=settings.margin,
            errors=sequential.has_errors(attempts),
        )
        if decision is not None and look < len(rounds):
            stopped = look
            break
    skipped = len(jobs) - len([job for job in jobs if job.index < start])
    record = sequential.record(
        settings.policy,
        settings.sample_count,
        settings.pass_k,
        stopped,
        decision if stopped else None,
        skipped,
        len(jobs),
    )
    return replace(result, early_stop=record)


def _check_arms(arms: Sequence[Arm], reference: str | None) -> str:
    names = [arm.name for arm in arms]
    if not names:
        raise UsageError("evaluate: no arms to evaluate")
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise UsageError(f"evaluate: arm {duplicate!r} is given twice; arm names must differ")
    if reference is not None and reference not in names:
        raise UsageError(f"evaluate: reference arm {reference!r} is not one of {', '.join(names)}")
    return reference if reference is not None else names[0]


def default_judge_context(suite: Suite, executor_name: str) -> JudgeContext:
    """Model-graded judges use the executor's grader when it has one, else the mock grader;
    judgements are cached in memory for this evaluation."""
    from ..judges.judge_cache import MemoryJudgeCache
    from ..judges.llm import build_grader

    try:
        can_grade = get_executor_spec(executor_name).grader is not None
    except ExecutorError:  # an executor built by hand, not registered
        can_grade = False
    return JudgeContext(
        suite_dir=suite.directory,
        grader=build_grader(executor_name if can_grade else "mock"),
        cache=MemoryJudgeCache(),
    )


def summarise(
    tasks: Sequence[Task],
    arms: Sequence[Arm],
    attempts: Sequence[Attempt],
    settings: EvaluationSettings,
    reference: str,
) -> EvaluationResult:
    """Per-arm results and the comparisons against `reference`, from attempts (pure)."""
    per_arm = []
    for arm in arms:
        mine = tuple(a for a in attempts if a.arm == arm.name)
        results = tuple(arm_results(tasks, attempts_by(mine, arm.name), settings.pass_k))
        per_arm.append(
            ArmResult(
                arm,
                results,
                pass_rate(results),
                mine,
                sum((a.usage for a in mine), Usage()),
                round(sum(a.cost_usd for a in mine), 6),
            )
        )
    ref = next(r for r in per_arm if r.name == reference)
    others = [r for r in per_arm if r.name != reference]
    comparisons = tuple(compare(r, ref, settings) for r in others)
    if len(comparisons) > 1 and settings.policy in POLICY_ALPHA and not settings.early_stop:
        comparisons = _held_over_family(others, ref, comparisons, settings)
    return EvaluationResult(tuple(per_arm), reference, comparisons, tuple(attempts))


def _held_over_family(
    arms: Sequence[ArmResult],
    ref: ArmResult,
    comparisons: tuple[ArmComparison, ...],
    settings: EvaluationSettings,
) -> tuple[ArmComparison, ...]:
    """Several candidate arms against one reference: Holm's step-down over them (at the
    policy's level / family_size), each decided and worded at the level Holm gives it."""
    base = bonferroni(POLICY_ALPHA[settings.policy], settings.family_size)
    threshold = threshold_of(settings.policy, settings.margin)
    tests = [c.analysis.comparison for c in comparisons]
    p_values = [t.paired_test().p_value(threshold, "lower") if t else 1.0 for t in tests]
    note = f"Holm over {len(comparisons)} candidates"
    levels = dict(zip((a.name for a in arms), holm_levels(p_values, base), strict=True))
    return tuple(compare(a, ref, settings, (max(levels[a.name], 1e-9), note)) for a in arms)


def compare(
    arm: ArmResult,
    ref: ArmResult,
    settings: EvaluationSettings,
    level: tuple[float, str] | None = None,
) -> ArmComparison:
    """`arm` against `ref` over the tasks both could judge, with the policy's decision.
    `level`: a one-sided level in place of the policy's, and what to call it (a family's)."""
    mine, theirs = list(arm.results), list(ref.results)
    unpaired = unpaired_tasks(mine, theirs)
    rate = pass_rate([r for r in mine if r.task_id not in unpaired])
    ref_rate = pass_rate([r for r in theirs if r.task_id not in unpaired])
    delta = round(rate - ref_rate, 4) if rate is not None and ref_rate is not None else None
    samples, alpha, note = settings.sample_count, None, "early-stop level"
    if settings.family_size > 1 and settings.policy in POLICY_ALPHA:
        alpha = POLICY_ALPHA[settings.policy] / settings.family_size
        note = f"Bonferroni share: {settings.family_size} candidates compared"
    if settings.early_stop:  # decide at the look these attempts reach, at its level
        reached = sequential.rounds_done((*arm.attempts, *ref.attempts))
        samples = min(samples, reached) or samples
        alpha = sequential.look_alpha(
            settings.policy, settings.sample_count, settings.pass_k, samples
        )
    if level is not None:
        alpha, note = level
    analysis = analyse(
        mine,
        theirs,
        pass_k=settings.pass_k,
        samples=samples,
        policy=settings.policy,
        min_delta=settings.min_delta,
        margin=settings.margin,
        rates=(rate, ref_rate, delta),
        alpha=alpha,
        alpha_note=note,
    )
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
