"""The improve loop's evaluation on top of `skill_eval.evaluate`, never a copy of it:
`evaluate_fn` and `compare_fn` (the shapes of evaluation.py) for a suite and an executor.

A skill version is its files (path in the folder -> text). SKILL.md alone needs nothing on disk;
a version with other files gets a private temporary folder for the attempt's duration, since
executors deliver those files from a folder (installed mode, read_skill_file).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from ..core.model import Arm, Skill, Suite
from ..engine.evaluation import default_judge_context, evaluate
from ..engine.spend import Meter
from ..executors.base import ExecutorBase, create_executor
from ..judges.base import JudgeContext
from ..plan.run_plan import Execution
from ..skills.tree import SKILL_FILE, tree_sha256
from ..stats.decision import Decision
from .evaluation import CompareFn, EvalSummary, EvaluateFn, TaskOutcome
from .folders import write_version


@contextmanager
def skill_from_files(files: Mapping[str, str], name: str = "skill") -> Iterator[Skill]:
    """The skill these files make; its folder (only when there is more than SKILL.md) is
    deleted when the block ends. Paths are checked (improver.check_path): none leaves it."""
    content = files.get(SKILL_FILE, "")
    if set(files) <= {SKILL_FILE}:
        yield Skill(name, content, None, "in memory", tree_sha256(None, content))
        return
    with tempfile.TemporaryDirectory(prefix="skill-eval-version-") as tmp:
        folder = write_version(files, Path(tmp) / name)
        yield Skill(name, content, folder, str(folder / SKILL_FILE), tree_sha256(folder, content))


def _only(suite: Suite, task_ids: Sequence[str]) -> Suite:
    wanted = set(task_ids)
    return replace(suite, tasks=tuple(t for t in suite.tasks if t.id in wanted))


def make_evaluate_fn(
    suite: Suite,
    executor: ExecutorBase | str,
    *,
    decision: Decision | None = None,
    execution: Execution | None = None,
    judge_context: JudgeContext | None = None,
    meter: Meter | None = None,
) -> EvaluateFn:
    """`evaluate_fn(skill_files, task_ids) -> EvalSummary` over `suite` with `executor`, the
    plan's `decision` and `execution` sections (default: one attempt a task) and the
    command's `meter` (engine/spend.py). The judge context (and so its judge cache) is
    shared by every call."""
    runner = create_executor(executor) if isinstance(executor, str) else executor
    ctx = judge_context or default_judge_context(suite, runner.name)

    def evaluate_fn(skill_files: Mapping[str, str], task_ids: Sequence[str]) -> EvalSummary:
        # Reused = the judge cache's hits during this call (model-graded judges: an output
        # judged before is not sent again). Calls are sequential, so the delta is ours.
        hits = getattr(ctx.cache, "hits", 0)
        with skill_from_files(skill_files) as skill:
            result = evaluate(
                _only(suite, task_ids),
                [Arm("version", skill)],
                runner,
                decision=decision,
                execution=execution,
                judge_context=ctx,
                meter=meter,
            )
        arm = result.arm("version")
        per_task = {r.task_id: TaskOutcome(r.passed, r.score, r.details) for r in arm.results}
        warnings = tuple(f"{a.task_id} attempt {a.index}: {a.error}" for a in arm.errors)
        return EvalSummary(
            per_task,
            tokens=arm.usage.input_tokens + arm.usage.output_tokens,
            cost_usd=arm.cost_usd,
            judgements=len(arm.attempts),
            reused_judgements=getattr(ctx.cache, "hits", 0) - hits,
            warnings=warnings,
        )

    return evaluate_fn


def make_compare_fn(
    suite: Suite,
    executor: ExecutorBase | str,
    *,
    decision: Decision | None = None,
    execution: Execution | None = None,
    judge_context: JudgeContext | None = None,
    meter: Meter | None = None,
    stopped: Callable[[], str | None] = lambda: None,
) -> CompareFn:
    """`compare_fn(best, original, task_ids, family) -> (passed, reason)`: the paired
    comparison and policy of `skill-eval run` on new attempts at `task_ids`, the original
    skill as the reference arm, at the policy's level / `family` (the versions the best was
    picked from: Decision.family_size). A comparison the meter cut short (`stopped` says
    why) never passes."""
    runner = create_executor(executor) if isinstance(executor, str) else executor
    ctx = judge_context or default_judge_context(suite, runner.name)
    base = decision or Decision()

    def compare_fn(
        best: Mapping[str, str],
        original: Mapping[str, str],
        task_ids: Sequence[str],
        family: int = 1,
    ) -> tuple[bool, str]:
        if (why := stopped()) is not None:  # nothing new starts once the budget is spent
            return False, f"not confirmed: the budget ran out ({why})"
        with skill_from_files(original, "original") as old, skill_from_files(best, "best") as new:
            result = evaluate(
                _only(suite, task_ids),
                [Arm("original", old), Arm("best", new)],
                runner,
                decision=replace(base, family_size=max(1, family)),
                execution=execution,
                judge_context=ctx,
                meter=meter,
            )
        if (why := stopped()) is not None:
            return False, f"not confirmed: the budget ran out ({why})"
        comparison = result.comparison("best")
        policy = comparison.analysis.policy
        return bool(comparison.passed), policy.reasoning if policy else "nothing to compare"

    return compare_fn
