"""The HTML report of an improve run, rendered from its ranking.json: the loop's decision, one
row per iteration (decision, train and holdout scores, tokens, cost) and the scores per
iteration as a small inline SVG line. Same rules as report/html.py: one self-contained file,
autoescaped, no network.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .html import TEMPLATES
from .text import one_line

CHART_W, CHART_H, PAD = 360, 120, 20


def is_improve_ranking(data: Any) -> bool:
    """A ranking artifact written by `skill-eval improve` (not an evaluation artifact)."""
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("improve"), Mapping)
        and isinstance(data.get("scored_candidates"), list)
    )


def _score(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and 0 <= value <= 1 else None


def _iterations(improve: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for item in improve.get("iterations") or []:
        if not isinstance(item, Mapping):
            continue
        rows.append(
            {
                "iteration": item.get("iteration"),
                "phase": one_line(item.get("phase") or ""),
                "decision": one_line(item.get("decision") or ""),
                "reason": one_line(item.get("reason") or ""),
                "train": _score(item.get("train_score")),
                "holdout": _score(item.get("holdout_score")),
                "tokens": int(item.get("tokens") or 0),
                "cost": float(item.get("cost_usd") or 0),
                "hash": one_line(str(item.get("skill_hash") or ""))[:12],
            }
        )
    return rows


def _line(rows: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    """SVG polyline points (and dots) of one score over the iterations; y=1 at the top."""
    n = len(rows)
    step = (CHART_W - 2 * PAD) / max(n - 1, 1)
    dots = [
        (round(PAD + i * step, 1), round(CHART_H - PAD - r[key] * (CHART_H - 2 * PAD), 1))
        for i, r in enumerate(rows)
        if r[key] is not None
    ]
    if not dots:
        return None
    return {"key": key, "points": " ".join(f"{x},{y}" for x, y in dots), "dots": dots}


def render_improve_html(ranking: Mapping[str, Any]) -> str:
    """The improve run's report as one HTML document."""
    import jinja2

    improve = ranking.get("improve") or {}
    rows = _iterations(improve)
    lines = [line for line in (_line(rows, "train"), _line(rows, "holdout")) if line]
    best = next(
        (
            c
            for c in ranking.get("scored_candidates") or []
            if isinstance(c, Mapping) and c.get("best")
        ),
        None,
    )
    target = ranking.get("target") if isinstance(ranking.get("target"), Mapping) else {}
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("improve.html.j2").render(
        rows=rows,
        lines=lines,
        chart={"w": CHART_W, "h": CHART_H, "pad": PAD},
        skill=one_line((target or {}).get("name") or "?"),
        run_id=one_line(ranking.get("run_id") or ""),
        decision=one_line(improve.get("decision") or "?"),
        reason=one_line(improve.get("reason") or ""),
        gate=one_line(improve.get("gate") or ""),
        proposed=bool(improve.get("proposed")),
        best=one_line((best or {}).get("id") or ""),
        tokens=int(improve.get("tokens") or 0),
        cost=float(improve.get("cost_usd") or 0),
        train_tasks=len(improve.get("train_tasks") or []),
        holdout_tasks=len(improve.get("holdout_tasks") or []),
    )
