"""The shapes the loop's injected evaluation speaks: what one suite pass over a skill version
returned, and the final best-vs-original comparison. A thin adapter maps `evaluate(...)` to these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaskOutcome:
    """One task's judged result for one skill version. `findings` are unresolved rubric items."""

    passed: bool
    score: float
    details: str = ""
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvalSummary:
    """One evaluation of one skill version over some tasks.

    `judgements` is how many judgements were made or reused (defaults to one per task);
    `reused_judgements` how many of them came from the cache (identical output hash).
    """

    per_task: Mapping[str, TaskOutcome]
    tokens: int = 0
    cost_usd: float = 0.0
    reused_judgements: int = 0
    judgements: int | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def judgement_count(self) -> int:
        return len(self.per_task) if self.judgements is None else self.judgements

    def pass_rate(self, task_ids: Sequence[str]) -> float | None:
        """Passed / tasks over `task_ids` (a task missing from the summary counts as failed);
        None when there are no tasks."""
        if not task_ids:
            return None
        passed = sum(1 for t in task_ids if (o := self.per_task.get(t)) is not None and o.passed)
        return passed / len(task_ids)


# evaluate_fn(skill_files, task_ids) -> EvalSummary. skill_files maps a path relative to the
# skill folder ("SKILL.md", "scripts/x.py") to its text.
EvaluateFn = Callable[[Mapping[str, str], Sequence[str]], EvalSummary]
# compare_fn(best_files, original_files, holdout_ids, family) -> (passed, reason): the final
# gate, e.g. the paired statistics and --policy of `skill-eval run` on fresh samples of the
# holdout tasks. `family` is how many versions the best was picked from: the gate holds its
# false-accept rate over all of them (at the policy's level / family, stats/family.py).
CompareFn = Callable[[Mapping[str, str], Mapping[str, str], Sequence[str], int], tuple[bool, str]]
