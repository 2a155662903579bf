"""`skill-eval rejudge RUN_DIR`"""

from __future__ import annotations

import sys
from typing import Any

import click

from .common import verdict_exit
from .run_flags import flag
from .run_one import summary


@click.command("rejudge")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=str))
@flag("output", help="Artifact path (default: beside the run's own, suffixed -rejudged-<time>).")
@flag(
    "judge-executor",
    help="The executor whose model grades the model-graded judges (default: as in the run).",
)
@flag("judge-model")
@flag("judge-cache-dir", help="Judge cache directory (default: as in the run).")
@flag("no-judge-cache", default=None)  # None: as in the run
@flag("evaluators-dir", help="Extra evaluator skills (repeatable; default: as in the run).")
@flag(
    "max-preview-chars",
    type=click.IntRange(min=100),
    default=None,
    show_default=False,
    help="Preview length for outputs recorded inline by older versions (default: as in the run).",
)
@click.option(
    "--journal-key",
    metavar="FILE",
    envvar="SKILL_EVAL_JOURNAL_KEY_FILE",
    help="The key file the run's journal was signed with (default: the journal.key of the "
    "state root holding RUN_DIR) [env SKILL_EVAL_JOURNAL_KEY_FILE].",
)
def command(run_dir: str, output: str | None, **judge_options: Any) -> None:
    """Judge a finished run again with the suite's current judges, without re-executing.

    Reads RUN_DIR/attempts.jsonl (every record checked against the journal key), judges
    every output again and writes a new artifact (path on stdout). Exit codes as for `run`.
    """
    from ..engine.rejudge import rejudge

    outcome = rejudge(run_dir, output=output, **judge_options)
    click.echo(summary(outcome), err=True)
    click.echo(str(outcome.path))
    sys.exit(verdict_exit(outcome.artifact))
