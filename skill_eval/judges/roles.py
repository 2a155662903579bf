"""What a judge type adds to a run besides judging each attempt, declared on its spec
(`JudgeSpec.role`): refusals before any call (an executor or arms that cannot measure it), tasks
rated apart from the pass rates, an artifact section with a guard on the verdict, and figures
per arm of an --arm run. The engine asks the roles of a suite's tasks (`roles_of`) and never
what kind a task is; a judge without a role adds nothing. The trigger tasks' judge is the
built-in one with a role (judges/triggers/).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.model import Arm, Attempt, Task
from ..stats.decision import Decision
from ..stats.verdict import Verdict
from .base import REGISTRY, get_judge_spec

if TYPE_CHECKING:
    from ..executors.base import ExecutorBase


@dataclass(frozen=True)
class ArmsShape:
    """The arms a run compares, as the roles' refusals see them: the listed arms of an --arm
    run (empty for a two-arm run), the baseline's kind, and the flags that decide from pass
    rates as the samples come in."""

    listed: Sequence[Arm]
    baseline_kind: str
    early_stop: bool
    budget: bool


class JudgeRole:
    """A judge type's part in a run (see the module docstring). Every hook has a default that
    adds nothing, so a role overrides only what it changes."""

    key: str = ""  # its artifact section, and its entry in each arm of an --arm run

    def covers(self, task: Task) -> bool:
        """Whether `task` is one of this role's (judged by its type at the top level)."""
        return False

    def rated_apart(self) -> bool:
        """Whether its tasks are left out of the pass rates of a suite that mixes them with
        others (their figures are the role's section)."""
        return False

    def delivery_mode(self, tasks: Sequence[Task], configured: str) -> str:
        """The skill mode the run's warnings describe, given --skill-mode `configured`."""
        return configured

    def executor_problem(
        self, executor: ExecutorBase, name: str, tasks: Sequence[Task]
    ) -> str | None:
        """Why executor `name` cannot run these tasks, or None."""
        return None

    def check_arms(self, tasks: Sequence[Task], arms: ArmsShape) -> None:
        """A UsageError for arms that cannot measure these tasks."""

    def section(
        self,
        tasks: Sequence[Task],
        attempts: Sequence[Attempt],
        arms: Sequence[str],
        decision: Decision,
    ) -> dict[str, Any] | None:
        """The artifact section `key` (None: none); `arms` candidate first."""
        return None

    def guard(self, verdict: Verdict, section: Mapping[str, Any] | None) -> Verdict:
        """The verdict once this role's section has had its say."""
        return verdict

    def arm_figures(self, tasks: Sequence[Task], attempts: Sequence[Attempt], samples: int) -> Any:
        """One arm's entry `key` of an --arm run, from that arm's attempts."""
        return None

    def compare_arms(self, arm: Any, reference: Any, decision: Decision) -> Any:
        """One comparison's entry `key`: an arm's figures against the reference's."""
        return None


def _role_of(judge: Any) -> JudgeRole | None:
    kind = judge.get("type") if isinstance(judge, Mapping) else None
    return get_judge_spec(kind).role if isinstance(kind, str) else None


def roles_of(tasks: Sequence[Task]) -> list[JudgeRole]:
    """The distinct roles of the judge types `tasks` use at their top level, in order."""
    found: dict[int, JudgeRole] = {}
    for task in tasks:
        role = _role_of(task.judge)
        if role is not None:
            found.setdefault(id(role), role)
    return list(found.values())


def declared_roles() -> list[JudgeRole]:
    """Every registered judge type's role: the sections an --arm run's entries name (each
    null when the suite has none of its tasks). Imports every judge module."""
    found: dict[int, JudgeRole] = {}
    for name in REGISTRY.names():
        spec = REGISTRY.get(name)
        if spec is not None and spec.role is not None:
            found.setdefault(id(spec.role), spec.role)
    return list(found.values())


def rated_tasks(tasks: Sequence[Task]) -> tuple[Task, ...]:
    """The tasks pass rates cover: all but those of roles rated apart, unless that leaves
    none (a suite of trigger tasks alone is rated by their pass rates: its accuracy)."""
    apart = [r for r in roles_of(tasks) if r.rated_apart()]
    kept = tuple(t for t in tasks if not any(r.covers(t) for r in apart))
    return kept or tuple(tasks)


__all__ = [
    "ArmsShape",
    "JudgeRole",
    "declared_roles",
    "rated_tasks",
    "roles_of",
]
