"""`skill-eval import EVALS_JSON -o task_suite.yaml`"""

from __future__ import annotations

import sys

import click

from .common import EXIT_FAIL, EXIT_OK


@click.command("import")
@click.argument("evals_json", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="PATH",
    help="The suite file to write (a folder: FOLDER/task_suite.yaml).",
)
@click.option(
    "--trigger-set",
    metavar="FILE",
    help="skill-creator's trigger eval set ([{query, should_trigger}]): one trigger "
    "task per query.",
)
@click.option(
    "--files-root",
    metavar="DIR",
    help="Where evals[].files are relative to (default: the skill root, the folder "
    "above evals/ when EVALS_JSON is in one, else EVALS_JSON's folder).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite an existing suite file, and input files of other content.",
)
def command(
    evals_json: str, output: str, trigger_set: str | None, files_root: str | None, force: bool
) -> None:
    """Write an eval set (skill-creator's evals.json, and the others) as a task suite.

    The suite is the one `run --task-suite EVALS_JSON` and `run SKILL_DIR` read (every check
    the eval set writes becomes a judge: references/interop.md); its input files are copied
    beside it, at the same relative path. What could not be carried over is listed on stderr,
    with what a run would warn of, then the `skill-eval run` command that runs the suite,
    first with --mock (offline, no model calls) then without (with trigger tasks,
    --baseline-skill: a no-skill baseline never triggers). An existing output is refused
    unless --force.
    Exits 0, or 1 when the written suite does not validate, 2 on bad input.
    """
    from ..interop.importer import import_evals

    result = import_evals(
        evals_json, output, trigger_set=trigger_set, files_root=files_root, force=force
    )
    for line in result.dropped:
        click.echo(f"not carried over: {line}", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in result.problems:
        click.echo(problem, err=True)
    click.echo(
        f"wrote {result.suite_path}: {result.tasks} task(s), {result.trigger_tasks} "
        f"trigger task(s), {result.files_copied} input file(s) copied",
        err=True,
    )
    click.echo(
        f"try it offline first (--mock: a dry run, no model calls):\n"
        f"  {result.run_command} --mock\n"
        f"then for real (calls the model):\n  {result.run_command}",
        err=True,
    )
    for note in result.run_notes:
        click.echo(note, err=True)
    click.echo(str(result.suite_path))
    sys.exit(EXIT_FAIL if result.problems else EXIT_OK)
