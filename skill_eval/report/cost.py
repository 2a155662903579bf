"""What a task costs in each arm, and what the skill's change in cost bought: the per-task
cost column of the reports and the line "cost +40% ($0.0120 -> $0.0170 a task) for +2.0
points".

A task's cost in an arm is the mean over its attempts of what one attempt cost (the
executor's cost, plus its model-graded judgements' calls priced from the model and usage
each records), whoever paid for it: an attempt drawn from the baseline cache counts at what it
cost the run that made it, so the arms compare. Mock runs cost nothing and show no cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..engine.spend import call_cost, recorded_calls
from ..executors.pricing import PriceTable, load_price_table

ARMS = (("candidate", "candidate_results"), ("baseline", "baseline_results"))


def attempt_usd(attempt: Mapping[str, Any], prices: PriceTable) -> float:
    """One attempt's cost with its judgement's, in dollars."""
    judge = attempt.get("judge")
    judged = sum(call_cost(c, prices) for c in recorded_calls(judge))
    return float(attempt.get("cost_usd") or 0) + judged


def task_costs(
    artifact: Mapping[str, Any],
    arms: Iterable[tuple[str, Iterable[Mapping[str, Any]]]] | None = None,
) -> dict[str, dict[str, float]]:
    """{task id: {arm: mean dollars an attempt}} of `arms` (name, its results), by default
    the candidate's and the baseline's; empty when no attempt cost anything."""
    prices = load_price_table()
    costs: dict[str, dict[str, float]] = {}
    tables = arms if arms is not None else ((arm, artifact.get(key) or []) for arm, key in ARMS)
    for arm, results in tables:
        for result in results:
            attempts = [a for a in result.get("attempts") or [] if isinstance(a, Mapping)]
            if attempts:
                spent = [attempt_usd(a, prices) for a in attempts]
                costs.setdefault(str(result.get("task_id")), {})[arm] = sum(spent) / len(spent)
    return costs if any(v for arms in costs.values() for v in arms.values()) else {}


def per_task(costs: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """{arm: mean over tasks of a task's cost}."""
    arms: dict[str, list[float]] = {}
    for by_arm in costs.values():
        for arm, usd in by_arm.items():
            arms.setdefault(arm, []).append(usd)
    return {arm: sum(v) / len(v) for arm, v in arms.items()}


def cell(by_arm: Mapping[str, float], arm: str) -> str:
    """A table cell: `$0.0123`, or `-` where the arm has no attempt of the task."""
    return f"${by_arm[arm]:.4f}" if arm in by_arm else "-"


def lift_per_dollar(artifact: Mapping[str, Any]) -> str:
    """`cost +40% ($0.0120 -> $0.0170 a task) for +2.0 points (lift per dollar: ...)`, or ""
    without a baseline, a delta, or any cost."""
    arms = per_task(task_costs(artifact))
    delta = (artifact.get("evaluation") or {}).get("delta")
    if "candidate" not in arms or "baseline" not in arms or not isinstance(delta, int | float):
        return ""
    base, cand = arms["baseline"], arms["candidate"]
    points = 100 * float(delta)
    if base <= 0:
        return f"cost ${base:.4f} -> ${cand:.4f} a task for {points:+.1f} points"
    change = 100 * (cand - base) / base
    text = f"cost {change:+.0f}% (${base:.4f} -> ${cand:.4f} a task) for {points:+.1f} points"
    if cand > base and points > 0:
        text += f" ({points / (cand - base):,.0f} points per extra dollar a task)"
    elif cand > base:
        text += " (the extra cost bought no lift)"
    elif points >= 0:
        text += " (cheaper, and no worse)"
    return text


__all__ = ["attempt_usd", "cell", "lift_per_dollar", "per_task", "task_costs"]
