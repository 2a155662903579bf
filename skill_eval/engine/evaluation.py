"""`evaluate`: the library entry every mode ends in (`skill-eval run`, the improve loop, a
future review). Any number of labelled arms, in memory (a `Skill` need not exist on disk),
run over one suite with one executor (or each arm with its own); returns each arm's results
and the paired comparison of every other arm against the reference arm (the first, unless
named). Writes no artifact:
`run_evaluation` (engine/conductor.py) resolves paths, calls this and builds the artifact.

    from skill_eval import Arm, Skill, evaluate, load_suite
    result = evaluate(load_suite("suite.yaml"),
                      [Arm("v1", Skill("v1", old_text)), Arm("v2", Skill("v2", new_text))],
                      "mock")
    result.arm("v2").pass_rate, result.comparison("v2").delta
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..backends import Backend
from ..core.execution import delivery_mode
from ..core.model import Arm, Attempt, Suite
from ..errors import ExecutorError, UsageError
from ..executors.base import OFFLINE_EXECUTOR, ExecutorBase, create_executor, get_executor_spec
from ..jail import JailKind
from ..judges.base import JudgeContext, build_judge
from ..plan.run_plan import Execution
from ..stats.decision import Decision
from .jobs import WorkspaceSettings
from .progress import Progress
from .rounds import with_looks, within_budget
from .runner import Journal, Runner, RunSettings, plan_jobs
from .shards import Shard, parse_shard
from .spend import Meter
from .summary import ArmComparison, ArmResult, EvaluationResult, compare, summarise


def evaluate(
    suite: Suite,
    arms: Sequence[Arm],
    executor: ExecutorBase | str | Mapping[str, ExecutorBase | str],
    *,
    decision: Decision | None = None,
    execution: Execution | None = None,
    workspaces: WorkspaceSettings | None = None,
    reference: str | None = None,
    judge_context: JudgeContext | None = None,
    journal: Journal | None = None,
    done: Iterable[Attempt] = (),
    progress: Callable[[Attempt], None] | None = None,
    backend: Backend | None = None,
    stop_when: Callable[[Attempt], bool] | None = None,
    meter: Meter | None = None,
) -> EvaluationResult:
    """Run every arm on every task `decision.sample_count` times, judge, and compare.

    `executor` is an executor or a registered name (built with its defaults), or a mapping
    of every arm's name to its own (arms that compare agents: `executors_for`); call their
    `preflight()` first if you want a clear error before any attempt. An arm's `delivery`
    reaches its executor in each request (engine/requests.py). `reference` names the arm
    the others are compared against (default: the first). `judge_context` defaults to
    the executor's own grader when it has one (else the mock grader) and an in-memory judge
    cache. `journal` records each attempt as it finishes; attempts in `done` that did not end
    in error are kept and not run again (resume). `backend` runs the attempts (default: a
    thread pool of `execution.concurrency`). `decision` (the plan's section: samples, policy,
    margins) decides; `execution` says how attempts run (concurrency, retries, the output cut,
    a shard); `workspaces` which final workspaces are kept, and where. With `decision.budget`
    the attempts run in two rounds, the second placed by the first's outcomes
    (engine/rounds.py); with `decision.early_stop`, in looks that may end the run early.
    `stop_when` is told of each finished attempt: once it says True no new attempt starts.
    `meter` holds the run to its caps (engine/spend.py): every executor charges each model
    reply to it as it comes and sends nothing more once a cap is reached (the attempts it
    stops end as errors of the budget's kind, core/budget.py), and no new attempt starts."""
    decision = decision or Decision()
    execution = execution or Execution()
    reference = _check_arms(arms, reference)
    by_arm = executors_for(arms, executor)
    executor = by_arm[arms[0].name]
    others = {arm: e for arm, e in by_arm.items() if e is not executor}
    if any(e.prepares_requests for e in others.values()):
        raise UsageError("evaluate: a batch executor must run every arm (or none)")
    ctx = judge_context or default_judge_context(suite, executor.name)
    runner = Runner(
        executor,
        {t.id: build_judge(t.judge) for t in suite.tasks},
        ctx,
        journal,
        RunSettings(
            concurrency=execution.concurrency,
            attempts=execution.attempts,
            progress=progress,
            # the run's Progress also shows a sent batch's counts (--batch)
            batch_status=progress.batch if isinstance(progress, Progress) else None,
            workspaces=workspaces or WorkspaceSettings(),
            stop_when=stop_when,
            meter=meter,
        ),
        backend=backend,
        arm_executors=others,
    )
    done = list(done)

    def summary(attempts: list[Attempt]) -> EvaluationResult:
        return summarise(suite.tasks, arms, attempts, decision, reference)

    shard = parse_shard(execution.shard)
    if decision.budget is not None:
        _check_budget(arms, decision, shard)
        return within_budget(runner, arms, suite.tasks, done, decision.budget, reference, summary)
    jobs = plan_jobs(arms, suite.tasks, decision.sample_count)
    if shard is not None:
        jobs = shard.select(jobs, suite.tasks)
    if decision.early_stop and len(arms) == 2:
        return with_looks(runner, jobs, done, decision, summary)
    return summary(runner.run(jobs, done))


def executors_for(
    arms: Sequence[Arm], executor: ExecutorBase | str | Mapping[str, ExecutorBase | str]
) -> dict[str, ExecutorBase]:
    """Each arm's executor: `executor` for every arm, or each arm's own from a mapping of
    arm names. A registered name is built with the skill mode of the arm's delivery and the
    arm's model (each name, mode and model once), so an executor that reads its mode from
    its config alone delivers as the arm says too."""
    if isinstance(executor, ExecutorBase):
        return {arm.name: executor for arm in arms}
    named = executor if isinstance(executor, Mapping) else {a.name: executor for a in arms}
    missing = [arm.name for arm in arms if arm.name not in named]
    if missing:
        raise UsageError(f"evaluate: no executor for arm {missing[0]!r}")
    built: dict[tuple[str, str | None, str | None], ExecutorBase] = {}
    out: dict[str, ExecutorBase] = {}
    for arm in arms:
        given = named[arm.name]
        if isinstance(given, ExecutorBase):
            out[arm.name] = given
            continue
        mode = delivery_mode(arm.delivery) if arm.delivery is not None else None
        key = (given, mode, arm.model)
        if key not in built:
            config = {"skill_mode": mode, "model": arm.model}
            built[key] = create_executor(
                given, {k: v for k, v in config.items() if v is not None} or None
            )
        out[arm.name] = built[key]
    return out


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


def default_judge_context(
    suite: Suite, executor_name: str, jail: JailKind = "auto"
) -> JudgeContext:
    """Model-graded judges use the executor's grader when it has one, else the mock grader;
    judgements are cached in memory for this evaluation; code judges run in `jail`."""
    from ..judges.judge_cache import MemoryJudgeCache
    from ..judges.llm import build_grader

    try:
        can_grade = get_executor_spec(executor_name).grader is not None
    except ExecutorError:  # an executor built by hand, not registered
        can_grade = False
    return JudgeContext(
        suite_dir=suite.directory,
        grader=build_grader(
            executor_name if can_grade else OFFLINE_EXECUTOR, options={"jail": jail}
        ),
        cache=MemoryJudgeCache(),
        jail=jail,
    )


def _check_budget(arms: Sequence[Arm], decision: Decision, shard: Shard | None) -> None:
    """--budget places attempts between a candidate and its baseline, over every task."""
    if len(arms) != 2:
        raise UsageError(
            f"evaluate: a budget needs two arms (a candidate and a reference), got {len(arms)}"
        )
    if decision.early_stop or shard is not None:
        raise UsageError(
            "evaluate: a budget runs every task in two rounds; it takes no early stop or shard"
        )


__all__ = [
    "ArmComparison",
    "ArmResult",
    "EvaluationResult",
    "compare",
    "default_judge_context",
    "evaluate",
    "executors_for",
    "summarise",
]
