"""The markdown report of an evaluation artifact, for a pull-request comment or
`$GITHUB_STEP_SUMMARY`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import cost
from . import triggers as trigger_report
from .arm_table import model_lines
from .arm_table import rows as arm_rows
from .arm_view import ArmView
from .text import CONTROL_CHARS, one_line
from .verdict_text import DECIDED_LABEL, REFERENCE_LABEL
from .view import View, read_view, tokens_text

MD_FEEDBACK_CHARS = 120
MD_MAX_ERRORS = 20
MD_COLLAPSE_TASKS = 25
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def md_escape(text: Any, limit: int | None = None) -> str:
    """Text for one markdown table cell: no control or bidi characters, HTML and markdown
    specials escaped (`|` included), `@` mentions defused, newlines as `<br>`."""
    raw = CONTROL_CHARS.sub(" ", "" if text is None else str(text))
    raw = raw.replace("\r\n", "\n").replace("\r", "\n").strip()
    if limit is not None and len(raw) > limit:
        raw = raw[: limit - 3] + "..."
    raw = raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    raw = _MENTION.sub("&#64;", raw)  # `@team` from model output must not notify anyone
    return _MD_SPECIAL.sub(r"\\\1", raw).replace("\n", "<br>")


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> list[str]:
    marks = [":---" if a == "l" else "---:" for a in align[: len(header)]]
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(marks) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _title(arm: ArmView) -> str:
    """A column's heading: `Candidate`, `Baseline`, or an --arm arm's name as given."""
    return arm.name.capitalize() if arm.name == arm.role else md_escape(arm.name)


def _md_rates(v: View) -> list[str]:
    arms = v.arms
    pad = [""] if v.paired else []

    def row(title: str, cell: Any) -> list[str]:
        return [title, *(cell(a) for a in arms), *pad]

    rows = [["Pass rate", *(a.rate_text for a in arms)] + ([v.delta] if v.paired else [])]
    if v.usage:
        rows.append(row("Cost (USD)", lambda a: f"{float(_usage(a).get('cost_usd') or 0):.4f}"))
        if any(_usage(a).get("judge_calls") for a in arms):
            rows.append(
                row(
                    "Judges' cost (USD)",
                    lambda a: f"{float(_usage(a).get('judge_cost_usd') or 0):.4f}",
                )
            )
        rows.append(
            row("Tokens (in + cache write + cache read / out)", lambda a: tokens_text(_usage(a)))
        )
    if v.errors:
        rows.append(
            row("Attempts in error", lambda a: str(sum(e.get("arm") == a.name for e in v.errors)))
        )
    delta = "Delta" + (f" ({md_escape(v.pair_names)})" if v.pair_names else "")
    header = ["", *(_title(a) for a in arms)] + ([delta] if v.paired else [])
    return _md_table(header, rows, "l" + "r" * (len(header) - 1))


def _usage(arm: ArmView) -> Mapping[str, Any]:
    return arm.usage or {}


def _md_errors(errors: Sequence[Mapping[str, Any]]) -> list[str]:
    groups: dict[tuple[str, str, str], list[str]] = {}
    for e in errors:  # the same error on every attempt of a task is one row
        key = (str(e.get("arm")), str(e.get("task_id")), str(e.get("error")))
        groups.setdefault(key, []).append(str(e.get("index")))
    out = [f"### Errors ({len(errors)} attempts, not counted as failures)", ""]
    out += _md_table(
        ["Arm", "Task", "Attempts", "Error"],
        (
            [md_escape(arm), md_escape(task), ", ".join(indexes), md_escape(msg, MD_FEEDBACK_CHARS)]
            for (arm, task, msg), indexes in list(groups.items())[:MD_MAX_ERRORS]
        ),
        "llll",
    )
    if len(groups) > MD_MAX_ERRORS:
        out += ["", f"... and {len(groups) - MD_MAX_ERRORS} more."]
    return out + [""]


def render_markdown(artifact: Mapping[str, Any], *, artifact_path: str | None = None) -> str:
    """Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`. `artifact_path`
    replaces the artifact's own `truth_anchor` in the footer (e.g. after a download)."""
    v = read_view(artifact)
    out = _md_head(artifact, v) + _md_rates(v) + [""]
    if v.interval:
        shown = md_escape(v.interval)
        if v.decision:  # the policy's test decides, at its own level
            out += [f"{REFERENCE_LABEL.capitalize()} (not what decides the verdict): {shown}.", ""]
        else:
            out += [f"{shown[0].upper() + shown[1:]}.", ""]
    if lift := cost.lift_per_dollar(artifact):
        out += [f"Cost against lift: {md_escape(lift)}.", ""]
    costs = cost.task_costs(artifact, v.result_tables())
    out += _md_arms(artifact, v) + _md_tasks(v, costs) + _md_changes(v)
    out += trigger_report.markdown(artifact, md_escape)
    if v.errors:
        out += _md_errors(v.errors)
    if v.notes:
        out += [
            "### Notes",
            "",
            *(f"- **{label}:** {md_escape(text)}" for label, text in v.notes),
            "",
        ]
    if v.warnings:
        out += ["### Warnings", "", *(f"- {md_escape(w)}" for w in v.warnings), ""]
    return "\n".join(out + ["---", "", _md_footer(artifact, artifact_path), ""])


def _md_head(artifact: Mapping[str, Any], v: View) -> list[str]:
    """The headline, what was compared with what, and why the verdict is what it is."""
    cand, base = v.role("candidate"), v.role("baseline")
    against = (
        f"vs {md_escape((base.described if base else '') or 'baseline')}"
        if v.paired
        else "(no baseline)"
    )
    out = [
        f"## skill-eval: {v.headline}",
        "",
        f"Suite **{md_escape(artifact.get('task_suite_skill_id') or '?')}**: candidate "
        f"**{md_escape(artifact.get('candidate_id'))}** "
        f"— {md_escape((cand.described if cand else '') or 'candidate')} — {against}.",
        "",
    ]
    if v.reason:
        out += [f"**Reason:** {md_escape(v.reason)}", ""]
    if v.bound or v.decision:  # the bound that decided, against its threshold, leads
        out += [f"**{DECIDED_LABEL.capitalize()}:** {md_escape(v.bound or v.decision)}", ""]
    return out


def _md_arms(artifact: Mapping[str, Any], v: View) -> list[str]:
    """--arm: every arm's figures side by side, one column each (each arm's result on each
    task is a column of the per-task table)."""
    if not v.listed:
        return []
    header, *figures = arm_rows(v.arms)
    table = _md_table(
        [md_escape(h) for h in header],
        ([md_escape(cell) for cell in row] for row in figures),
        "l" * len(header),
    )
    by_model = model_lines(artifact)
    return [
        "### Arms",
        "",
        "Each arm runs the candidate skill as it says; every other arm is compared with the "
        "reference (the verdict above: the first of them).",
        "",
        *table,
        "",
        *(f"    {line}" for line in by_model),
        *([""] if by_model else []),
    ]


def _md_tasks(v: View, costs: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The per-task table, folded away in a long suite; with each arm's cost of one attempt
    when attempts cost anything."""
    if not v.rows:
        return ["No task was run.", ""]
    priced = v.arms if costs else []
    diff = "Diff" + (f" ({md_escape(v.pair_names)})" if v.pair_names else "")
    header = ["Task", *(_title(a) for a in v.arms)] + ([diff] if v.paired else [])
    header += [f"{_title(a)} $/try" for a in priced] + ["Feedback"]
    per_task = _md_table(
        header,
        (
            [md_escape(r.task_id), *r.cells]
            + ([r.diff] if v.paired else [])
            + [cost.cell(costs.get(r.task_id, {}), a.name) for a in priced]
            + [md_escape(f"[{r.label}] {r.feedback}" if r.label else r.feedback, MD_FEEDBACK_CHARS)]
            for r in v.rows
        ),
        "l" + "r" * (len(header) - 2) + "l",
    )
    if len(v.rows) > MD_COLLAPSE_TASKS:
        return [
            f"<details><summary>Per task ({len(v.rows)} tasks)</summary>",
            "",
            *per_task,
            "",
            "</details>",
            "",
        ]
    return ["### Per task", "", *per_task, ""]


def _md_changes(v: View) -> list[str]:
    """The regressed tasks with their feedback, then the improved ones."""
    notes = {r.task_id: r.feedback for r in v.rows}
    out: list[str] = []
    for title, ids, show in (
        ("Regressions", v.regressed, True),
        ("Improvements", v.improved, False),
    ):
        if ids:
            out += [
                f"### {title} ({len(ids)})",
                "",
                *(
                    f"- {md_escape(t)}"
                    + (
                        f": {md_escape(notes[t], MD_FEEDBACK_CHARS)}"
                        if show and notes.get(t)
                        else ""
                    )
                    for t in ids
                ),
                "",
            ]
    return out


def _md_footer(artifact: Mapping[str, Any], artifact_path: str | None) -> str:
    """One line: what the run was (suite, executor, model, samples) and where its artifact is."""
    manifest = artifact.get("manifest") or {}
    executor = manifest.get("executor") or {}
    footer = [
        f"suite sha256 {str((manifest.get('task_suite') or {}).get('sha256'))[:12]}",
        f"executor {executor.get('kind', '?')}",
        f"model {manifest.get('model') or executor.get('model') or 'n/a'}",
        f"pass_k {artifact.get('pass_k', '?')}",
        f"samples {manifest.get('samples', artifact.get('pass_k', '?'))}",
        f"skill-eval {manifest.get('harness_version', '?')}",
    ]
    where = one_line(artifact_path or artifact.get("truth_anchor") or "?")
    fence = "``" if "`" in where else "`"  # a path reads best as code, unescaped
    return " · ".join(map(md_escape, footer)) + f" · artifact {fence}{where}{fence}"
