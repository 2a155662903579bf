"""What an executor is asked for one job: `request_of`, the one place a task, its kind's
execution settings and an arm's delivery become an ExecutionRequest (the runner's jobs, and a
batch-mode executor's `prepare`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.execution import delivery_mode, nudged
from ..core.model import ExecutionRequest

if TYPE_CHECKING:
    from .jobs import AttemptJob


def request_of(job: AttemptJob, workspace: Path | None = None) -> ExecutionRequest:
    """What the executor is asked for one job (in `workspace`, for executors that use one),
    with how its task must run (`Task.execution_settings`: its kind's, its turns and tools)
    and how its arm delivers the skill (`Arm.delivery`: the skill mode, unless the task's
    kind fixes one; a nudged arm's prompt ends with the nudge naming the skill)."""
    task, settings, arm = job.task, job.task.execution_settings(), job.arm
    mode = delivery_mode(arm.delivery) if arm.delivery is not None else None
    if mode is not None and settings.skill_mode is None:
        settings = replace(settings, skill_mode=mode)
    if arm.delivery == "nudged" and arm.skill is not None:
        task = replace(task, prompt=nudged(task.prompt, arm.skill.name))
    return ExecutionRequest(
        task=task,
        arm=arm.name,
        attempt=job.index,
        skill=arm.skill,
        timeout_seconds=task.timeout_seconds,
        workspace=workspace,
        execution=settings,
    )


__all__ = ["request_of"]
