"""The HTML report of an evaluation artifact: one self-contained file (inline CSS, a little
vanilla JS, no network) rendered from the Jinja2 template in skill_eval/templates/.

The numbers come from the same view as the other reports (report/view.py); the per-attempt
details from report/task_details.py. Autoescaping is on, so every output, prompt and judge text is
shown as text; the data embedded for the page's script is JSON with `<`, `>` and `&` escaped.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..judges.observers import reading_text, summary_lines
from . import cost
from .arm_table import ROWS as ARM_ROWS
from .arm_table import model_lines
from .task_details import TaskDetail, from_artifact
from .text import one_line
from .triggers import table_info
from .verdict_text import DECIDED_LABEL, REFERENCE_LABEL
from .view import View, read_view

TEMPLATES = Path(__file__).parent / "templates"
DRAWN = 480  # the decision drawing's width in pixels
MAX_DIFF_WORDS = 4000  # difflib is quadratic; longer outputs are compared in their first words
# a word with the spaces after it, leading spaces, a line break
_WORDS = re.compile(r"\S+[^\S\n]*|[^\S\n]+|\n")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """(op, text) segments turning `old` (baseline) into `new` (candidate): op is "same",
    "del" or "ins"; each word keeps the whitespace after it so the text reads as written."""
    a, b = _WORDS.findall(old)[:MAX_DIFF_WORDS], _WORDS.findall(new)[:MAX_DIFF_WORDS]
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("ins", "".join(b[j1:j2])))
    return out


def _movement(task_id: str, view: View) -> str:
    if task_id in view.regressed:
        return "regressed"
    return "improved" if task_id in view.improved else "same"


def agreement_text(figures: Mapping[str, Any]) -> str:
    """One task's judge agreement (the artifact's judge_agreement.tasks entry), to read."""
    cached = int(figures.get("cached") or 0)
    from_cache = f"; {cached} judgement(s) came from the judge cache" if cached else ""
    outputs = int(figures.get("outputs") or 0)
    if not outputs:
        return f"no output was judged twice{from_cache}"
    rate = figures.get("agreement")
    shown = f"{rate * 100:.0f}%" if isinstance(rate, int | float) else "-"
    disagreeing = int(figures.get("disagreeing_outputs") or 0)
    return (
        f"{outputs} output(s) judged more than once ({figures.get('judgements')} judgements): "
        f"{shown} of pairs agree, scores up to {float(figures.get('score_spread') or 0):.2f} "
        f"apart; {disagreeing} output(s) judged inconsistently{from_cache}"
    )


def _task_context(
    task: TaskDetail, view: View, agreement: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    row = next((r for r in view.rows if r.task_id == task.task_id), None)
    pair = [view.role(role) for role in ("candidate", "baseline")]
    cand, base = (task.attempts.get(a.name, []) if a else [] for a in pair)
    diff = word_diff(base[0].output, cand[0].output) if cand and base else None
    tags = [_movement(task.task_id, view)]
    if task.flaky or (row is not None and row.label == "flaky"):
        tags.append("flaky")
    if task.has_error:
        tags.append("errors")
    if agreement is not None and agreement.get("disagreeing_outputs"):
        tags.append("judge-disagrees")
    return {
        "id": task.task_id,
        "prompt": task.prompt,
        "arms": {a.name: task.attempts.get(a.name, []) for a in view.arms},
        "counts": {a.name: row.cells[i] if row else "-" for i, a in enumerate(view.arms)},
        "delta": row.diff if row else "n/a",
        "feedback": row.feedback if row else "",
        "tags": tags,
        "diff": diff,
        "changed": diff is not None and any(op != "same" for op, _ in diff),
        "agreement": agreement_text(agreement) if agreement is not None else "",
    }


def _rate_value(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _interval(comparison: Any) -> dict[str, float] | None:
    """The paired delta and its interval, for the SVG bar (scale -1..+1)."""
    if not isinstance(comparison, Mapping):
        return None
    interval, delta = comparison.get("interval"), comparison.get("delta")
    if not (
        isinstance(interval, Sequence) and len(interval) == 2 and isinstance(delta, int | float)
    ):
        return None
    return {
        "low": float(interval[0]),
        "high": float(interval[1]),
        "delta": float(delta),
        "confidence": float(comparison.get("confidence") or 0.95),
    }


def _decision(artifact: Mapping[str, Any]) -> dict[str, Any] | None:
    """The drawing of what decided: the one-sided bound against the policy's threshold (the
    margin, or 0), the point estimate, and the two-sided interval for reference, on a scale
    that holds them all (x from 10 to DRAWN - 10). None without policy.decided_by."""
    policy = (artifact.get("evaluation") or {}).get("policy")
    decided = policy.get("decided_by") if isinstance(policy, Mapping) else None
    comparison = artifact.get("comparison")
    if not isinstance(decided, Mapping) or not isinstance(comparison, Mapping):
        return None
    figures = [decided.get(k) for k in ("value", "threshold", "one_sided_level")]
    numbers = [float(x) for x in figures if isinstance(x, int | float)]
    interval, delta = comparison.get("interval"), comparison.get("delta")
    if len(numbers) != 3 or not isinstance(delta, int | float):
        return None
    bound, threshold, level = numbers
    span = [bound, threshold, float(delta)]
    if isinstance(interval, Sequence) and len(interval) == 2:
        span += [float(interval[0]), float(interval[1])]
    lo, hi = max(-1.0, min(span) - 0.05), min(1.0, max(span) + 0.05)

    def x(value: float) -> float:
        return round(10 + (value - lo) / (hi - lo) * (DRAWN - 20), 1)

    side = "upper" if decided.get("bound") == "upper" else "lower"
    return {
        "side": side,
        "bound": bound,
        "threshold": threshold,
        "level": f"{level * 100:.2f}".rstrip("0").rstrip(".") + "%",
        "x_bound": x(bound),
        "x_threshold": x(threshold),
        "x_delta": x(float(delta)),
        "x_edge": DRAWN - 10.0 if side == "lower" else 10.0,  # the side the bound rules in
        "width": DRAWN,
        "reference": (x(float(interval[0])), x(float(interval[1])))
        if isinstance(interval, Sequence) and len(interval) == 2
        else None,
        "confidence": float(comparison.get("confidence") or 0.95),
        "ends": (lo, hi),
    }


def _arms(artifact: Mapping[str, Any], view: View) -> list[dict[str, Any]]:
    """A card per arm: its rate, cost and tokens."""
    per_task_cost = cost.per_task(cost.task_costs(artifact, view.result_tables()))
    out = []
    for arm in view.arms:
        usage = arm.usage or {}
        out.append(
            {
                "arm": arm.name,
                "fill": "baseline" if arm.reference else "candidate",
                "label": one_line(arm.label or arm.name),
                "skill": one_line(arm.skill),
                "rate": arm.rate,
                "rate_text": arm.rate_text,
                "cost": float(usage.get("cost_usd") or 0),
                "input_tokens": int(usage.get("input_tokens") or 0),
                "output_tokens": int(usage.get("output_tokens") or 0),
                "cache_read": int(usage.get("cache_read_input_tokens") or 0),
                "cache_write": int(usage.get("cache_creation_input_tokens") or 0),
                "attempts": int(usage.get("attempts") or 0),
                "judge_calls": int(usage.get("judge_calls") or 0),
                "judge_cost": float(usage.get("judge_cost_usd") or 0),
                "per_task": per_task_cost.get(arm.name),
            }
        )
    return out


def _script_json(data: Any) -> str:
    """JSON safe inside <script>: no `</script>`, no `<!--`, no entity surprises."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render_html(artifact: Mapping[str, Any]) -> str:
    """The whole report as one HTML document."""
    import jinja2
    from markupsafe import Markup

    view = read_view(artifact)
    measured = artifact.get("judge_agreement")
    by_task = {
        str(t.get("task_id")): t
        for t in (measured.get("tasks") or [] if isinstance(measured, Mapping) else [])
        if isinstance(t, Mapping)
    }
    tasks = [
        _task_context(t, view, by_task.get(t.task_id))
        for t in from_artifact(artifact, every_arm=True)
    ]
    counts = {
        tag: sum(tag in t["tags"] for t in tasks)
        for tag in ("improved", "regressed", "flaky", "errors", "judge-disagrees")
    }
    data = {
        "verdict": view.verdict,
        "rates": view.rates,
        "tasks": [{"id": t["id"], "tags": t["tags"]} for t in tasks],
    }
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        # missing keys of a foreign artifact render empty
        autoescape=True,
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    cache_notes = [text for label, text in view.notes if label == "cache"]
    return env.get_template("report.html.j2").render(
        view=view,
        tasks=tasks,
        counts=counts,
        arms=_arms(artifact, view),
        interval=_interval(artifact.get("comparison")),
        decision=_decision(artifact),
        decided_label=DECIDED_LABEL,
        reference_label=REFERENCE_LABEL,
        skill=one_line(artifact.get("task_suite_skill_id") or artifact.get("candidate_id") or "?"),
        suite=one_line(artifact.get("task_suite") or "?"),
        run_id=one_line(artifact.get("run_id") or ""),
        created=one_line(artifact.get("created_at") or ""),
        cache_notes=cache_notes,
        data_json=Markup(_script_json(data)),
        observer_lines=summary_lines(artifact.get("observers")),
        reading_text=reading_text,
        trigger_lines=[f"{label} {text}".strip() for label, text in table_info(artifact)],
        arm_model_lines=model_lines(artifact),
        arm_rows=ARM_ROWS,
        arm_triggers=any(a.triggers for a in view.arms),
        pair=[view.role("candidate"), view.role("baseline")],
        task_costs=cost.task_costs(artifact, view.result_tables()),
        lift_per_dollar=cost.lift_per_dollar(artifact),
    )
