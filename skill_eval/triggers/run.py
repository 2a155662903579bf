"""What `skill-eval run` does differently when a suite holds trigger tasks: refuse what cannot
measure them (a no-skill baseline, an executor that cannot run Claude Code), keep their
figures apart from the pass rates of ordinary tasks, and let a failed trigger comparison fail
a mixed suite's verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.model import Arm, Suite
from ..errors import UsageError
from ..executors.base import ExecutorBase
from ..stats.verdict import Verdict

NO_SKILL_BASELINE = (
    "the suite has trigger tasks, and a no-skill baseline can never trigger: "
    "pass --baseline-skill PATH (another description), or run in pipeline "
    "mode (the original skill as baseline), or --no-baseline (the candidate "
    "alone)"
)


def has_triggers(suite: Suite) -> bool:
    return any(t.is_trigger_task for t in suite.tasks)


def delivery_mode(suite: Suite, configured: str) -> str:
    """The skill mode whose delivery the run's warnings describe: `installed` when every task
    is a trigger task (each trigger attempt installs the whole folder, whatever --skill-mode
    says), else the configured one (the ordinary tasks get it)."""
    if suite.tasks and all(t.is_trigger_task for t in suite.tasks):
        return "installed"
    return configured


def check_arms(
    suite: Suite, baseline_kind: str, early_stop: bool = False, budget: bool = False
) -> None:
    """The no-skill baseline makes no sense for trigger tasks, and --early-stop's looks and
    --budget's allocation are over pass rates, not trigger rates: a clear error, before any
    call."""
    if has_triggers(suite) and baseline_kind == "none":
        raise UsageError(NO_SKILL_BASELINE)
    for flag, given in (("--early-stop", early_stop), ("--budget", budget)):
        if has_triggers(suite) and given:
            raise UsageError(
                f"the suite has trigger tasks: {flag} decides from pass rates, "
                f"not trigger rates; run it without {flag}"
            )


def check_deliveries(suite: Suite, arms: Sequence[Arm]) -> None:
    """Trigger tasks measure whether an installed skill is picked up: with --arm every arm
    must install it (delivery installed or nudged), the reference too."""
    if not has_triggers(suite):
        return
    for arm in arms:
        if arm.delivery not in ("installed", "nudged"):
            raise UsageError(
                f"the suite has trigger tasks, which measure whether an installed skill is "
                f"invoked: arm {arm.name!r} ({arm.delivery}) does not install it; run trigger "
                "suites with installed and nudged arms (one of them the reference)"
            )


def executor_problem(executor: ExecutorBase, executor_name: str, suite: Suite) -> str | None:
    """Why `executor` cannot run this suite's trigger tasks, or None. They need an executor
    that can tell whether the agent invokes the skill (`ExecutorBase.can_trigger`: Claude
    Code, with the skill installed in a project folder and its Skill tool; or the mock)."""
    task = next((t for t in suite.tasks if t.is_trigger_task), None)
    if task is None or executor.can_trigger:
        return None
    return (
        f"task {task.id!r} is a trigger task: it needs Claude Code to pick the skill up "
        f"from its folder (--executor claude-cli, or --mock); executor {executor_name!r} "
        "cannot run it"
    )


def ordinary_suite(suite: Suite) -> Suite:
    """The suite whose tasks the pass rates cover: its ordinary tasks when it mixes both kinds
    (trigger tasks are reported apart), else the suite itself (a trigger-only suite's pass
    rate is its accuracy)."""
    ordinary = tuple(t for t in suite.tasks if not t.is_trigger_task)
    if not ordinary or len(ordinary) == len(suite.tasks):
        return suite
    return replace(suite, tasks=ordinary)


def combine(verdict: Verdict, section: dict[str, Any] | None) -> Verdict:
    """A suite with trigger tasks passes only when its trigger comparison passes too: for a
    mixed suite the pass rates cover the ordinary tasks alone, and a trigger-only suite's
    pass@k verdict is laxer than the comparison of trigger rates (with --pass-k above 1) and
    must not profit from errors the comparison guards against."""
    if section is None or verdict.verdict != "pass":
        return verdict
    comparison = section.get("comparison")
    policy = comparison.get("policy") if comparison else None
    if policy is None or policy.get("passed"):
        return verdict
    return replace(
        verdict,
        verdict="fail",
        reason=f"trigger tasks: {policy.get('reasoning') or 'comparison failed'}",
    )
