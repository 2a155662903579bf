"""What the offline gate found (interop/offline_gate.py), as markdown for the job summary and
the pull-request comment, and as plain text for the terminal. Everything a pull request names
(skill folders, eval ids, reasons that quote them) is shown as text: escaped for markdown and
HTML, on one line, so a `<!--`, a `|` or a newline cannot hide or make a row.

It says whether the changed skills' evals are sound, never whether a skill passes: no model
answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .markdown import md_escape
from .text import one_line

TITLE = "skill-eval offline gate: are the changed skills' evals sound?"
NOT_A_VERDICT = (
    "No model was called: this checks the evals each changed skill is judged by (they load, "
    "every deterministic check passes the task's reference and fails an empty output, the "
    "skill lints). It says nothing of whether the skills are better or worse; a measured run "
    "(a key, `mode: measured`) does."
)
MAX_LISTED = 20  # problems (and eval ids) listed per skill; the rest are counted
HEADERS = ("skill", "evals", "tasks", "checked offline", "not checked offline", "evals are")


class Check(Protocol):  # interop.offline_gate.SkillCheck, read here (report ranks below interop)
    skill: Any
    outcome: str
    problems: list[str]
    tasks: int
    checked: list[str]
    model_graded: list[str]
    triggers: int
    unchecked: list[str]
    notes: list[str]


class Report(Protocol):
    @property
    def skills(self) -> tuple[Any, ...]: ...

    @property
    def ref(self) -> str | None: ...

    @property
    def evals_from(self) -> str: ...

    @property
    def jail_note(self) -> str | None: ...

    @property
    def unjudged_fails(self) -> bool: ...

    @property
    def exit_code(self) -> int: ...


def _evals(check: Check) -> str:
    skill = check.skill
    if skill.state == "unjudged":
        return "none"
    if skill.state == "removed":
        return "removed in this pull request"
    source = "the base branch's" if skill.evals_from == "base" else "its own"
    return source + (" (changed in this pull request)" if skill.evals_changed else "")


def _not_checked(check: Check) -> str:
    parts = []
    if check.model_graded:
        parts.append(f"{len(check.model_graded)} model-graded")
    if check.triggers:
        parts.append(f"{check.triggers} trigger queries")
    if check.unchecked:
        parts.append(f"{len(check.unchecked)} could not run here")
    return ", ".join(parts) or "-"


def _result(check: Check, unjudged_fails: bool) -> str:
    if check.outcome == "not judged":
        return "NOT JUDGED: no evals" if unjudged_fails else "not judged (no evals)"
    if check.outcome in ("not sound", "evals removed"):
        return f"NOT SOUND: {check.problems[0]}" if check.problems else "NOT SOUND"
    return check.outcome


def cells(check: Check, unjudged_fails: bool) -> tuple[str, ...]:
    judged = check.outcome not in ("not judged", "evals removed")
    return (
        check.skill.label,
        _evals(check),
        str(check.tasks) if judged else "-",
        str(len(check.checked)) if judged else "-",
        _not_checked(check) if judged else "-",
        _result(check, unjudged_fails),
    )


def _cell(text: str) -> str:
    return md_escape(one_line(text), 300)


def _details(check: Check) -> list[str]:
    """The skill's problems, what was not checked offline and why, and its notes."""
    out: list[str] = []
    label = md_escape(one_line(check.skill.label))
    sections = (
        ("Problems", check.problems),
        ("Could not be checked here", check.unchecked),
        ("Model-graded, not checked offline", check.model_graded),
        ("Notes", check.notes),
    )
    for title, items in sections:
        if not items:
            continue
        out += [f"**{label}: {title.lower()}** ({len(items)})", ""]
        out += [f"- {md_escape(one_line(item), 400)}" for item in items[:MAX_LISTED]]
        if len(items) > MAX_LISTED:
            out.append(f"- ... and {len(items) - MAX_LISTED} more")
        out.append("")
    return out


def _headline(report: Report) -> str:
    code = report.exit_code
    if not report.skills:
        return "No changed skill: nothing to check."
    if code == 0 and all(s.outcome == "not judged" for s in report.skills):
        return "No changed skill has evals: nothing was checked."
    if code == 0:
        return "The changed skills' evals are sound."
    if code == 3:
        return "Some evals could not be checked on this machine (see below)."
    return "Some changed skills' evals are not sound, or the change left a skill unjudged."


def gate_markdown(report: Report) -> str:
    """The report as markdown (job summary, pull-request comment)."""
    lines = [f"## {TITLE}", "", f"**{_headline(report)}**", "", NOT_A_VERDICT, ""]
    if report.jail_note:
        lines += [md_escape(report.jail_note), ""]
    if report.ref:
        source = (
            "the base branch's evals where it has them"
            if report.evals_from == "base"
            else ("each skill's evals as this change has them")
        )
        lines += [f"Changed since `{md_escape(one_line(report.ref))}`; judged by {source}.", ""]
    if report.skills:
        lines += ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += [
            "| " + " | ".join(_cell(c) for c in cells(check, report.unjudged_fails)) + " |"
            for check in report.skills
        ]
        lines.append("")
        changed = [c.skill.label for c in report.skills if c.skill.evals_changed]
        if changed:
            named = ", ".join(md_escape(one_line(label)) for label in changed)
            lines += [f"Evals changed in this pull request: {named}.", ""]
        for check in report.skills:
            lines += _details(check)
    return "\n".join(lines) + "\n"


def gate_text(report: Report) -> str:
    """The report as aligned plain text for the terminal."""
    rows: list[Sequence[str]] = [HEADERS]
    for check in report.skills:
        rows.append(tuple(one_line(cell, 120) for cell in cells(check, report.unjudged_fails)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    table = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines = [TITLE, _headline(report), *(table if report.skills else [])]
    if report.jail_note:
        lines.insert(1, report.jail_note)
    for check in report.skills:
        label = one_line(check.skill.label)
        lines += [f"{label}: {one_line(p, 400)}" for p in check.problems]
        lines += [f"{label}: not checked here: {one_line(u, 400)}" for u in check.unchecked]
        lines += [f"{label}: note: {one_line(n, 400)}" for n in check.notes]
    return "\n".join(lines) + "\n"


__all__ = ["NOT_A_VERDICT", "TITLE", "cells", "gate_markdown", "gate_text"]
