"""The original evaluator's standalone output, kept for the pipeline that reads it
(references/pipeline.md): `task_results` and four counts in `evaluation`, and the failure trace
`<state-root>/traces/<run_id>-trace.json` a standalone `fail` leaves for its generator."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.model import Task
from ..core.paths import atomic_write_text, safe_component
from ..stats.results import TaskResult

TRACE_TEXT_CHARS = 200  # the original cut each failed task's details and error here
MODEL_GRADED = ("llm-rubric", "rubric")


def standalone_fields(
    candidate: Sequence[TaskResult],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The candidate arm as the original's standalone artifact gave it: `task_results` (one
    entry per task; `error` is "" when there was none, as there) and `total_tasks`, `passed`,
    `failed`, `pass_rate` for `evaluation`. A task whose every attempt ended in error counts
    as failed here (execution_pass_rate leaves it out); pass_rate is null when no task ran."""
    results = [
        {
            "task_id": r.task_id,
            "passed": r.passed,
            "score": round(r.score, 4),
            "details": r.details,
            "duration_ms": r.duration_ms,
            "error": r.error or "",
        }
        for r in candidate
    ]
    passed = sum(r.passed for r in candidate)
    counts = {
        "total_tasks": len(candidate),
        "passed": passed,
        "failed": len(candidate) - passed,
        "pass_rate": round(passed / len(candidate), 4) if candidate else None,
    }
    return results, counts


# What the trace a non-passing standalone run writes is for, said beside its path.
TRACE_IS = (
    "the failed tasks and the scores before and after, for an improvement pipeline's generator, "
    "`propose.py --trace`, in the original evaluator's format: references/pipeline.md"
)


def write_trace(
    data: Mapping[str, Any], tasks: Sequence[Task], state_root: Path, min_pass_rate: float
) -> Path | None:
    """Write the failure trace of a standalone artifact whose verdict is `fail`; its path, or
    None when there is none to write. Fields as the original wrote them: `scores_before` is the
    bar the skill was measured against (the baseline's pass rate; --min-pass-rate without a
    baseline), `scores_after` the skill's own pass rate."""
    evaluation = data["evaluation"]
    if data["manifest"]["mode"] != "standalone" or evaluation["verdict"] != "fail":
        return None
    failed = [
        {
            "task_id": r["task_id"],
            "passed": r["passed"],
            "score": r["score"],
            "details": r["details"][:TRACE_TEXT_CHARS],
            "error": r["error"][:TRACE_TEXT_CHARS],
        }
        for r in data["task_results"]
        if not r["passed"]
    ]
    bar = evaluation["baseline_pass_rate"]
    trace = {
        "candidate_id": f"standalone-{data['task_suite_skill_id']}",
        "reason": evaluation.get("reason") or "the candidate failed",
        "failed_tasks": failed,
        "failed_dimension": "execution",
        "failed_category": failed_category(failed, {t.id: t for t in tasks}),
        "scores_before": {"pass_rate": min_pass_rate if bar is None else bar},
        "scores_after": {"pass_rate": evaluation["execution_pass_rate"]},
        "artifact": data["truth_anchor"],
    }
    path = state_root / "traces" / f"{safe_component(data['run_id'])}-trace.json"
    atomic_write_text(path, json.dumps(trace, indent=2, ensure_ascii=False) + "\n")
    return path


def failed_category(failed: Sequence[Mapping[str, Any]], tasks: Mapping[str, Task]) -> str:
    """The original's three categories: `accuracy` when a model-graded judge failed a task,
    else `efficiency` when a task timed out, else `execution`."""
    types = {str(tasks[f["task_id"]].judge.get("type")) for f in failed if f["task_id"] in tasks}
    if types & set(MODEL_GRADED):
        return "accuracy"
    if any("timeout" in f["error"].lower() or "timed out" in f["error"].lower() for f in failed):
        return "efficiency"
    return "execution"
