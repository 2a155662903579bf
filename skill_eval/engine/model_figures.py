"""The artifact's `arms.models` entry of a run whose arms name models (`--arm
NAME=EXECUTOR:DELIVERY@MODEL`): "does my skill still help on the new model, and did the new
model regress with it", from the same paired attempts as the rest of the arms section.

- `lift`: per executor and model with a `none` arm, each skill arm on that executor and model
  against that `none` arm (the skill's lift on the model), paired over tasks, with its interval.
- `between`: towards the reference arm's model (`to_model`: the model the run decides on), per
  executor and delivery, the arm on that model against the arm on each other model, paired
  over tasks, with its interval: the change the model brought, with the skill and (the `none`
  arms) without it.
- `lift_change`: per executor and delivery with a lift on both models, the lift on the
  reference's model minus the other's (a point figure: its interval would need the four arms'
  joint variation; the two paired comparisons above carry the intervals).

Each comparison is engine/summary.py's `compare` at the run's policy, unadjusted for the family
(these figures describe; the verdict is the reference comparison's). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.model import Arm
from ..stats.decision import Decision
from .summary import ArmComparison, EvaluationResult, compare


def _figures(comparison: ArmComparison) -> dict[str, Any]:
    """The comparison in brief: rates, delta, its interval and the policy's decision."""
    paired = comparison.analysis.comparison
    policy = comparison.analysis.policy
    return {
        "arm": comparison.arm,
        "reference": comparison.reference,
        "rate": comparison.rate,
        "reference_rate": comparison.reference_rate,
        "delta": comparison.delta,
        "interval": None
        if paired is None or paired.interval is None
        else [round(x, 4) for x in paired.interval],
        "confidence": None if paired is None else paired.confidence,
        "tasks": None if paired is None else paired.n_tasks,
        "policy": policy.to_dict() if policy else None,
    }


def models_section(
    arms: Sequence[Arm], reference: str, result: EvaluationResult, decision: Decision
) -> dict[str, Any] | None:
    """The `models` entry (see the module docstring); None when no arm names a model."""
    if not any(a.model for a in arms):
        return None
    decision = replace(decision, family_size=1)
    target = next(a.model for a in arms if a.name == reference)

    def figures(arm: Arm, other: Arm) -> dict[str, Any]:
        return _figures(compare(result.arm(arm.name), result.arm(other.name), decision))

    lift = []
    for arm in arms:
        none = next((a for a in arms if a.skill is None and _place(a) == _place(arm)), None)
        if arm.skill is not None and none is not None:
            lift.append({"executor": arm.executor, "model": arm.model, **figures(arm, none)})
    between = []
    for arm in arms:
        if arm.model == target:
            continue
        same = (arm.executor, arm.delivery, target)
        mine = next((a for a in arms if (a.executor, a.delivery, a.model) == same), None)
        if mine is not None:
            between.append(
                {
                    "executor": arm.executor,
                    "delivery": arm.delivery,
                    "from_model": arm.model,
                    "to_model": target,
                    **figures(mine, arm),
                }
            )
    return {
        "models": list(dict.fromkeys(a.model for a in arms)),
        "to_model": target,
        "lift": lift,
        "between": between,
        "lift_change": _lift_change(arms, lift, target),
    }


def _place(arm: Arm) -> tuple[str | None, str | None]:
    return arm.executor, arm.model


def _lift_change(
    arms: Sequence[Arm], lift: Sequence[dict[str, Any]], target: str | None
) -> list[dict[str, Any]]:
    """Per executor and delivery: the lift on the reference's model minus each other model's."""
    delivery = {a.name: a.delivery for a in arms}

    def key(entry: Mapping[str, Any]) -> tuple[Any, Any]:
        return entry["executor"], delivery[entry["arm"]]

    out = []
    for entry in lift:
        to = next((e for e in lift if key(e) == key(entry) and e["model"] == target), None)
        if to is None or entry["model"] == target:
            continue
        change = (
            None
            if to["delta"] is None or entry["delta"] is None
            else round(to["delta"] - entry["delta"], 4)
        )
        out.append(
            {
                "executor": entry["executor"],
                "delivery": delivery[entry["arm"]],
                "from_model": entry["model"],
                "to_model": target,
                "from_lift": entry["delta"],
                "to_lift": to["delta"],
                "change": change,
            }
        )
    return out


__all__ = ["models_section"]
