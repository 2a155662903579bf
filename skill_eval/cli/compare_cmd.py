"""`skill-eval compare A.json B.json`: how the candidate moved between two runs of one suite."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .common import EXIT_FAIL
from .views import echo_lines, markup, rich_console, use_rich


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}".rstrip("0").rstrip(".") or "0"


def _signed(value: float) -> str:
    return f"{value:+.4f}".rstrip("0").rstrip(".")


def summary_lines(diff: Any, names: tuple[str, str]) -> list[tuple[str, str]]:
    """(label, text) lines under the table: verdicts, rates, interval, cost, warnings."""
    lines = [
        ("A", f"{names[0]} (verdict {diff.verdicts[0]})"),
        ("B", f"{names[1]} (verdict {diff.verdicts[1]})"),
    ]
    s = diff.stats
    if s is not None and s.delta is not None:
        interval = (
            ""
            if s.interval is None
            else (
                f", {s.confidence * 100:g}% paired interval [{_signed(s.interval[0])}, "
                f"{_signed(s.interval[1])}]"
            )
        )
        lines.append(
            (
                "pass rate",
                f"{s.baseline_rate:.4f} -> {s.candidate_rate:.4f} "
                f"(change {_signed(s.delta)}{interval} over {s.n_tasks} "
                f"matched tasks; p = {s.mcnemar_p:g})",
            )
        )
    else:
        lines.append(("pass rate", "n/a (no task judged in both runs)"))
    lines.append(("regressed", ", ".join(diff.regressed) or "none"))
    lines.append(("improved", ", ".join(diff.improved) or "none"))
    if diff.other_changes:
        lines.append(
            ("other", ", ".join(f"{t.task_id} {t.before} -> {t.after}" for t in diff.other_changes))
        )
    lines.append(
        (
            "cost",
            "; ".join(
                f"{arm} ${a:.4f} -> ${b:.4f} ({_signed(b - a)})"
                for arm, (a, b) in diff.cost.items()
                if a or b
            )
            or "$0",
        )
    )
    lines += [("warning", w) for w in diff.warnings]
    return lines


def flipped_rows(diff: Any) -> list[list[str]]:
    return [
        [t.task_id, t.before, t.after, _rate(t.rate_before), _rate(t.rate_after)]
        for t in diff.tasks
        if t.before != t.after or t.rate_before != t.rate_after
    ]


def _rich(diff: Any, names: tuple[str, str]) -> None:
    from rich.table import Table

    console = rich_console()
    rows = flipped_rows(diff)
    if rows:
        table = Table(title="tasks that changed (candidate arm)", title_justify="left")
        for column in ("task", "A", "B", "rate A", "rate B"):
            table.add_column(column)
        colour = {"passed": "green", "failed": "red", "error": "yellow"}
        for row in rows:
            table.add_row(
                markup(row[0]),
                *(f"[{colour.get(c, 'dim')}]{c}[/]" for c in row[1:3]),
                row[3],
                row[4],
            )
        console.print(table)
    else:
        console.print("no task changed")
    grid = Table.grid(padding=(0, 2))
    for label, text in summary_lines(diff, names):
        style = "red" if label in ("regressed", "warning") and text != "none" else ""
        grid.add_row(f"[bold]{label}[/]", f"[{style}]{markup(text)}[/]" if style else markup(text))
    console.print(grid, markup=True, highlight=False)


def _plain(diff: Any, names: tuple[str, str]) -> None:
    rows = flipped_rows(diff)
    lines = (
        ["no task changed"]
        if not rows
        else ["tasks that changed (candidate arm):"]
        + ["  " + line for line in _aligned([["task", "A", "B", "rate A", "rate B"], *rows])]
    )
    width = max(len(label) for label, _ in summary_lines(diff, names))
    lines += [""] + [f"{label.ljust(width)}  {text}" for label, text in summary_lines(diff, names)]
    echo_lines(lines)


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


@click.command("compare")
@click.argument("artifact_a", metavar="A.json", type=click.Path(dir_okay=False))
@click.argument("artifact_b", metavar="B.json", type=click.Path(dir_okay=False))
@click.option(
    "--fail-on-regression", is_flag=True, help="Exit 1 when a task that passed in A fails in B."
)
@click.option("--plain", is_flag=True, help="Plain text even on a terminal.")
def command(artifact_a: str, artifact_b: str, fail_on_regression: bool, plain: bool) -> None:
    """Compare two artifacts of the same suite (e.g. last week's run and today's).

    Lists the tasks whose candidate result flipped, the pass-rate change B - A with a paired
    interval over the tasks both runs judged, and the cost change.

    Exit codes: 0 compared, 1 a task regressed (with --fail-on-regression), 2 unreadable
    artifacts or no task in common.
    """
    from ..engine import artifact
    from ..report.compare import compare_artifacts

    diff = compare_artifacts(artifact.read(Path(artifact_a)), artifact.read(Path(artifact_b)))
    names = (artifact_a, artifact_b)
    (_rich if use_rich(plain) else _plain)(diff, names)
    if fail_on_regression and diff.regressed:
        sys.exit(EXIT_FAIL)
