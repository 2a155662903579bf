"""Human and machine reports of an evaluation artifact: the end-of-run table for the terminal,
markdown for a pull request or `$GITHUB_STEP_SUMMARY` (report/markdown.py), JUnit XML
(report/junit.py), and the artifact re-checked. What they show is read in report/view.py.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..engine import artifact as artifact_mod
from . import cost
from . import triggers as trigger_report
from .arm_table import model_lines
from .arm_table import rows as arm_rows
from .junit import render_junit
from .markdown import md_escape, render_markdown
from .text import one_line
from .verdict_text import DECIDED_LABEL, REFERENCE_LABEL
from .view import Row, View, feedback, interval_text, listing, read_view, tokens_text

FEEDBACK_CHARS = 100
MAX_TASK_ROWS = 40  # over this many tasks the table shows the changed ones and counts the rest


# --- the terminal table -------------------------------------------------------------------


def _align(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def render_table(artifact: Mapping[str, Any]) -> str:
    """Plain aligned text for stderr at the end of a run: per task each arm's pass counts,
    the difference of the verdict's pair and the judge's feedback on failures (over many
    tasks, the ones that changed and counts for the rest); then the verdict, the bound that
    decided, rates; with --arm, every arm's figures side by side."""
    v = read_view(artifact)
    shard = artifact.get("shard")
    lines = [
        f"shard {shard.get('index')}/{shard.get('count')}: {shard.get('attempts')} "
        "attempts recorded; `skill-eval merge` of every shard gives the table"
        if isinstance(shard, Mapping)
        else "no tasks were run"
    ]
    if v.rows:
        lines = _task_lines(artifact, v)
    info = _info(artifact, v)
    shown = [(label, text) for label, text in info if text]
    width = max(len(label) for label, _ in shown)
    lines += [""] + [f"{label.ljust(width)}  {text}" for label, text in shown]
    if v.listed:  # --arm: every arm's figures side by side
        table = [[one_line(cell, FEEDBACK_CHARS) for cell in row] for row in arm_rows(v.arms)]
        lines += ["", "arms side by side (each compared with the reference)", *_align(table)]
        if by_model := model_lines(artifact):  # arms on several models
            # one_line trims; the indentation is the lines' own
            lines += [
                "",
                *(x[: len(x) - len(x.lstrip())] + one_line(x, FEEDBACK_CHARS) for x in by_model),
            ]
    return "\n".join(lines) + "\n"


def _task_lines(artifact: Mapping[str, Any], v: View) -> list[str]:
    """The per-task table; over MAX_TASK_ROWS tasks, the ones that changed (regressed
    first, at most MAX_TASK_ROWS) and one line counting the rest."""
    # empty when nothing cost anything (the mock)
    costs = cost.task_costs(artifact, v.result_tables())
    names = [a.name for a in v.arms]
    rows, rest = v.rows, ""
    if len(rows) > MAX_TASK_ROWS:
        rows, rest = _changed(v)
    diff = "diff" + (f" ({v.pair_names})" if v.pair_names else "")
    header = ["task", *names] + ([diff] if v.paired else [])
    header += [f"{arm} $/try" for arm in names if costs] + ["feedback"]
    table = _align(
        [header]
        + [
            [r.task_id, *r.cells]
            + ([r.diff] if v.paired else [])
            + [cost.cell(costs.get(r.task_id, {}), arm) for arm in names if costs]
            + [one_line(r.feedback, FEEDBACK_CHARS)]
            for r in rows
        ]
    )
    return table + ([rest] if rest else [])


def _changed(v: View) -> tuple[list[Any], str]:
    """Over many tasks: the rows that changed, regressed first (at most MAX_TASK_ROWS), and
    a line counting every other task by what it did in every arm."""
    moved = [r for r in v.rows if r.diff not in ("0", "n/a")]
    moved.sort(key=lambda r: (r.task_id not in v.regressed, r.diff.startswith("+")))
    shown = moved[:MAX_TASK_ROWS]
    others = Counter(_kind(r, v.paired) for r in v.rows if r.diff in ("0", "n/a"))
    counts = ", ".join(f"{n:,} {kind}" for kind, n in others.most_common())
    more = len(moved) - len(shown)
    head = f"... {more:,} more changed; " if more else "... "
    return shown, (
        f"{head}{sum(others.values()):,} of {len(v.rows):,} tasks unchanged"
        + (f" ({counts})" if counts else "")
        + "; every task is in the artifact and the HTML report (skill-eval report ARTIFACT "
        "--format html)"
    )


def _kind(row: Row, paired: bool) -> str:
    if row.diff not in ("0", "n/a"):
        return "changed"
    cells = row.cells
    every = "both arms" if len(cells) == 2 else "every arm"
    if row.diff == "n/a" or any("err" in c or c == "-" for c in cells):
        return "in error"
    if all(c.startswith("0/") for c in cells):
        return f"failed in {every}" if paired else "failed"
    if all(c.split("/")[0] == c.split("/")[-1] for c in cells):
        return f"passed in {every}" if paired else "passed"
    return f"alike in {every}"


def _info(artifact: Mapping[str, Any], v: View) -> list[tuple[str, str | None]]:
    """The labelled lines under the table, the verdict and the bound that decided first."""
    rates = "  ".join(f"{a.name} {a.rate_text}" for a in v.arms)
    if v.paired:
        rates += f"  delta {v.delta}" + (f" ({v.pair_names})" if v.pair_names else "")
    interval = interval_text(artifact.get("comparison"), with_method=False)  # methods are long
    if interval and v.bound:  # two intervals at two levels: say which one the verdict stands on
        interval += " (two-sided; describes the difference, decides nothing)"
    described = [a for a in v.arms if a.described]
    arms = (
        "; ".join(f"{a.name}: {one_line(a.described)}" for a in described)
        if v.paired or len(described) > 1
        else ""
    )
    info = [
        ("verdict", v.headline + (f": {v.reason}" if v.reason else "")),
        (DECIDED_LABEL, v.bound or v.decision),
        ("arms", arms),
        ("pass rate", rates),
        (REFERENCE_LABEL if v.decision else "", interval),
        ("regressed", listing(v.regressed)),
        ("improved", listing(v.improved)),
    ]
    info.append(("errors", _errors_text(v)))
    info += trigger_report.table_info(artifact)
    info += v.notes
    info.append(
        (
            "cost",
            "; ".join(
                f"{arm} ${float(u.get('cost_usd') or 0):.4f} ({tokens_text(u)} tokens)"
                + _judges_cost(u)
                for arm, u in v.usage.items()
            ),
        )
    )
    info.append(("cost vs lift", cost.lift_per_dollar(artifact)))
    info += [("warning", w) for w in v.warnings]
    return info


def _errors_text(v: View) -> str:
    """How many attempts ended in error, per arm (nothing when none did)."""
    errors = v.errors
    if not errors:
        return ""
    order = [a.name for a in v.arms] if v.listed else ["candidate", "baseline"]
    named = dict.fromkeys([*order, *(str(e.get("arm")) for e in errors)])
    split = ", ".join(
        f"{arm} {n}" for arm in named if (n := sum(e.get("arm") == arm for e in errors))
    )
    return f"{len(errors)} attempts ended in error ({split}); not counted as failures"


# --- json and dispatch --------------------------------------------------------------------


def render_json(artifact: Mapping[str, Any]) -> str:
    """The artifact itself, re-checked against its JSON Schema (raises ArtifactError)."""
    artifact_mod.validate(artifact)
    return json.dumps(artifact, indent=2, ensure_ascii=False) + "\n"


__all__ = [
    "feedback",
    "md_escape",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_table",
]


def _judges_cost(usage: Mapping[str, Any]) -> str:
    """`, judges $X (N calls)` of an arm's model-graded judgements, when it had any."""
    calls = int(usage.get("judge_calls") or 0)
    if not calls:
        return ""
    cost = float(usage.get("judge_cost_usd") or 0)
    return f", judges ${cost:.4f} ({calls} call{'s' if calls != 1 else ''})"
