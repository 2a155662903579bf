"""One table across the skills of a run over several skills (`skill-eval run skills/`): per
skill evaluation its tasks, both arms' pass rates, the lift with its interval, and the
verdict; a skill with no evals is a row saying so. Plain text for stderr, markdown for a pull
request's job summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .markdown import md_escape
from .text import one_line
from .verdict_text import MOCK_MARK

HEADERS = ("skill", "tasks", "candidate", "baseline", "lift [95% interval]", "verdict")


@dataclass(frozen=True)
class SkillRow:
    """A skill's evaluation (`artifact`), or a skill that was not evaluated (`note` says why)."""

    skill: str
    artifact: Mapping[str, Any] | None = None
    note: str = ""


def _rate(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else "-"


def _lift(artifact: Mapping[str, Any]) -> str:
    comparison = artifact.get("comparison") or {}
    delta, interval = comparison.get("delta"), comparison.get("interval")
    if not isinstance(delta, int | float):
        return "-"
    text = f"{delta * 100:+.0f} pts"
    if isinstance(interval, list | tuple) and len(interval) == 2:
        low, high = interval
        text += f" [{low * 100:+.0f}, {high * 100:+.0f}]"
    return text


def _verdict(artifact: Mapping[str, Any]) -> str:
    evaluation = artifact.get("evaluation") or {}
    verdict = str(evaluation.get("verdict") or "?").upper()
    if evaluation.get("insufficient") is True:
        verdict += " (not enough evidence)"
    if evaluation.get("mocked") is True:  # no model made it
        verdict += f" {MOCK_MARK}"
    return verdict


def row_cells(row: SkillRow) -> tuple[str, ...]:
    if row.artifact is None:
        return (row.skill, "-", "-", "-", "-", row.note or "not run")
    evaluation = row.artifact.get("evaluation") or {}
    baseline = "none" if not row.artifact.get("baseline_results") else None
    return (
        row.skill,
        str(evaluation.get("total_tasks", "-")),
        _rate(evaluation.get("execution_pass_rate")),
        baseline or _rate(evaluation.get("baseline_pass_rate")),
        _lift(row.artifact) if baseline is None else "-",
        _verdict(row.artifact),
    )


def skills_text(rows: Sequence[SkillRow]) -> str:
    """The table as aligned plain text."""
    cells = [HEADERS, *(tuple(one_line(c) for c in row_cells(r)) for r in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADERS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    )


def _md(text: str) -> str:
    """One cell: what a pull request names (a skill folder, a task id) shown as text, never
    as markup: `<!--` would hide every later row, a `|` or newline make cells or rows."""
    return md_escape(one_line(text))


def skills_markdown(
    rows: Sequence[SkillRow], *, title: str = "skill-eval", evals_changed: Sequence[str] = ()
) -> str:
    """The table as markdown, under a heading; then the skills whose evals the change
    touched (`evals_changed`), named so a reviewer looks at what judged them."""
    if not rows:
        return f"## {title}\n\nNo skill with evals to run (none changed, or none has evals).\n"
    lines = [
        f"## {title}",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    lines += ["| " + " | ".join(_md(c) for c in row_cells(r)) + " |" for r in rows]
    if evals_changed:
        named = ", ".join(_md(label) for label in evals_changed)
        lines += ["", f"Evals changed in this pull request: {named}."]
    return "\n".join(lines) + "\n"


__all__ = ["SkillRow", "skills_markdown", "skills_text"]
