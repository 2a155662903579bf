"""The run's judging, from the plan's `judging` section: which grader model-graded judges
call (`judge_backend_name`), the judge cache they share, and closing that cache with its
counts for the artifact. Used by a run, by `rejudge` and by fingerprints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..evaluators.registry import evaluator_sources
from ..executors.catalog import is_offline
from ..judges.base import JudgeContext
from ..judges.judge_cache import JudgeCache, MemoryJudgeCache
from ..judges.llm import build_grader
from ..plan.checks import judge_executor_name
from ..plan.run_plan import RunPlan

JUDGE_REQUESTS_NAME = "judge-requests.jsonl"  # what an offline grader was asked, in a run dir


def judge_backend_name(plan: RunPlan) -> str:
    """The grader model-graded judges use: --judge-executor, else the executor's own when it
    can grade (a plugin executor that is gone cannot: rejudge still judges), else the mock
    grader (always the mock under --mock)."""
    return judge_executor_name(plan.executor.name, plan.judging)


def judge_context(
    plan: RunPlan, suite_dir: Path, state_root: Path, run_dir: Path | None = None
) -> JudgeContext:
    """Where model-graded judges send their calls and the judge cache they share (off with
    --no-judge-cache; in memory for an offline grader, the mock's; else on disk, by default
    under the state root). An offline grader records its requests in the run directory."""
    backend = judge_backend_name(plan)
    offline = is_offline(backend)  # ExecutorSpec.offline: fixed answers, not worth keeping
    judging = plan.judging
    cache: JudgeCache | MemoryJudgeCache | None = None
    if not judging.cache:
        cache = None
    elif offline:
        cache = MemoryJudgeCache()
    else:
        cache = JudgeCache(
            Path(judging.cache_dir) if judging.cache_dir else state_root / "judge-cache"
        )
    options = {
        "claude_bin": judging.grader_options.get("claude_bin"),
        "evaluators_dirs": list(judging.evaluators_dirs),
        "project_dir": str(Path.cwd()),
        "jail": plan.execution.jail,  # a claude-cli grader runs Claude Code jailed too
    }
    record = run_dir / JUDGE_REQUESTS_NAME if offline and run_dir else None
    grader = build_grader(backend, options={**options, "record": record})
    return JudgeContext(
        suite_dir=suite_dir,
        judge_model=judging.model,
        default_model=judging.default_model,
        cache=cache,
        backend_options=options,
        grader=grader,
        jail=plan.execution.jail,
    )


def evaluator_dirs(plan: RunPlan) -> tuple[Path, ...]:
    """The evaluator directories rubric judges read (--evaluators-dir and the defaults), for
    fingerprints: a changed evaluator changes results."""
    sources = evaluator_sources(plan.judging.evaluators_dirs)
    return tuple(s.path for s in sources if s.path is not None)


def close_judge_cache(ctx: JudgeContext) -> dict[str, Any]:
    """Close the judge cache; its hit and miss counts for the artifact."""
    if ctx.cache is None or ctx.cache.directory is None:  # off, or in memory (--mock)
        return {}
    ctx.cache.close()
    return {"judge_cache": {"directory": str(ctx.cache.directory), **ctx.cache.stats()}}


__all__ = [
    "JUDGE_REQUESTS_NAME",
    "close_judge_cache",
    "evaluator_dirs",
    "judge_backend_name",
    "judge_context",
]
