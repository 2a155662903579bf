"""How a skill folder run delivers the skill, by default as it ships: on an agent executor
that loads skills (ExecutorSpec.skill_roots: Claude Code, OpenCode, Codex, and the mock that
stands in for them) the whole folder is installed where the agent finds skills
(`--skill-mode installed`), and the summary says per arm whether the agent invoked it; on an
API executor the skill can only go as text, so the summary names that delivery first, with
what it leaves out. `--skill-mode` (or --arm) given says otherwise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..core.execution import SkillMode
from ..executors.catalog import loads_skills, serves_skill_files
from ..plan.run_plan import RunPlan

INSTALLED: SkillMode = "installed"


def as_it_ships(plan: RunPlan, mode_given: bool) -> RunPlan:
    """`plan` with the skill installed when its executor loads skills and neither
    --skill-mode nor --arm chose a delivery."""
    if mode_given or plan.inputs.arms or not loads_skills(plan.executor.name):
        return plan
    return replace(plan, executor=replace(plan.executor, skill_mode=INSTALLED))


def _fired(arm: Any) -> str:
    if not isinstance(arm, Mapping):
        return "no skill"
    figure = arm.get("fired")
    if not isinstance(figure, Mapping) or not figure.get("attempts"):
        return "not measured (no judged attempt)" if arm.get("skill_name") else "no skill"
    return f"{figure.get('fired')}/{figure.get('attempts')} attempts"


def delivery_line(artifact: Mapping[str, Any]) -> str:
    """The summary's first line: how the skill reached the model, and what that leaves out
    (or, installed, whether each arm's agent invoked it)."""
    manifest = artifact.get("manifest") or {}
    mode = str(manifest.get("skill_mode") or "")
    executor = str((manifest.get("executor") or {}).get("kind") or "")
    arms = manifest.get("arms") or {}
    if mode == INSTALLED:
        return (
            f"delivery  the skill folder installed for the {executor} agent, as it ships "
            f"(--skill-mode installed); skill fired: candidate {_fired(arms.get('candidate'))}, "
            f"baseline {_fired(arms.get('baseline'))}"
        )
    if loads_skills(executor):
        return f"delivery  --skill-mode {mode}, as asked (installed delivers the skill as it ships)"
    files = (
        "its other files readable through a read_skill_file tool"
        if serves_skill_files(executor)
        else "its other files (references, scripts, assets) left out"
    )
    return (
        f"delivery  SKILL.md as text (--skill-mode {mode}) to the {executor} API, {files}; "
        "left out: the skill's scripts never run, and no description decides whether it "
        "loads (an agent executor, --executor claude-cli, installs it as it ships)"
    )


__all__ = ["as_it_ships", "delivery_line"]
