"""The artifact's `arms` section of a run with --arm: per arm its executor and delivery, pass
rate, whether the skill fired, trigger figures and usage; per arm but the reference its paired
comparison with the reference (Holm over the family, engine/summary.py) and the lift when the
skill fired; with arms on several models (`@MODEL`) the skill's lift per model and the change
between models (engine/model_figures.py). Pure: computed from the run's attempts, again by
`rejudge` and `merge`.

"Did the skill fire?" is asked of the arms that install it (installed, nudged): an attempt
fired when its agent invoked the skill, as its executor counted (`meta.skill_invocations`) or,
failing that, as its transcript shows (core.transcript.skill_invocations). A context, system
or prepend arm has the skill in front of the model on every attempt ("always"); a `none` arm
has none. The lift when fired compares, task by task, the arm's pass rate over the attempts
where the skill fired with the reference's over its attempts at the same tasks (attempt
rates averaged over tasks), and likewise when it did not fire: so "the skill is good but
never loads" reads as a large lift when fired with a low fired rate. Whether a skill fires is
the agent's choice, not a coin's: these are observed, not randomised, comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.model import Arm, Attempt, Task
from ..executors.catalog import skill_invocations
from ..judges.roles import declared_roles, roles_of
from ..stats.decision import Decision
from .model_figures import models_section
from .summary import ArmResult, summarise

INVOKED = ("installed", "nudged")  # deliveries where the agent chooses to invoke the skill
ALWAYS = ("context", "system", "prepend")  # deliveries that put the skill in front of it


def fired(attempt: Attempt, skill: str) -> bool | None:
    """Whether the agent invoked skill `skill` in this attempt; None for an attempt in error
    (it says nothing about the skill)."""
    if attempt.status == "error":
        return None
    counted = attempt.meta.get("skill_invocations")
    if isinstance(counted, int) and not isinstance(counted, bool):
        return counted > 0
    try:
        transcript = attempt.full_transcript()
    except OSError:  # its blob is gone: the preview's calls
        transcript = attempt.transcript
    return bool(skill_invocations(transcript, skill))


def fired_figure(arm: Arm, attempts: Sequence[Attempt], tasks: Sequence[Task]) -> Any:
    """The arm's `fired` entry over the ordinary tasks' judged attempts (see the module)."""
    if arm.skill is None or arm.delivery is None or arm.delivery == "none":
        return None
    if arm.delivery in ALWAYS:
        return {"how": "always", "rate": None, "attempts": None, "fired": None}
    apart = [role for role in roles_of(tasks) if role.rated_apart()]
    ids = {t.id for t in tasks if not any(role.covers(t) for role in apart)}
    seen = [f for a in attempts if a.task_id in ids and (f := fired(a, arm.skill.name)) is not None]
    return {
        "how": "invoked",
        "rate": round(sum(seen) / len(seen), 4) if seen else None,
        "attempts": len(seen),
        "fired": sum(seen),
    }


def _rates(attempts: Sequence[Attempt]) -> dict[str, tuple[int, int]]:
    """Per task (passes, judged attempts)."""
    out: dict[str, tuple[int, int]] = {}
    for a in attempts:
        if a.status != "error":
            passes, judged = out.get(a.task_id, (0, 0))
            out[a.task_id] = (passes + (a.status == "passed"), judged + 1)
    return out


def conditional_lift(
    arm: Arm, attempts: Sequence[Attempt], reference: Sequence[Attempt], when: bool
) -> dict[str, Any] | None:
    """The arm's attempts where the skill fired (`when`) or did not, against the reference's
    attempts at the same tasks; None for an arm whose skill is not invoked by choice."""
    if arm.skill is None or arm.delivery not in INVOKED:
        return None
    name = arm.skill.name
    chosen = _rates([a for a in attempts if fired(a, name) is when])
    theirs = _rates(reference)
    tasks = [t for t in chosen if t in theirs]
    if not tasks:
        return {"tasks": 0, "attempts": 0, "rate": None, "reference_rate": None, "delta": None}
    rate = math.fsum(chosen[t][0] / chosen[t][1] for t in tasks) / len(tasks)
    ref = math.fsum(theirs[t][0] / theirs[t][1] for t in tasks) / len(tasks)
    return {
        "tasks": len(tasks),
        "attempts": sum(chosen[t][1] for t in tasks),
        "rate": round(rate, 4),
        "reference_rate": round(ref, 4),
        "delta": round(rate - ref, 4),
    }


def _skill(arm: Arm) -> dict[str, Any] | None:
    skill = arm.skill
    if skill is None:
        return None
    return {"name": skill.name, "sha256": skill.sha256, "tree_sha256": skill.tree_sha256}


def _runs_on(describe: Any) -> dict[str, Any]:
    """What an arm's executor said of itself, in brief (the manifest has the rest)."""
    found = describe if isinstance(describe, Mapping) else {}
    return {key: found.get(key) for key in ("kind", "version", "model", "skill_mode")}


def section(
    tasks: Sequence[Task],
    rated: Sequence[Task],
    arms: Sequence[Arm],
    reference: str,
    attempts: Sequence[Attempt],
    decision: Decision,
    setup: Mapping[str, Any],
) -> dict[str, Any]:
    """The `arms` section (see the module docstring). `rated` are the tasks pass rates cover
    (a mixed suite's ordinary tasks); `setup` each arm's delivery and executor describe()."""
    result = summarise(rated, arms, attempts, decision, reference)
    every = summarise(tasks, arms, attempts, decision, reference)  # results list every task
    mine = {a.name: [x for x in attempts if x.arm == a.name] for a in arms}
    present = roles_of(tasks)
    # every role's entry, null where the suite has none of its tasks: one shape for all runs
    figures = {
        role.key: {
            a.name: role.arm_figures(tasks, mine[a.name], decision.sample_count)
            if role in present
            else None
            for a in arms
        }
        for role in declared_roles()
    }
    out_arms = [
        _arm_entry(arm, result.arm(arm.name), every.arm(arm.name), reference, tasks, setup)
        | {key: by_arm[arm.name] for key, by_arm in figures.items()}
        for arm in arms
    ]
    comparisons = []
    for comparison in result.comparisons:
        arm = next(a for a in arms if a.name == comparison.arm)
        entry = comparison.to_dict()
        entry["when_fired"] = conditional_lift(arm, mine[arm.name], mine[reference], True)
        entry["when_not_fired"] = conditional_lift(arm, mine[arm.name], mine[reference], False)
        for role in declared_roles():
            by_arm = figures[role.key]
            entry[role.key] = role.compare_arms(by_arm[arm.name], by_arm[reference], decision)
        comparisons.append(entry)
    out = {"reference": reference, "arms": out_arms, "comparisons": comparisons}
    models = models_section(arms, reference, result, decision)
    return out if models is None else out | {"models": models}


def _arm_entry(
    arm: Arm,
    rated: ArmResult,
    whole: ArmResult,
    reference: str,
    tasks: Sequence[Task],
    setup: Mapping[str, Any],
) -> dict[str, Any]:
    """One arm: `rated` over the tasks pass rates cover, `whole` over every task."""
    described = (setup.get(arm.name) or {}).get("executor")
    return {
        "name": arm.name,
        "label": arm.label,
        "executor": arm.executor,
        "delivery": arm.delivery,
        **({"model": arm.model} if arm.model else {}),
        "reference": arm.name == reference,
        "runs_on": _runs_on(described),
        "skill": _skill(arm),
        "pass_rate": rated.pass_rate,
        "fired": fired_figure(arm, whole.attempts, tasks),
        "usage": whole.to_dict()["usage"],
        "results": [r.to_dict() for r in whole.results],
    }


__all__ = ["conditional_lift", "fired", "fired_figure", "section"]
