"""What each model did in a run and what it cost: the artifact's `usage_by_model`, so a reader
sees that the candidate ran on one model and its cheap checks (trigger tasks, model-graded
judges) on another.

An attempt counts under the model its executor recorded (the API reply's `model`, the models
an agent's replies named: several when it used more than one, then named together); a
judgement under the model of each call it made (`JudgeResult.calls`). Attempts drawn from the
baseline cache and cached judgements cost this run nothing and are left out; a run that called
no model (the mock) has no entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..core.model import Attempt, Usage
from ..executors.pricing import PriceTable, load_price_table
from .cache import drawn_from
from .spend import call_cost

ROLES = ("attempts", "trigger attempts", "judgements")
UNRECORDED = "(model not recorded)"


def attempt_model(attempt: Attempt) -> str | None:
    """The model that answered `attempt`, as its executor recorded it; None: not recorded."""
    listed = attempt.meta.get("models")
    if isinstance(listed, list) and (names := sorted(m for m in listed if isinstance(m, str))):
        return " + ".join(names)
    named = attempt.meta.get("model")
    return named if isinstance(named, str) and named else None


class _Row:
    def __init__(self) -> None:
        self.roles: set[str] = set()
        self.calls = 0
        self.usage = Usage()
        self.cost_usd = 0.0

    def add(self, role: str, usage: Usage, cost: float) -> None:
        self.roles.add(role)
        self.calls += 1
        self.usage = self.usage + usage
        self.cost_usd += cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "roles": [r for r in ROLES if r in self.roles],
            "calls": self.calls,
            **self.usage.to_dict(),
            "cost_usd": round(self.cost_usd, 6),
        }


def usage_by_model(
    attempts: Iterable[Attempt],
    trigger_tasks: Sequence[str] = (),
    prices: PriceTable | None = None,
) -> dict[str, dict[str, Any]]:
    """{model: {roles, calls, tokens..., cost_usd}} over this run's own attempts and their
    judgements, sorted by model; `calls` counts attempts and judgements (an agent attempt is
    one call here, whatever its turns)."""
    table = prices or load_price_table()
    rows: dict[str, _Row] = {}
    for attempt in attempts:
        if drawn_from(attempt) is not None:
            continue
        model = attempt_model(attempt)
        spent = attempt.usage != Usage() or attempt.cost_usd > 0
        if model is not None or spent:
            role = "trigger attempts" if attempt.task_id in trigger_tasks else "attempts"
            row = rows.setdefault(model or UNRECORDED, _Row())
            row.add(role, attempt.usage, attempt.cost_usd)
        for call in attempt.judge.calls if attempt.judge is not None else ():
            rows.setdefault(call.model, _Row()).add(
                "judgements", call.usage, call_cost(call, table)
            )
    return {model: rows[model].to_dict() for model in sorted(rows)}


__all__ = ["UNRECORDED", "attempt_model", "usage_by_model"]
