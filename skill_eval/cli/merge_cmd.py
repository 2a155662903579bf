"""`skill-eval merge RUN_DIR... -o ARTIFACT`"""

from __future__ import annotations

import sys

import click


@click.command("merge")
@click.argument(
    "run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=str)
)
@click.option(
    "-o", "--output", required=True, metavar="ARTIFACT", help="Where to write the merged artifact."
)
@click.option(
    "--journal-key",
    metavar="FILE",
    envvar="SKILL_EVAL_JOURNAL_KEY_FILE",
    help="The key file the shards' journals were signed with (`run --journal-key`); "
    "default: the journal.key of the state root holding each run directory "
    "[env SKILL_EVAL_JOURNAL_KEY_FILE].",
)
def command(run_dirs: tuple[str, ...], output: str, journal_key: str | None) -> None:
    """Join the run directories of every shard of a sharded run into one artifact.

    Each RUN_DIR is the run directory of one `skill-eval run --shard I/N`; all N must be
    given, made with the same suite, skills, executor and settings, and every journal record
    must carry a valid MAC under the journal key (a record skill-eval did not write, or an
    attempt recorded twice, is refused naming the file and line). The artifact equals the one
    the unsharded run would have written (path on stdout). Exit codes as for `run`.
    """
    from ..engine.merge import merge
    from .common import verdict_exit
    from .run_one import summary

    outcome = merge(run_dirs, output, journal_key=journal_key)
    click.echo(summary(outcome), err=True)
    click.echo(str(outcome.path))
    sys.exit(verdict_exit(outcome.artifact))
