"""`skill-triggered`, the implied judge of a trigger task (triggers/tasks.py): passed when the
arm's skill was invoked (a `Skill` call naming it, or a `Read` of its installed SKILL.md:
transcript.skill_invocations, field-exact) exactly when the task says it should be. A failure
names the query.

Which skill counts comes from the attempt's record (`work.meta["trigger_skill"]`, written by
the runner from the arm of an attempt that watched for its skill, `stop_on_skill`), so a
rejudge of the journal judges the same way. Registered like any other judge; the suite gives
it to trigger tasks only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.execution import SKILL_META
from ...core.model import JudgeResult, Task
from ...core.work import Work
from ...executors.catalog import skill_invocations
from ..base import JudgeContext, JudgeSpec
from .role import TRIGGERS


class SkillTriggeredJudge:
    """Judges one trigger attempt that ran to its end (or stopped at the invocation)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.should = bool(config["should_trigger"])

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        skill = work.meta.get(SKILL_META)
        if not isinstance(skill, str) or not skill:
            return JudgeResult.failure(
                f"trigger task {task.id!r}: the attempt does not record which skill its arm "
                "installed"
            )
        triggered = bool(skill_invocations(work.transcript, skill, plugin_names=False))
        should = self.should
        query = task.query if task.query is not None else task.prompt
        passed = triggered == should
        if passed:
            details = (
                f"skill {skill!r} was invoked for query {query!r}, as it should be"
                if triggered
                else f"skill {skill!r} was not invoked for query {query!r}, as it should not be"
            )
        elif should:
            details = (
                f"query {query!r} should trigger skill {skill!r}, but the skill was not invoked"
            )
        else:
            details = (
                f"query {query!r} should not trigger skill {skill!r}, but the skill was invoked"
            )
        return JudgeResult(
            passed=passed,
            score=1.0 if passed else 0.0,
            details=details,
            data={"triggered": triggered, "should_trigger": should, "skill": skill},
        )


SKILL_TRIGGERED_SPEC = JudgeSpec(
    type="skill-triggered",
    summary="trigger tasks' implied judge: the arm's skill was invoked exactly when it should be",
    schema={
        "type": "object",
        "required": ["type", "should_trigger"],
        "properties": {
            "type": {"const": "skill-triggered"},
            "should_trigger": {"type": "boolean", "errorMessage": "must be true or false"},
        },
        "additionalProperties": False,
    },
    build=SkillTriggeredJudge,
    role=TRIGGERS,
)
