"""`skill-eval export SUITE -o evals.json`"""

from __future__ import annotations

import click


@click.command("export")
@click.argument("suite", type=click.Path(path_type=str))
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="The evals.json to write (skill-creator keeps it at <skill>/evals/).",
)
@click.option(
    "--trigger-set",
    metavar="FILE",
    help="Also write the suite's trigger tasks as a trigger eval set here.",
)
@click.option(
    "--files-root",
    metavar="DIR",
    help="Where input files are copied, evals[].files being relative to it "
    "(default: the skill root, the folder above evals/ when FILE is in one).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite existing output files and input files of other content.",
)
def command(
    suite: str, output: str, trigger_set: str | None, files_root: str | None, force: bool
) -> None:
    """Write a task suite as skill-creator's evals.json (the reverse of `import`).

    Tasks with an `expectations` judge (alone or inside `all`) keep their statements; judges
    with no evals.json equivalent (contains, pytest, llm-rubric, ...) are listed on stderr
    and their tasks exported without them. Existing outputs are refused unless --force.
    """
    from ..interop.exporter import export_suite

    result = export_suite(
        suite, output, trigger_set=trigger_set, files_root=files_root, force=force
    )
    for line in result.dropped:
        click.echo(f"not carried over: {line}", err=True)
    triggers = (
        f", {result.trigger_queries} trigger quer(ies) to {result.trigger_path}"
        if result.trigger_path
        else ""
    )
    click.echo(
        f"wrote {result.evals_path}: {result.evals} eval(s), {result.files_copied} "
        f"input file(s) copied{triggers}",
        err=True,
    )
    click.echo(str(result.evals_path))
