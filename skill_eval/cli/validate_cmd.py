"""`skill-eval validate PATH...`"""

from __future__ import annotations

import click

from ..suite import validate_paths
from .common import EXIT_OK, EXIT_USAGE


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
def command(paths: tuple[str, ...]) -> None:
    """Validate task suites. A directory means every task_suite.yaml below it.

    Exits 0 when all are valid, 2 otherwise; every problem goes to stderr, one line each.
    """
    report = validate_paths(paths)
    for problem in report.problems:
        click.echo(str(problem), err=True)
    for path in report.valid:
        click.echo(f"ok: {path}")
    raise SystemExit(EXIT_OK if report.ok else EXIT_USAGE)
