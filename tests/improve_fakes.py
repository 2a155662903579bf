"""Fakes for the improve loop's tests: a pure-python evaluate_fn on the rule-following mock model
and a contains-style check (no runner), scripted improvers, and a manual clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from skill_eval.core.model import Task
from skill_eval.executors.mock_model import rule_following_output, rule_line
from skill_eval.improve import EvalSummary, Feedback, Proposal, TaskOutcome

CATEGORIES = ("alpha", "beta", "gamma", "delta")


def make_tasks(categories: Sequence[str] = CATEGORIES, per_category: int = 3) -> list[Task]:
    """per_category tasks in each category; each expects two words naming it."""
    tasks = []
    for c in categories:
        for i in range(per_category):
            tid = f"{c}-{i}"
            tasks.append(
                Task(
                    id=tid,
                    prompt=f"Explain {tid}.",
                    category=c,
                    index=len(tasks),
                    judge={"type": "contains", "expected": [f"{c}-term", f"word{i}"]},
                )
            )
    return tasks


def skill_with_rules(*keys: str) -> dict[str, str]:
    body = "---\nname: demo\n---\n# Demo skill\n\nAnswer precisely.\n"
    if keys:
        body += "\n" + "\n".join(rule_line(k) for k in keys) + "\n"
    return {"SKILL.md": body}


def contains_check(output: str, expected: Sequence[str]) -> tuple[bool, float]:
    found = sum(1 for e in expected if e.lower() in output.lower())
    return found == len(expected), found / len(expected)


@dataclass
class RuleFollowingEvaluator:
    """evaluate_fn: the mock model answers each task, a contains check judges it; an output
    judged before (same task, same text) reuses its judgement, as the cache would."""

    tasks: Sequence[Task]
    tokens_per_task: int = 100
    cost_per_task: float = 0.01
    on_call: Callable[[], None] | None = None
    calls: list[tuple[str, ...]] = field(default_factory=list)
    judged: set[tuple[str, str]] = field(default_factory=set)

    def __call__(self, files: Mapping[str, str], task_ids: Sequence[str]) -> EvalSummary:
        self.calls.append(tuple(task_ids))
        if self.on_call:
            self.on_call()
        by_id = {t.id: t for t in self.tasks}
        per_task = {}
        reused = 0
        for tid in task_ids:
            task = by_id[tid]
            expected = list(task.judge["expected"])
            out = rule_following_output(files["SKILL.md"], tid, task.category, expected)
            reused += (tid, out) in self.judged
            self.judged.add((tid, out))
            passed, score = contains_check(out, expected)
            missing = [e for e in expected if e.lower() not in out.lower()]
            per_task[tid] = TaskOutcome(
                passed,
                score,
                f"missing: {missing}" if missing else "ok",
                tuple(f"does not mention {m}" for m in missing),
            )
        n = len(task_ids)
        return EvalSummary(per_task, n * self.tokens_per_task, n * self.cost_per_task, reused)


class ScriptedImprover:
    """Returns a fixed SKILL.md per call (the last one repeats); records what it was given."""

    def __init__(
        self,
        skills: Sequence[str],
        tokens: int = 0,
        cost: float = 0.0,
        extra_files: Mapping[str, str] | None = None,
    ) -> None:
        self.skills = list(skills)
        self.tokens, self.cost = tokens, cost
        self.extra = dict(extra_files or {})
        self.feedback: list[Feedback] = []
        self.learnings: list[tuple[str, ...]] = []

    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal:
        self.feedback.append(feedback)
        self.learnings.append(tuple(learnings))
        text = self.skills[min(len(self.feedback), len(self.skills)) - 1]
        return Proposal({"SKILL.md": text, **self.extra}, "scripted", self.tokens, self.cost)


class IdRuleImprover:
    """Overfits: adds a rule for each failing train task by its id, so train tasks pass but no
    other task of the category does."""

    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal:
        rules = "\n".join(rule_line(f.task_id) for f in feedback.failing)
        return Proposal({"SKILL.md": skill_files["SKILL.md"] + "\n" + rules + "\n"})


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
