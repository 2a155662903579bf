"""The implied judge of a trigger task: passed when the arm's skill was invoked (a `Skill` call
naming it, or a `Read` of its installed SKILL.md: transcript.skill_invocations, field-exact)
exactly when the task says it should be. A failure names the query.

The skill's name comes from the attempt's record (`meta["trigger_skill"]`, written by the
runner from the arm it ran), so a rejudge of the journal judges the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.transcript import skill_invocations
from ..core.work import ToolCall

SKILL_META = "trigger_skill"  # Attempt.meta key: the name of the skill the arm installed


def judge_trigger(
    task: Task, transcript: Sequence[ToolCall], meta: Mapping[str, Any]
) -> JudgeResult:
    """Judge one trigger attempt that ran to its end (or stopped at the invocation)."""
    skill = meta.get(SKILL_META)
    if not isinstance(skill, str) or not skill:
        return JudgeResult.failure(
            f"trigger task {task.id!r}: the attempt does not record which skill its arm installed"
        )
    triggered = bool(skill_invocations(transcript, skill, plugin_names=False))
    should = bool(task.should_trigger)
    query = task.query if task.query is not None else task.prompt
    passed = triggered == should
    if passed:
        details = (
            f"skill {skill!r} was invoked for query {query!r}, as it should be"
            if triggered
            else f"skill {skill!r} was not invoked for query {query!r}, as it should not be"
        )
    elif should:
        details = f"query {query!r} should trigger skill {skill!r}, but the skill was not invoked"
    else:
        details = f"query {query!r} should not trigger skill {skill!r}, but the skill was invoked"
    return JudgeResult(
        passed=passed,
        score=1.0 if passed else 0.0,
        details=details,
        data={"triggered": triggered, "should_trigger": should, "skill": skill},
    )


def triggered_of(judge: JudgeResult | None) -> bool | None:
    """Whether a judged trigger attempt triggered; None when it was not judged as one."""
    if judge is None or judge.error is not None:
        return None
    value = judge.data.get("triggered") if judge.data else None
    return value if isinstance(value, bool) else None
