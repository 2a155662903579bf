"""From attempts to per-task results: what each arm achieved on each task."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Attempt, Status, Task
from .estimates import TaskStats, task_stats


@dataclass(frozen=True)
class TaskResult:
    """One arm on one task. `passed` keeps its compatibility meaning: some attempt among the
    first k that did not end in error passed. `status` is "error" when every attempt did."""

    task_id: str
    passed: bool
    status: Status
    score: float
    details: str
    duration_ms: int
    error: str | None
    attempts: tuple[Attempt, ...]
    stats: TaskStats

    @property
    def outcomes(self) -> list[Status]:
        return [a.status for a in self.attempts]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "passed": self.passed,
            "score": round(self.score, 4),
            "details": self.details,
            "duration_ms": self.duration_ms,
            "error": self.error,
            "status": self.status,
            "passes": sum(a.status == "passed" for a in self.attempts),
            "failures": sum(a.status == "failed" for a in self.attempts),
            "errors": sum(a.status == "error" for a in self.attempts),
            "stats": self.stats.to_dict(),
            "attempts": [attempt_summary(a) for a in self.attempts],
        }


def attempt_summary(attempt: Attempt) -> dict[str, Any]:
    data = attempt.to_dict()
    del data["arm"], data["task_id"]
    return data


def task_result(task: Task, attempts: Sequence[Attempt], pass_k: int) -> TaskResult:
    """Aggregate one arm's attempts at one task (any order; sorted by index here)."""
    ordered = sorted(attempts, key=lambda a: a.index)
    judged = [a for a in ordered if a.status != "error"]
    first_k = judged[:pass_k]
    duration = sum(a.duration_ms for a in ordered)
    summary = task_stats([a.status for a in ordered], pass_k)
    if not judged:
        last_error = ordered[-1].error if ordered else "not run"
        return TaskResult(
            task.id,
            False,
            "error",
            0.0,
            last_error or "",
            duration,
            last_error,
            tuple(ordered),
            summary,
        )
    best = max(first_k, key=lambda a: (a.status == "passed", a.judge.score if a.judge else 0))
    passed = best.status == "passed"
    details = best.judge.details if best.judge else ""
    return TaskResult(
        task.id,
        passed,
        "passed" if passed else "failed",
        best.judge.score if best.judge else 0.0,
        details,
        duration,
        None,
        tuple(ordered),
        summary,
    )


def arm_results(
    tasks: Sequence[Task], attempts: Mapping[str, Sequence[Attempt]], pass_k: int
) -> list[TaskResult]:
    return [task_result(task, attempts.get(task.id, ()), pass_k) for task in tasks]


def pass_rate(results: Sequence[TaskResult]) -> float | None:
    """Passed tasks / tasks that could be evaluated; None when none could."""
    judged = [r for r in results if r.status != "error"]
    if not judged:
        return None
    return round(sum(r.passed for r in judged) / len(judged), 4)


def unpaired_tasks(candidate: Sequence[TaskResult], baseline: Sequence[TaskResult]) -> list[str]:
    """Tasks that could not be judged in one arm or the other (every attempt in error)."""
    judged_c = {r.task_id for r in candidate if r.status != "error"}
    judged_b = {r.task_id for r in baseline if r.status != "error"}
    return [r.task_id for r in candidate if r.task_id not in judged_c & judged_b]


def errored_in(
    candidate: Sequence[TaskResult], baseline: Sequence[TaskResult]
) -> dict[str, list[str]]:
    """Tasks in error by where: "candidate" only, "baseline" only, or "both" arms."""
    bad_c = {r.task_id for r in candidate if r.status == "error"}
    bad_b = {r.task_id for r in baseline if r.status == "error"}
    order = [r.task_id for r in candidate] + [r.task_id for r in baseline]
    seen = list(dict.fromkeys(order))
    return {
        "candidate": [t for t in seen if t in bad_c - bad_b],
        "baseline": [t for t in seen if t in bad_b - bad_c],
        "both": [t for t in seen if t in bad_c & bad_b],
    }


def cause_line(text: str | None) -> str:
    """The line that explains a judge message or error, on one line: the last line naming an
    error (pytest output and tracebacks end with the cause, e.g. "ModuleNotFoundError: No
    module named 'pytest'"), else the meaningful lines joined."""
    lines = [ln.strip() for ln in (text or "").splitlines()]
    noise = ("=", "-", "_", "short test summary", "FAILED ", "ERROR ", "!")
    meaningful = [ln for ln in lines if ln and not ln.startswith(noise)]
    for line in reversed(meaningful):
        if "Error" in line or "error:" in line.lower():
            return line.removeprefix("E ").strip()
    return " ".join(meaningful)


def first_failures(arms: Mapping[str, Sequence[TaskResult]]) -> list[str]:
    """Per arm, the first task that failed or errored with what its judge said."""
    found = []
    for arm, results in arms.items():
        for r in results:
            if not r.passed and (r.details or r.error):
                found.append(f"{arm} {r.task_id}: {cause_line(r.error or r.details)}")
                break
    return found
