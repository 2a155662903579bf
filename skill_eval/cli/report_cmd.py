"""`skill-eval report`: render an evaluation artifact as a table, markdown, JUnit XML, JSON or
HTML."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UsageError
from ..report.formats import FORMATS, renderer
from .choices import Choice


def _improve_report(path: Path, fmt: str) -> str | None:
    """The report of an improve run (a run directory or its ranking.json); None when `path` is
    an evaluation artifact."""
    import json

    from ..report.improve_html import is_improve_ranking, render_improve_html

    ranking = path / "ranking.json" if path.is_dir() else path
    if path.is_dir() and not ranking.is_file():
        raise UsageError(f"{path}: a directory without ranking.json (not an improve run)")
    if ranking.name != "ranking.json":
        return None
    try:
        data = json.loads(ranking.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # artifact.read names the problem
    if not is_improve_ranking(data):
        return None
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    if fmt != "html":
        raise UsageError(f"{ranking}: an improve run renders as html or json, not {fmt}")
    return render_improve_html(data)


def _artifact_report(artifact_path: str, fmt: str) -> str:
    from ..engine import artifact

    data = artifact.read(Path(artifact_path))
    return renderer(fmt)(data, str(Path(artifact_path).resolve()))


@click.command("report")
@click.argument("artifact_path", metavar="ARTIFACT", type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=Choice(list(FORMATS)),
    default="table",
    show_default=True,
    help="What to render.",
)
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    help="Write the report to FILE (atomically) instead of stdout.",
)
def command(artifact_path: str, fmt: str, output: str | None) -> None:
    """Render the evaluation ARTIFACT written by `skill-eval run`, or an improve run (its
    directory or its ranking.json) as html or json.

    \b
    table     the end-of-run summary, plain text
    markdown  for a pull-request comment or $GITHUB_STEP_SUMMARY
    junit     JUnit XML, one test case per task (the candidate's result) and one for
              the verdict, failing as the exit code of `run` would
    json      the artifact itself, re-checked against its schema
    html      one self-contained page (no network): the arms side by side, word
              diffs, judge details, filters and search

    Exit codes: 0 rendered, 2 missing, unreadable or invalid artifact.
    """
    from ..core.paths import atomic_write_text

    text = _improve_report(Path(artifact_path), fmt) or _artifact_report(artifact_path, fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        atomic_write_text(Path(output), text)
    except OSError as exc:  # the path the user gave: bad input, not the machine's fault
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}", path=output) from None
