"""The progress display: a rich bar when stderr is a terminal, plain periodic lines otherwise,
and nothing with `--no-progress`."""

from __future__ import annotations

import io
import time
from pathlib import Path

from skill_eval.core.model import Attempt
from skill_eval.engine.progress import Progress
from tests.helpers import contains_task, run_cli, write_outputs, write_skill, write_suite


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _attempt(arm: str, index: int, status: str = "passed") -> Attempt:
    return Attempt(
        arm,
        "t",
        index,
        status,
        "x",
        None,  # type: ignore[arg-type]
        "boom" if status == "error" else None,
        1,
        cost_usd=0.25,
    )


def test_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress({"candidate": 2, "baseline": 2}, stream=stream, interval=3600)
    progress(_attempt("candidate", 0))  # the first line comes at once, then every interval
    progress(_attempt("candidate", 1, "error"))
    progress(_attempt("baseline", 0))
    progress(_attempt("baseline", 1))  # and when everything is done
    lines = stream.getvalue().splitlines()
    assert lines == [
        "[#####---------------] candidate 1/2  baseline 0/2  errors 0  cost $0.2500",
        "[####################] candidate 2/2  baseline 2/2  errors 1  cost $1.0000",
    ]
    assert "\x1b[" not in stream.getvalue()


def test_the_first_line_and_batch_line_come_at_once_however_long_the_machine_is_up() -> None:
    # An interval longer than the machine has been up: monotonic() is near 0 on a fresh one.
    stream = io.StringIO()
    progress = Progress({"candidate": 2}, stream=stream, interval=time.monotonic() + 3600)
    progress(_attempt("candidate", 0))
    assert stream.getvalue() == ("[##########----------] candidate 1/2  errors 0  cost $0.2500\n")

    class Counts:
        def describe(self) -> str:
            return "batch: 0 of 2 done"

    batch_stream = io.StringIO()
    Progress({"candidate": 2}, stream=batch_stream, interval=time.monotonic() + 3600).batch(
        Counts()
    )
    assert batch_stream.getvalue() == "batch: 0 of 2 done\n"


def test_rich_bar_on_a_terminal() -> None:
    stream = Terminal()
    progress = Progress({"candidate": 2}, stream=stream)
    progress.already([_attempt("candidate", 0)])
    progress(_attempt("candidate", 1))
    text = stream.getvalue()
    assert "2/2" in text and "candidate 2/2  errors 0  cost $0.2500" in text
    assert "━" in text  # rich's bar, not the plain line's #
    assert "[####" not in text  # the finished bar stays on its line; the cursor is shown again
    assert text.replace("\x1b[?25h", "").endswith("\n")
    assert progress._bar is not None and not progress._bar[0].live.is_started


def test_an_interrupted_bar_is_closed() -> None:
    stream = Terminal()
    progress = Progress({"candidate": 3}, stream=stream)
    progress(_attempt("candidate", 0))
    assert progress._bar[0].live.is_started and "\x1b[?25l" in stream.getvalue()
    progress.close()  # the conductor's finally, after Ctrl-C
    assert not progress._bar[0].live.is_started
    assert stream.getvalue().endswith("\x1b[?25h")  # the cursor is shown again
    progress.close()  # twice is harmless


def test_no_progress_writes_no_progress_line(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [contains_task("a", "DONE")])
    outputs = write_outputs(tmp_path / "out.yaml", {"a": "DONE"})
    skill = write_skill(tmp_path / "skill")
    args = (
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--mock",
        "--mock-outputs",
        str(outputs),
    )
    code, _out, err = run_cli(*args, "--state-root", str(tmp_path / "s1"))
    assert code in (0, 1, 4), err
    assert "errors 0  cost $" in err  # not a terminal: the plain line
    for flag in ("--no-progress", "--quiet"):
        code, _out, err = run_cli(*args, flag, "--state-root", str(tmp_path / flag))
        assert code in (0, 1, 4), err
        assert "errors 0  cost $" not in err
