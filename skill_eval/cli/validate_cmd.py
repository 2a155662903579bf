"""`skill-eval validate PATH...`"""

from __future__ import annotations

import click

from ..errors import SuiteError
from ..inputs.source_checks import mock_output_problems, python_problems
from ..inputs.suite import load_suite, validate_paths
from .common import EXIT_OK, EXIT_USAGE


def _pytest_missing(paths: list[str]) -> str | None:
    """One line when a valid suite has pytest judges and this interpreter has no pytest."""
    import importlib.util

    if importlib.util.find_spec("pytest") is not None:
        return None  # the usual case: neither the judge module nor a suite is loaded again
    from ..judges.pytest_judge import preflight_pytest

    for path in paths:
        problems = preflight_pytest(load_suite(path).tasks)
        if problems:
            return f"{path}: {problems[0]}"
    return None


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option(
    "--mock-outputs",
    metavar="FILE",
    help="Also check a mock outputs file against each suite's task ids.",
)
def command(paths: tuple[str, ...], mock_outputs: str | None) -> None:
    """Validate task suites. A directory means every task_suite.yaml below it. A suite with
    pytest judges also needs pytest importable by skill-eval's own interpreter.

    Python files under each suite's fixtures/ and the modules of python judges must compile
    (nothing is run). Exits 0 when all are valid, 2 otherwise; every problem goes to stderr,
    one line each.
    """
    report = validate_paths(paths)
    valid = []
    for path in report.valid:
        try:
            suite = load_suite(path)
        except SuiteError as exc:  # changed since validate_paths read it
            report.problems += exc.problems
            continue
        found = python_problems(suite, path)
        if mock_outputs:
            found += mock_output_problems(mock_outputs, suite)
        report.problems += found
        if not found:
            valid.append(path)
    for problem in report.problems:
        click.echo(str(problem), err=True)
    missing = _pytest_missing(valid)
    if missing is not None:
        click.echo(missing, err=True)
    for path in valid:
        click.echo(f"ok: {path}")
    raise SystemExit(EXIT_OK if report.ok and missing is None else EXIT_USAGE)
