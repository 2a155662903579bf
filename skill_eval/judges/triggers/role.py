"""The part trigger tasks play in a run (the `skill-triggered` judge's role): refuse what
cannot measure them (a no-skill baseline, an executor that cannot tell whether the skill was
invoked, arms that do not install it), keep their figures apart from the pass rates of ordinary
tasks (the artifact's `triggers` section), and let a failed trigger comparison fail a mixed
suite's verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...core.model import Attempt, Task
from ...errors import UsageError
from ...stats.decision import Decision
from ...stats.verdict import Verdict
from ..roles import ArmsShape, JudgeRole
from . import figures

if TYPE_CHECKING:
    from ...executors.base import ExecutorBase

NO_SKILL_BASELINE = (
    "the suite has trigger tasks, and a no-skill baseline can never trigger: "
    "pass --baseline-skill PATH (another description), or run in pipeline "
    "mode (the original skill as baseline), or --no-baseline (the candidate "
    "alone)"
)


class TriggerRole(JudgeRole):
    key = "triggers"

    def covers(self, task: Task) -> bool:
        return task.is_trigger_task

    def rated_apart(self) -> bool:
        return True

    def delivery_mode(self, tasks: Sequence[Task], configured: str) -> str:
        """`installed` when every task is a trigger task (each trigger attempt installs the
        whole folder, whatever --skill-mode says), else the configured one (the ordinary
        tasks get it)."""
        return "installed" if tasks and all(map(self.covers, tasks)) else configured

    def executor_problem(
        self, executor: ExecutorBase, name: str, tasks: Sequence[Task]
    ) -> str | None:
        """They need an executor that can tell whether the agent invokes the skill
        (`ExecutorBase.can_trigger`: Claude Code, OpenCode and Codex with the skill installed
        in a project folder; or the mock)."""
        task = next((t for t in tasks if self.covers(t)), None)
        if task is None or executor.can_trigger:
            return None
        return (
            f"task {task.id!r} is a trigger task: it needs Claude Code to pick the skill up "
            f"from its folder (--executor claude-cli, or --mock); executor {name!r} "
            "cannot run it"
        )

    def check_arms(self, tasks: Sequence[Task], arms: ArmsShape) -> None:
        """With --arm every arm must install the skill (installed or nudged), the reference
        too; else the no-skill baseline cannot trigger, and --early-stop's looks and
        --budget's allocation are over pass rates, not trigger rates."""
        if not any(map(self.covers, tasks)):
            return
        for arm in arms.listed:
            if arm.delivery not in ("installed", "nudged"):
                raise UsageError(
                    f"the suite has trigger tasks, which measure whether an installed skill is "
                    f"invoked: arm {arm.name!r} ({arm.delivery}) does not install it; run "
                    "trigger suites with installed and nudged arms (one of them the reference)"
                )
        if arms.listed:
            return
        if arms.baseline_kind == "none":
            raise UsageError(NO_SKILL_BASELINE)
        for flag, given in (("--early-stop", arms.early_stop), ("--budget", arms.budget)):
            if given:
                raise UsageError(
                    f"the suite has trigger tasks: {flag} decides from pass rates, "
                    f"not trigger rates; run it without {flag}"
                )

    def section(
        self,
        tasks: Sequence[Task],
        attempts: Sequence[Attempt],
        arms: Sequence[str],
        decision: Decision,
    ) -> dict[str, Any] | None:
        return figures.section(
            tasks,
            attempts,
            arms,
            samples=decision.sample_count,
            policy=decision.policy,
            min_delta=decision.min_delta,
            margin=decision.margin,
        )

    def guard(self, verdict: Verdict, section: Mapping[str, Any] | None) -> Verdict:
        """With no baseline, a suite with trigger tasks passes only when each class of queries
        meets its bar (figures.classes: should-trigger ones fire, should-not ones stay quiet),
        so a skill that never fires, or always fires, fails whatever its accuracy. With one,
        it passes only when its trigger comparison passes too: for
        a mixed suite the pass rates cover the ordinary tasks alone, and a trigger-only
        suite's pass@k verdict is laxer than the comparison of trigger rates (with --pass-k
        above 1) and must not profit from errors the comparison guards against."""
        if section is None or verdict.verdict != "pass":
            return verdict
        alone = section.get("classes")
        if isinstance(alone, Mapping) and alone.get("passed") is False:  # no baseline
            return replace(verdict, verdict="fail", reason=f"trigger tasks: {alone['reasoning']}")
        comparison = section.get("comparison")
        policy = comparison.get("policy") if comparison else None
        if policy is None or policy.get("passed"):
            return verdict
        return replace(
            verdict,
            verdict="fail",
            reason=f"trigger tasks: {policy.get('reasoning') or 'comparison failed'}",
        )

    def arm_figures(self, tasks: Sequence[Task], attempts: Sequence[Attempt], samples: int) -> Any:
        chosen = figures.trigger_tasks(tasks)
        return figures.arm_figures(chosen, attempts, samples) if chosen else None

    def compare_arms(self, arm: Any, reference: Any, decision: Decision) -> Any:
        if arm is None or reference is None:
            return None
        return figures.compare(
            arm,
            reference,
            policy=decision.policy,
            min_delta=decision.min_delta,
            margin=decision.margin,
            samples=decision.sample_count,
        )


TRIGGERS = TriggerRole()
