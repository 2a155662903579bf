"""The artifact's `arms.models` entry of a run whose arms name models (`--arm
NAME=EXECUTOR:DELIVERY@MODEL`): "does my skill still help on the new model, and did the new
model regress with it", from the same paired attempts as the rest of the arms section.

- `lift`: per executor and model with a `none` arm, each skill arm on that executor and model
  against that `none` arm (the skill's lift on the model), paired over tasks, with its interval.
- `between`: per executor and delivery on several models, the arm on each later model (in the
  order the arms were given) against the arm on the first, paired over tasks, with its
  interval: the change the model brought, with the skill and (the `none` arms) without it.
- `lift_change`: per delivery with a lift on both models, the later lift minus the first (a
  point figure: its interval would need the four arms' joint variation, which the two paired
  comparisons above bound instead).

Each comparison is engine/summary.py's `compare` at the run's policy, unadjusted for the family
(these figures describe; the verdict is the reference comparison's). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.model import Arm
from .settings import EvaluationSettings
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
    arms: Sequence[Arm], result: EvaluationResult, settings: EvaluationSettings
) -> dict[str, Any] | None:
    """The `models` entry (see the module docstring); None when no arm names a model."""
    if not any(a.model for a in arms):
        return None
    settings = replace(settings, family_size=1)
    lift = []
    for arm in arms:
        if arm.skill is None:
            continue
        none = next((a for a in arms if a.skill is None and _place(a) == _place(arm)), None)
        if none is not None:
            figures = _figures(compare(result.arm(arm.name), result.arm(none.name), settings))
            lift.append({"executor": arm.executor, "model": arm.model, **figures})
    between = []
    for arm in arms:
        first = next(a for a in arms if (a.executor, a.delivery) == (arm.executor, arm.delivery))
        if first is not arm and first.model != arm.model:
            figures = _figures(compare(result.arm(arm.name), result.arm(first.name), settings))
            between.append(
                {
                    "executor": arm.executor,
                    "delivery": arm.delivery,
                    "from_model": first.model,
                    "to_model": arm.model,
                    **figures,
                }
            )
    return {
        "models": list(dict.fromkeys(a.model for a in arms)),
        "lift": lift,
        "between": between,
        "lift_change": _lift_change(arms, lift),
    }


def _place(arm: Arm) -> tuple[str | None, str | None]:
    return arm.executor, arm.model


def _lift_change(arms: Sequence[Arm], lift: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per executor and delivery: each later model's lift minus the first model's."""
    delivery = {a.name: a.delivery for a in arms}
    out = []
    for entry in lift:
        first = next(
            e
            for e in lift
            if e["executor"] == entry["executor"] and delivery[e["arm"]] == delivery[entry["arm"]]
        )
        if first is entry or first["model"] == entry["model"]:
            continue
        change = (
            None
            if first["delta"] is None or entry["delta"] is None
            else round(entry["delta"] - first["delta"], 4)
        )
        out.append(
            {
                "executor": entry["executor"],
                "delivery": delivery[entry["arm"]],
                "from_model": first["model"],
                "to_model": entry["model"],
                "from_lift": first["delta"],
                "to_lift": entry["delta"],
                "change": change,
            }
        )
    return out


__all__ = ["models_section"]
