"""What every command shares: the exit codes, and the one place an error becomes an exit."""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from ..errors import RunInterrupted, SkillEvalError

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


def _os_message(exc: OSError) -> str:
    """`PATH: reason` of an OSError (`[Errno 13] Permission denied: 'x'` reads worse)."""
    reason = exc.strerror or str(exc).splitlines()[0] or type(exc).__name__
    return f"{exc.filename}: {reason}" if exc.filename is not None else reason


@contextmanager
def errors_exit() -> Iterator[None]:
    """The one place an error becomes an exit: `Error: <message>` on stderr (every line of
    it: a file with many problems names each) and the exit code of the error's class (see
    skill_eval/errors.py); with SKILL_EVAL_DEBUG=1 the traceback first. An OSError no code
    translated where it was raised is the machine's fault (a disk, a permission): exit 3."""
    try:
        yield
    except RunInterrupted as exc:
        _traceback()
        interrupted(exc)
    except SkillEvalError as exc:
        _traceback()
        _leave(str(exc) or type(exc).__name__, exc.exit_code)
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise  # `skill-eval show RUN | head`: click quiets a closed pipe
        _traceback()
        _leave(_os_message(exc), EXIT_ERROR)


def _traceback() -> None:
    if os.environ.get("SKILL_EVAL_DEBUG") == "1":
        click.echo(traceback.format_exc().rstrip("\n"), err=True)


def _leave(message: str, code: int) -> NoReturn:
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
    os._exit(exc.exit_code)


def main_entry(group: click.Group, **kwargs: Any) -> None:
    """Run a click group outside click's standalone mode: its usage errors exit 2, an abort
    130. The group's commands run inside `errors_exit`, which turns our errors into exits."""
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
    "errors_exit",
    "interrupted",
    "main_entry",
    "verdict_exit",
]
