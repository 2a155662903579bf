"""Trigger tasks as a suite holds them, `{id, query, should_trigger}`, and the Task they load as.

A trigger task has no prompt and no judge of its own: the query is what the agent is asked,
and the implied judge (`skill-triggered`, judges/triggered.py) passes when the arm's skill was
invoked exactly when `should_trigger` says. How it runs travels with the task
(`TRIGGER_EXECUTION`), so no executor knows what a trigger task is: the skill installed
whatever --skill-mode says, the read-only tools with Skill, DEFAULT_MAX_TURNS unless the task
or --max-turns sets a limit, and a stop as soon as the skill is invoked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.execution import ExecutionSettings
from ...core.model import DEFAULT_TIMEOUT_SECONDS, Task

# Enough turns to look around before picking a skill up, few enough to stay cheap.
DEFAULT_MAX_TURNS = 8
# The same tools in both arms, so that they compare: load the skill, read, change nothing.
TRIGGER_TOOLS = ("Skill", "Read", "Glob", "Grep")
TRIGGER_EXECUTION = ExecutionSettings(
    default_max_turns=DEFAULT_MAX_TURNS,
    tools=TRIGGER_TOOLS,
    skill_mode="installed",  # whether Claude Code picks it up from there is what is measured
    stop_on_skill=True,
)
# Fields an ordinary task has that make no sense on a trigger task.
_NOT_ALLOWED = {
    "prompt": "the query is what the agent is asked",
    "judge": "its judge is implied (the skill is invoked exactly when should_trigger is true)",
    "files": "the attempt's project holds only the skill under test",
    "allowed_tools": "the tools are fixed so that arms compare (Skill, Read, Glob, Grep)",
}


def implied_judge(should_trigger: bool) -> dict[str, Any]:
    """The judge config a trigger task carries: a registered type like any other, judged
    through the judge registry on every path (a run, rejudge, reports)."""
    return {"type": "skill-triggered", "should_trigger": bool(should_trigger)}


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
        execution=TRIGGER_EXECUTION,
    )


def trigger_task_problems(task: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for every field a trigger task must not have. The schema checks the
    types and that query and should_trigger come together."""
    return [
        (key, f"not allowed in a trigger task (one with query and should_trigger): {why}")
        for key, why in _NOT_ALLOWED.items()
        if key in task
    ]
