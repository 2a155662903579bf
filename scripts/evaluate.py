#!/usr/bin/env python3
"""Drop-in replacement for the original skill evaluator.

Same flags as `skill-eval run`; the original contract: on success stdout is exactly one line,
the artifact's absolute path; logs go to stderr; exit 0 whenever an artifact was written,
whatever the verdict; exit 1 on setup errors (missing suite, invalid suite, missing
candidate); exit 2 on bad arguments. The skill is prepended to the task by default.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click  # noqa: E402

from skill_eval.cli.common import interrupted  # noqa: E402
from skill_eval.cli.run_flags import run_flags  # noqa: E402
from skill_eval.cli.run_one import plan_from_command, stop_on_signals  # noqa: E402
from skill_eval.engine.conductor import run_evaluation  # noqa: E402
from skill_eval.errors import RunInterrupted, SkillEvalError, UsageError  # noqa: E402


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@run_flags(compatibility=True)
def evaluate(**kwargs: Any) -> None:
    """Evaluate a candidate skill by executing a task suite (compatibility entry point)."""
    stop_on_signals()
    try:
        outcome = run_evaluation(plan_from_command(kwargs, click.get_current_context()))
    except RunInterrupted as exc:
        interrupted(exc)
    except UsageError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except SkillEvalError as exc:
        if os.environ.get("SKILL_EVAL_DEBUG") == "1":
            raise
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    except SystemExit as exc:  # raised by code inside the run: exit 0 means an artifact
        click.echo(
            f"Error: the run was ended by SystemExit({exc.code!r}) raised inside it; "
            "no artifact was written",
            err=True,
        )
        sys.exit(1)
    ev = outcome.artifact["evaluation"]
    click.echo(
        f"verdict: {ev['verdict']}" + (f" ({ev['reason']})" if ev.get("reason") else ""), err=True
    )
    click.echo(str(outcome.path))
    sys.exit(0)


if __name__ == "__main__":
    try:
        evaluate.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except click.Abort:
        sys.exit(130)
