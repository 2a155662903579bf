"""`skill-eval report`: render an evaluation artifact as a table, markdown, JUnit XML, JSON or
HTML."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import SkillEvalError
from .common import EXIT_USAGE, fail


def _one_line(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else "invalid artifact"
    return f"{lines[0]} (and {len(lines) - 1} more problem{'s' if len(lines) > 2 else ''})"


@click.command("report")
@click.argument("artifact_path", metavar="ARTIFACT", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "junit", "json", "html"]),
              default="table", show_default=True, help="What to render.")
@click.option("--output", "-o", metavar="FILE",
              help="Write the report to FILE (atomically) instead of stdout.")
def command(artifact_path: str, fmt: str, output: str | None) -> None:
    """Render the evaluation ARTIFACT written by `skill-eval run`.

    \b
    table     the end-of-run summary, plain text
    markdown  for a pull-request comment or $GITHUB_STEP_SUMMARY
    junit     JUnit XML, one test case per task (the candidate's result) and one for
              the verdict, failing as the exit code of `run` would
    json      the artifact itself, re-checked against its schema
    html      one self-contained page (no network): both arms side by side, word
              diffs, judge details, filters and search

    Exit codes: 0 rendered, 2 missing, unreadable or invalid artifact.
    """
    from .. import artifact, report
    from ..paths import atomic_write_text

    try:
        data = artifact.read(Path(artifact_path))
        if fmt == "html":
            from ..report_html import render_html

            text = render_html(data)
        elif fmt == "markdown":
            text = report.render_markdown(data, artifact_path=str(Path(artifact_path).resolve()))
        else:
            text = report.RENDERERS[fmt](data)
    except SkillEvalError as exc:
        fail(_one_line(str(exc)), EXIT_USAGE)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        atomic_write_text(Path(output), text)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}", EXIT_USAGE)
