"""`skill-eval validate PATH...`"""

from __future__ import annotations

from pathlib import Path

import click

from ..core.model import Suite
from ..errors import Problem, SuiteError, UsageError
from ..inputs.judge_checks import check_judges
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


def _mock_gaps(outputs_path: str, suite: Suite) -> list[Problem]:
    """What the mock outputs file leaves unscripted of the suite (executors/mock_coverage.py),
    one warning each: the arms a file keyed by arm names, or every arm."""
    from ..executors.mock_coverage import file_gaps

    gaps = file_gaps(Path(outputs_path), suite.tasks)
    return [Problem(outputs_path, f"{gap} (suite {suite.path})") for gap in gaps]


def _source_notes(suite: Suite, path: str) -> list[Problem]:
    """For a suite read from eval sets: what was not carried over (said on stderr), and the
    warnings a run would give (a skill's own files as an eval's input, a skill name that is
    not the folder's), returned as warnings."""
    if suite.source is None:
        return []
    for line in suite.source.not_carried_over:
        click.echo(f"{path}: not carried over: {line}", err=True)
    return [Problem(path, warning) for warning in suite.source.warnings]


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option(
    "--mock-outputs",
    metavar="FILE",
    help="Also check a mock outputs file against each suite's task ids: a task it does not "
    "have is an error; a task or arm it leaves unscripted (the mock's default output, which "
    "fails) a warning.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Warnings are errors too (a judge that passes on an empty output, or that "
    "disagrees with itself under --judges).",
)
@click.option(
    "--judges",
    is_flag=True,
    help="Also try the model-graded judges (llm-rubric, rubric, expectations): each judges "
    "its task's reference and an empty output --repeat times, through a judge model (this "
    "costs calls); writes a report beside each suite.",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1, max=20),
    default=3,
    show_default=True,
    help="With --judges: judgements of each output, to see whether the judge agrees with itself.",
)
@click.option(
    "--judge-executor",
    metavar="NAME",
    default=None,
    help="With --judges: backend of the judge model (an executor that can grade: anthropic, "
    "claude-cli, ...; default claude-cli, as a default run judges).",
)
@click.option("--judge-model", metavar="NAME", help="With --judges: the judge model.")
@click.option(
    "--mock",
    is_flag=True,
    help="With --judges: the mock grader (no model call; it scores everything 0.8).",
)
@click.option(
    "--judges-report",
    metavar="FILE",
    help="With --judges: where the JSON report goes (default <suite folder>/judge-check.json); "
    "the readable text goes beside it with the suffix .txt. One suite only.",
)
def command(
    paths: tuple[str, ...],
    mock_outputs: str | None,
    strict: bool,
    judges: bool,
    repeat: int,
    judge_executor: str | None,
    judge_model: str | None,
    mock: bool,
    judges_report: str | None,
) -> None:
    """Validate task suites. A directory means every task_suite.yaml below it; a skill folder
    (holding SKILL.md) means the suite its evals/ make (evals.json and a trigger set, as
    `run SKILL_DIR` reads them), and an evals.json or trigger set the suite made from it. A
    suite with pytest judges also needs pytest importable by skill-eval's own interpreter.

    Python files under each suite's fixtures/ and the modules of python judges must compile.
    Every deterministic judge (contains, regex, pytest, python, file and tool judges, and
    combinations of them) then runs on its task's `reference`, which it must pass, and on an
    empty output, which it should fail (a warning; an error with --strict). Exits 0 when all
    are valid, 2 otherwise; every problem goes to stderr, one line each.
    """
    if not judges and (judge_executor or judge_model or mock or judges_report):
        raise UsageError(
            "--judge-executor, --judge-model, --mock and --judges-report go with --judges"
        )
    _validate(
        paths, mock_outputs, strict, judges, repeat, judge_executor, judge_model, mock,
        judges_report,
    )  # fmt: skip


def _validate(
    paths: tuple[str, ...],
    mock_outputs: str | None,
    strict: bool,
    judges: bool,
    repeat: int,
    judge_executor: str | None,
    judge_model: str | None,
    mock: bool,
    judges_report: str | None,
) -> None:
    report = validate_paths(paths)
    valid: list[str] = []
    warnings: list[Problem] = []
    unscripted: set[str] = set()  # suites --mock-outputs leaves tasks or arms of unscripted
    trials = []
    for path in report.valid:
        try:
            suite = load_suite(path)
        except SuiteError as exc:  # changed since validate_paths read it
            report.problems += exc.problems
            continue
        warnings += _source_notes(suite, path)
        found = python_problems(suite, path)
        if mock_outputs:
            found += mock_output_problems(mock_outputs, suite)
            gaps = [] if found else _mock_gaps(mock_outputs, suite)
            warnings += gaps
            unscripted |= {path} if gaps else set()
        if not found:
            checks = check_judges(suite, path)
            found += checks.errors
            warnings += checks.warnings
        if not found and judges:
            trials.append((suite, path))
        report.problems += found
        if not found:
            valid.append(path)
    if trials:
        from ..inputs.judge_trial import TrialSettings, try_judges

        settings = TrialSettings(repeat, judge_executor, judge_model, mock)
        outcome = try_judges(trials, settings, judges_report)
        for json_path, text_path, text in outcome.reports:
            click.echo(text.rstrip("\n"))
            click.echo(f"judge report: {json_path} and {text_path.name}\n")
        report.problems += outcome.errors
        warnings += outcome.warnings
        valid = [p for p in valid if not any(q.path == p for q in outcome.errors)]
    if strict:
        report.problems += warnings
        valid = [p for p in valid if p not in unscripted and not any(w.path == p for w in warnings)]
    for problem in report.problems:
        click.echo(str(problem), err=True)
    for warning in [] if strict else warnings:
        click.echo(f"warning: {warning}", err=True)
    missing = _pytest_missing(valid)
    if missing is not None:
        click.echo(missing, err=True)
    for path in valid:
        click.echo(f"ok: {path}")
    raise SystemExit(EXIT_OK if report.ok and missing is None else EXIT_USAGE)
