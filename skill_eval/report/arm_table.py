"""The figures of a run with --arm that every report shows side by side, one column per arm
(the reference marked): where it ran and how the skill reached it, its pass rate, whether the
skill fired, its paired difference from the reference with the interval and the policy's
decision, the lift when the skill fired, its cost; with arms on several models, lines for the
skill's lift per model and the change between models. Read defensively from the artifact's
`arms` section (engine/arm_figures.py) into each arm of the report's view
(report/arm_view.py); a two-arm run has no such figures. Text is cleaned with `one_line`;
each renderer escapes it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from . import triggers as trigger_report
from .text import one_line

ROWS = (
    ("runs on", "runs_on"),
    ("delivery", "delivery"),
    ("pass rate", "pass_rate"),
    ("skill fired", "fired"),
    ("vs reference", "delta"),
    ("decision", "decision"),
    ("lift when fired", "lift"),
    ("when not fired", "lift_not"),
    ("cost (USD)", "cost"),
)


class Column(Protocol):
    """An arm as the side-by-side table reads it (report/arm_view.py's ArmView)."""

    @property
    def heading(self) -> str: ...

    @property
    def figures(self) -> Mapping[str, str]: ...

    @property
    def triggers(self) -> str: ...


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _rate(value: Any) -> str:
    number = _number(value)
    return "n/a" if number is None else f"{number:.4f}"


def _signed(value: Any) -> str:
    number = _number(value)
    return "n/a" if number is None else f"{number:+.4f}"


def _fired(arm: Mapping[str, Any]) -> str:
    fired = arm.get("fired")
    if not isinstance(fired, Mapping):
        return "-" if arm.get("delivery") == "none" else "n/a"
    if fired.get("how") == "always":
        return "always (in context)" if arm.get("delivery") == "context" else "always (in prompt)"
    rate = _number(fired.get("rate"))
    if rate is None:
        return "n/a"
    return f"{rate:.0%} ({fired.get('fired')}/{fired.get('attempts')} attempts)"


def _lift(entry: Any) -> str:
    if not isinstance(entry, Mapping):
        return "-"
    if not entry.get("tasks"):
        return "no such attempt"
    return (
        f"{_signed(entry.get('delta'))} ({_rate(entry.get('rate'))} vs "
        f"{_rate(entry.get('reference_rate'))}, {_tasks(entry.get('tasks'))})"
    )


def _interval(comparison: Mapping[str, Any]) -> str:
    """`[-0.43, +0.72]`: the paired delta's interval, or "" without one."""
    paired = comparison.get("comparison")
    interval = paired.get("interval") if isinstance(paired, Mapping) else None
    if not (isinstance(interval, Sequence) and len(interval) == 2):
        return ""
    low, high = (_number(x) for x in interval)
    return "" if low is None or high is None else f"[{low:+.2f}, {high:+.2f}]"


def _tasks(count: Any) -> str:
    return f"{count} task" if count == 1 else f"{count} tasks"


def _decision(comparison: Mapping[str, Any]) -> str:
    policy = comparison.get("policy")
    if not isinstance(policy, Mapping):
        return "n/a"
    return f"{one_line(policy.get('name') or '?')}: {'pass' if policy.get('passed') else 'fail'}"


def figures(
    arm: Mapping[str, Any], comparison: Mapping[str, Any] | None
) -> tuple[dict[str, str], float | None, str]:
    """An --arm arm's cells of the table (one per ROWS key) from its `arms.arms` entry and its
    comparison with the reference (None for the reference), the rate its skill fired at (for
    a bar) and its trigger figures ("" without trigger tasks)."""
    runs_on = _mapping(arm.get("runs_on"))
    where = " ".join(
        one_line(x)
        for x in (arm.get("executor"), runs_on.get("version"), runs_on.get("model"))
        if x
    )
    reference = bool(arm.get("reference"))
    cells = {
        "runs_on": where or "?",
        "delivery": one_line(arm.get("delivery") or "?"),
        "pass_rate": _rate(arm.get("pass_rate")),
        "fired": _fired(arm),
        "delta": "reference" if reference else "n/a",
        "decision": "-" if reference else "n/a",
        "lift": "-",
        "lift_not": "-",
        "cost": f"{float((arm.get('usage') or {}).get('cost_usd') or 0):.4f}",
    }
    if comparison is not None:
        cells["delta"] = f"{_signed(comparison.get('delta'))} {_interval(comparison)}".strip()
        cells["decision"] = _decision(comparison)
        cells["lift"] = _lift(comparison.get("when_fired"))
        cells["lift_not"] = _lift(comparison.get("when_not_fired"))
    triggers = arm.get("triggers")
    return (
        cells,
        _number(_mapping(arm.get("fired")).get("rate")),
        trigger_report.arm_line(triggers) if isinstance(triggers, Mapping) else "",
    )


def _brief(entry: Mapping[str, Any]) -> str:
    """`new vs new-none +0.2000 [-0.10, +0.50] (no-regression: fail)`."""
    interval = _interval({"comparison": {"interval": entry.get("interval")}})
    return (
        f"{one_line(entry.get('arm') or '?')} vs {one_line(entry.get('reference') or '?')} "
        f"{_signed(entry.get('delta'))} {interval} ({_decision(entry)})"
    ).replace("  ", " ")


def model_lines(artifact: Mapping[str, Any]) -> list[str]:
    """The skill's lift per model and the change between models (`arms.models`, runs whose
    arms name models); [] without."""
    section = _mapping(artifact.get("arms"))
    models = _mapping(section.get("models"))
    if not models:
        return []
    entries = [e for e in models.get("lift") or () if isinstance(e, Mapping)]
    out = ["the skill's lift per model (each skill arm vs the none arm on its model)"]
    out += [f"  {one_line(e.get('model') or 'default')}: {_brief(e)}" for e in entries]
    if not entries:
        out.append("  none: no model has both a skill arm and a none arm")
    out.append("between models (the same delivery on two models, paired over tasks)")
    for e in models.get("between") or ():
        if isinstance(e, Mapping):
            delivery = one_line(e.get("delivery") or "?")
            out.append(
                f"  {delivery} {one_line(e.get('from_model') or 'default')}"
                f" -> {one_line(e.get('to_model') or 'default')}: {_brief(e)}"
            )
    for e in models.get("lift_change") or ():
        if isinstance(e, Mapping):
            out.append(
                f"  lift of {one_line(e.get('delivery') or '?')}: "
                f"{_signed(e.get('from_lift'))} on {one_line(e.get('from_model') or 'default')}"
                f" -> {_signed(e.get('to_lift'))} on {one_line(e.get('to_model') or 'default')}"
                f" (change {_signed(e.get('change'))})"
            )
    return out


def rows(columns: Sequence[Column]) -> list[list[str]]:
    """The side-by-side table: a header of arm names and a row per figure (each arm's result
    on each task is in the reports' per-task table, one column an arm)."""
    table = [["", *(c.heading for c in columns)]]
    table += [[label, *(c.figures[key] for c in columns)] for label, key in ROWS]
    if any(c.triggers for c in columns):
        table.append(["triggers", *(c.triggers or "-" for c in columns)])
    return table


__all__ = ["ROWS", "Column", "figures", "model_lines", "rows"]
