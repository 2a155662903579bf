"""core/bounded.py and the readers built on it: a file read never past its cap (nor through a
link, nor blocked on a FIFO), a workspace walk that counts what it does not keep, Claude
Code's stream read up to a cap, and a transcript cut at a number of calls (the attempt then
fails: a call not kept could be the one a judge looks for)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skill_eval.core.bounded import FileTooLarge, cut_list, read_bounded, read_prefix
from skill_eval.core.model import Attempt, Task
from skill_eval.core.transcript import TRANSCRIPT_CUT, tool_calls, transcript_problem
from skill_eval.core.workspace import list_files
from skill_eval.engine.jobs import AttemptEnv, RetryPolicy, judge_attempt
from skill_eval.executors.bounded_pipe import communicate_bounded
from skill_eval.judges.base import JudgeContext


def test_read_bounded_reads_up_to_its_cap_and_never_past_it(tmp_path: Path) -> None:
    small = tmp_path / "small.txt"
    small.write_bytes(b"x" * 100)
    assert read_bounded(small, 100) == b"x" * 100
    with pytest.raises(FileTooLarge, match=r"small.txt is 100 bytes, over the"):
        read_bounded(small, 99)
    assert read_prefix(small, 10) == b"x" * 10


def test_read_bounded_follows_no_link_and_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("s")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError):
        read_bounded(tmp_path / "link")
    os.mkfifo(tmp_path / "pipe")
    started = time.monotonic()
    with pytest.raises(OSError, match="not a regular file"):
        read_bounded(tmp_path / "pipe")
    assert time.monotonic() - started < 1


def test_cut_list_says_how_many_more() -> None:
    assert cut_list(["a", "b", "c"], shown=2) == "a, b, ... and 1 more"
    assert cut_list(["a", "b"], total=200_000, shown=2) == "a, b, ... and 199,998 more"
    assert cut_list(["a"]) == "a"


def test_a_walk_keeps_its_limit_and_counts_the_rest(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i:02}").write_text("x")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "plumbing").write_text("x")  # never work
    (tmp_path / "link").symlink_to(tmp_path / "f00")  # never a file of the workspace
    listing = list_files(tmp_path, limit=10)
    assert len(listing.files) == 10 and listing.total == 30 and listing.over
    assert listing.problem() == (
        "the workspace holds 30 files, over the 10 skill-eval reads of one attempt: not judged"
    )
    whole = list_files(tmp_path, limit=100)
    assert [rel for rel, _ in whole.files] == [f"f{i:02}" for i in range(30)]
    assert whole.problem() is None


def _calls(n: int) -> list[dict]:
    return [
        {
            "kind": "AssistantMessage",
            "content": [{"block": "ToolUseBlock", "id": f"c{i}", "name": "Bash", "input": {}}],
        }
        for i in range(n)
    ]


def test_a_transcript_past_its_calls_is_cut_and_fails_its_attempt(tmp_path: Path) -> None:
    transcript = tool_calls(_calls(7), max_calls=5)
    assert len(transcript) == 6 and transcript[-1].name == TRANSCRIPT_CUT
    problem = transcript_problem(transcript)
    assert problem == (
        "the agent made 7 tool calls, over the 5 skill-eval keeps of one attempt "
        "(... and 2 more): not judged"
    )
    assert transcript_problem(tool_calls(_calls(5), max_calls=5)) is None
    # A tool-called judge with max: 5 would pass on the calls kept; the attempt fails instead.
    task = Task("t", "p", judge={"type": "tool-called", "tool": "Bash", "max": 5})
    attempt = Attempt("candidate", "t", 0, "error", "", None, None, 1, transcript=transcript)
    env = AttemptEnv(None, None, JudgeContext(suite_dir=tmp_path), RetryPolicy())
    judged = judge_attempt(env, attempt, task)
    assert judged.status == "failed" and judged.judge is not None
    assert judged.judge.details == problem


def test_a_stream_past_its_cap_is_stopped_and_said(tmp_path: Path) -> None:
    spew = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", spew],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    started = time.monotonic()
    piped = communicate_bounded(proc, "", 60, 1_000_000, proc.kill)
    assert piped.overflow and not piped.timed_out
    assert len(piped.stdout) <= 1_000_000
    assert time.monotonic() - started < 30


def test_a_stream_within_its_cap_is_read_whole_with_stdin_fed() -> None:
    echo = "import sys\ndata = sys.stdin.read()\nprint(data.upper())\nprint('e', file=sys.stderr)"
    proc = subprocess.Popen(
        [sys.executable, "-c", echo],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    piped = communicate_bounded(proc, "hello", 60, 1_000, proc.kill)
    assert (piped.stdout, piped.stderr, piped.overflow) == ("HELLO\n", "e\n", False)
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert communicate_bounded(sleeper, "", 0.5, 1_000, sleeper.kill).timed_out
