"""Trigger tasks as a suite holds them, `{id, query, should_trigger}`, and the Task they load as.

A trigger task has no prompt and no judge of its own: the query is what the agent is asked,
and the implied judge passes when the arm's skill was invoked exactly when `should_trigger`
says (see triggers/judge.py). Its turn limit defaults to DEFAULT_MAX_TURNS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.model import DEFAULT_TIMEOUT_SECONDS, ExecutionResult, Task

if TYPE_CHECKING:  # executors/ is not imported to validate a suite
    from ..executors.base import SkillMode

# Enough turns to look around before picking a skill up, few enough to stay cheap.
DEFAULT_MAX_TURNS = 8
# Fields an ordinary task has that make no sense on a trigger task.
_NOT_ALLOWED = {
    "prompt": "the query is what the agent is asked",
    "judge": "its judge is implied (the skill is invoked exactly when should_trigger is true)",
    "files": "the attempt's project holds only the skill under test",
    "allowed_tools": "the tools are fixed so that arms compare (Skill, Read, Glob, Grep)",
}


def implied_judge(should_trigger: bool) -> dict[str, Any]:
    """The judge config a trigger task carries, so every generic path (validation, rejudge,
    reports) sees a real judge type; the runner judges it with the arm's skill name."""
    return {"type": "skill-used", "expect": bool(should_trigger)}


def trigger_task(index: int, data: Mapping[str, Any]) -> Task:
    """The Task of a validated trigger task mapping."""
    query = str(data["query"])
    should = bool(data["should_trigger"])
    return Task(
        id=data["id"],
        prompt=query,
        judge=implied_judge(should),
        timeout_seconds=float(data.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
        description=data.get("description") or "",
        category=data.get("category"),
        index=index,
        max_turns=data.get("max_turns"),
        query=query,
        should_trigger=should,
    )


def trigger_task_problems(task: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for every field a trigger task must not have. The schema checks the
    types and that query and should_trigger come together."""
    return [
        (key, f"not allowed in a trigger task (one with query and should_trigger): {why}")
        for key, why in _NOT_ALLOWED.items()
        if key in task
    ]


def skill_mode_for(task: Task, configured: SkillMode) -> SkillMode:
    """How an attempt gets its skill: a trigger task always installs it under
    `.claude/skills/<name>/` (whether Claude Code picks it up from there is what it measures)."""
    return "installed" if task.is_trigger_task else configured


def trigger_outcome(result: ExecutionResult) -> ExecutionResult:
    """A trigger attempt's execution result as the runner must count it. A run that used up
    its turns without invoking the skill has ended: judged (not triggered, unless the
    transcript shows the invocation). Anything else that went wrong (a timeout, a crash, an
    API error such as 529) stays an error, retried and reported, never "did not trigger"."""
    if (
        result.error
        and result.meta.get("subtype") == "error_max_turns"
        and result.meta.get("api_error_status") is None
    ):
        return replace(
            result,
            error=None,
            retryable=False,
            output_caused=False,
            meta={**result.meta, "ended": "max turns"},
        )
    if result.output_caused:
        return replace(result, output_caused=False)
    return result
