"""What every command shares: error printing and exit codes."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from ..errors import ExecutorError, RunInterrupted, SkillEvalError, UsageError

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3


def exit_code(exc: SkillEvalError) -> int:
    """3 for a harness fault (an executor that cannot run, a run stopped by one), else 2."""
    return EXIT_ERROR if isinstance(exc, ExecutorError) else EXIT_USAGE


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def interrupted(exc: RunInterrupted) -> NoReturn:
    """Say where the finished attempts are and leave at once: worker threads still waiting on
    the network must not hold the exit (they would only finish attempts already saved or
    lost)."""
    click.echo(str(exc), err=True)
    from ..judges.pytest_sandbox import cancel_all

    cancel_all()  # running pytest judgements and their temp dirs: no thread will clean up
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def main_entry(group: click.Group, **kwargs: Any) -> None:
    """Run a click group; turn SkillEvalError into `Error: ...` and exit 2 (bad input) or 3
    (a harness fault, see `exit_code`)."""
    try:
        group.main(standalone_mode=False, **kwargs)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except RunInterrupted as exc:
        interrupted(exc)
    except SkillEvalError as exc:
        if os.environ.get("SKILL_EVAL_DEBUG") == "1":
            raise
        fail(str(exc), exit_code(exc))
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


__all__ = [
    "EXIT_ERROR",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "exit_code",
    "fail",
    "main_entry",
]
