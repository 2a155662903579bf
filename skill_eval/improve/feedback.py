"""Delta feedback for the improver: what failed on train in the current version, and the
change that produced it. Not the whole history (OpenKoi's "delta context"), and bounded in size
so a suite with many failures or long prompts cannot blow the improver's context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .evaluation import TaskOutcome

MAX_PROMPT_CHARS = 1500
MAX_DETAILS_CHARS = 800
MAX_FINDINGS = 5
MAX_FINDING_CHARS = 300
MAX_DIFF_CHARS = 4000
MAX_TASKS = 12


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


@dataclass(frozen=True)
class FailingTask:
    task_id: str
    prompt: str
    score: float
    details: str
    findings: tuple[str, ...]
    category: str | None = None


@dataclass(frozen=True)
class Feedback:
    """The improver's whole view of the evaluation. Holds train tasks only."""

    iteration: int
    train_score: float
    failing: tuple[FailingTask, ...]
    omitted_failures: int
    previous_diff: str

    def render(self) -> str:
        """The feedback as the text block the improver prompt embeds."""
        out = [
            f"Iteration {self.iteration}: train pass rate {self.train_score:.2f}; "
            f"{len(self.failing) + self.omitted_failures} train task(s) failed."
        ]
        for f in self.failing:
            out.append(
                f"\n### Failing task `{f.task_id}` (score {f.score:.2f}"
                + (f", category {f.category}" if f.category else "")
                + ")"
            )
            out.append("Prompt:\n" + f.prompt)
            if f.details:
                out.append("Judge details:\n" + f.details)
            if f.findings:
                out.append("Unresolved findings:\n" + "\n".join(f"- {x}" for x in f.findings))
        if self.omitted_failures:
            out.append(f"\n({self.omitted_failures} more failing task(s) not shown)")
        if self.previous_diff:
            out.append("\n### Your previous change (diff)\n" + self.previous_diff)
        return "\n".join(out)


def build_feedback(
    iteration: int,
    train_ids: Sequence[str],
    outcomes: Mapping[str, TaskOutcome],
    prompts: Mapping[str, str],
    previous_diff: str = "",
    categories: Mapping[str, str | None] | None = None,
    max_tasks: int = MAX_TASKS,
) -> Feedback:
    """Feedback over the failing train tasks, lowest score first (then suite order).

    Only ids in `train_ids` are read, so holdout results cannot leak to the improver even if the
    caller passes a summary that holds them. A task with no outcome counts as failed.
    """
    missing = TaskOutcome(False, 0.0, "no result for this task")
    failing = [
        (outcomes.get(t, missing), i, t)
        for i, t in enumerate(train_ids)
        if not outcomes.get(t, missing).passed
    ]
    failing.sort(key=lambda x: (x[0].score, x[1]))
    shown = failing[:max_tasks]
    cats = categories or {}
    items = tuple(
        FailingTask(
            task_id=t,
            prompt=clip(prompts.get(t, ""), MAX_PROMPT_CHARS),
            score=o.score,
            details=clip(o.details, MAX_DETAILS_CHARS),
            findings=tuple(clip(x, MAX_FINDING_CHARS) for x in o.findings[:MAX_FINDINGS]),
            category=cats.get(t),
        )
        for o, _, t in shown
    )
    passed = sum(1 for t in train_ids if outcomes.get(t, missing).passed)
    score = passed / len(train_ids) if train_ids else 0.0
    return Feedback(
        iteration, score, items, len(failing) - len(shown), clip(previous_diff, MAX_DIFF_CHARS)
    )
