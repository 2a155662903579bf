"""`skill-eval export-benchmark ARTIFACT -o benchmark.json`"""

from __future__ import annotations

import click


@click.command("export-benchmark")
@click.argument("artifact", type=click.Path(dir_okay=False, path_type=str))
@click.option("-o", "--output", required=True, metavar="FILE", help="The benchmark.json to write.")
@click.option(
    "--workspace",
    metavar="DIR",
    help="Also write a viewer workspace here: one folder per run (outputs/, "
    "grading.json, eval_metadata.json), which skill-creator's "
    "eval-viewer/generate_review.py opens with --benchmark.",
)
@click.option(
    "--force", is_flag=True, help="Overwrite an existing output file (and a non-empty --workspace)."
)
def command(artifact: str, output: str, workspace: str | None, force: bool) -> None:
    """Write an evaluation artifact as skill-creator's benchmark.json, for its viewer.

    Every attempt is a run: the candidate arm is with_skill, the baseline arm without_skill.
    Attempts that ended in error are listed (errors: 1) but left out of run_summary. An
    existing output is refused unless --force.
    """
    from ..interop.benchmark import export_benchmark

    result = export_benchmark(artifact, output, workspace=workspace, force=force)
    click.echo(
        f"wrote {result.path}: {result.runs} run(s) ({', '.join(result.configurations)})", err=True
    )
    click.echo(str(result.path))
