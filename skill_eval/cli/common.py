"""What every command shares: error printing and exit codes."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from ..errors import ExecutorError, RunInterrupted, SkillEvalError, UsageError

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
# A fail verdict for lack of evidence (the artifact says `insufficient: true`): the policy's
# interval holds its threshold, so more tasks or samples could settle it. The verdict in the
# artifact stays `fail` (pipelines read fail as revert); only the exit code tells CI apart.
EXIT_INSUFFICIENT = 4
VERDICT_EXIT = {"pass": EXIT_OK, "skipped": EXIT_OK, "fail": EXIT_FAIL, "error": EXIT_ERROR}


def verdict_exit(artifact: Any) -> int:
    """The exit code of `run` (and `merge`, `rejudge`) for the artifact it wrote: 0 pass or
    skipped, 1 fail (shown worse, or failed for another reason), 4 fail for lack of evidence,
    3 error."""
    evaluation = artifact.get("evaluation") or {}
    verdict = evaluation.get("verdict")
    if verdict == "fail" and evaluation.get("insufficient") is True:
        return EXIT_INSUFFICIENT
    return VERDICT_EXIT.get(str(verdict), EXIT_ERROR)


def exit_code(exc: SkillEvalError) -> int:
    """3 for a harness fault (an executor that cannot run, a run stopped by one), else 2."""
    return EXIT_ERROR if isinstance(exc, ExecutorError) else EXIT_USAGE


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def fail_with(exc: SkillEvalError) -> NoReturn:
    """`fail` with the first line of `exc` and how many more it has (a review or an improve
    run can gather many problems; the first says what to fix), exit 2 or 3 (`exit_code`)."""
    lines = str(exc).splitlines() or [type(exc).__name__]
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    fail(lines[0] + more, exit_code(exc))


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
    "EXIT_INSUFFICIENT",
    "EXIT_OK",
    "EXIT_USAGE",
    "VERDICT_EXIT",
    "UsageError",
    "exit_code",
    "fail",
    "fail_with",
    "verdict_exit",
    "main_entry",
]
