"""core/bounded.py and the readers built on it: a file read never past its cap (nor through a
link, nor blocked on a FIFO), a workspace walk that counts what it does not keep, Claude
Code's stream read up to a cap (jail/pipes.py), and a transcript cut at a number of calls (the
attempt then fails: a call not kept could be the one a judge looks for)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from skill_eval.core.attempt_policy import AttemptPolicy
from skill_eval.core.bounded import (
    MAX_TRANSCRIPT_CALLS,
    FileTooLarge,
    cut_list,
    read_bounded,
    read_prefix,
)
from skill_eval.core.model import Attempt, Task
from skill_eval.core.transcript import TRANSCRIPT_CUT, transcript_problem
from skill_eval.core.workspace import list_files
from skill_eval.engine.jobs import AttemptEnv, judge_attempt
from skill_eval.executors.claude.stream import StreamReader
from skill_eval.jail import Limits
from skill_eval.jail.copyout import Caps
from skill_eval.jail.session import JailedCommand
from skill_eval.judges.base import JudgeContext
from tests.helpers import jail_missing

needs_jail = pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))


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
    assert time.monotonic() - started < 30  # at once (a blocking open would never return)


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


def _transcript(n: int) -> tuple:
    """The transcript of a stream of `n` tool calls (Claude Code's stream-json)."""
    reader = StreamReader()
    for i in range(n):
        block = {"type": "tool_use", "id": f"c{i}", "name": "Bash", "input": {}}
        reader.feed(json.dumps({"type": "assistant", "message": {"content": [block]}}).encode())
    return reader.transcript()


def test_a_transcript_past_its_calls_is_cut_and_fails_its_attempt(tmp_path: Path) -> None:
    cap = MAX_TRANSCRIPT_CALLS
    transcript = _transcript(cap + 2)
    assert len(transcript) == cap + 1 and transcript[-1].name == TRANSCRIPT_CUT
    problem = transcript_problem(transcript)
    assert problem == (
        f"the agent made {cap + 2:,} tool calls, over the {cap:,} skill-eval keeps of one "
        "attempt (... and 2 more): not judged"
    )
    assert transcript_problem(_transcript(cap)) is None
    # A tool-called judge with max: cap would pass on the calls kept; the attempt fails instead.
    task = Task("t", "p", judge={"type": "tool-called", "tool": "Bash", "max": cap})
    attempt = Attempt("candidate", "t", 0, "error", "", None, None, 1, transcript=transcript)
    env = AttemptEnv(None, None, JudgeContext(suite_dir=tmp_path), AttemptPolicy())
    judged = judge_attempt(env, attempt, task)
    assert judged.status == "failed" and judged.judge is not None
    assert judged.judge.details == problem


def _spew(kind: str, tmp_path: Path, script: str, stdin: bytes, limit: int) -> tuple:
    lines: list[bytes] = []
    with JailedCommand(kind, Limits(memory_mb=None, data_mb=2048, disk_mb=64)) as jail:  # type: ignore[arg-type]
        jail.start((sys.executable, "-I", "-S", "-c", script), {"PATH": "/usr/bin:/bin"})
        jail.seed(tmp_path)
        # 120 s: only a stream the cap failed to stop runs that long, even on a loaded machine
        ended = jail.run(stdin, 120, lambda line: lines.append(line) or True, limit)
        jail.collect(tmp_path / "out", Caps())
    return ended, lines


KINDS = ["none", pytest.param("bubblewrap", marks=needs_jail)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_past_its_cap_is_stopped_and_said(tmp_path: Path, kind: str) -> None:
    spew = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536 + '\\n')\n"
    ended, lines = _spew(kind, tmp_path, spew, b"", 1_000_000)
    # stopped by the cap, not by the timeout
    assert ended.overflow and not ended.timed_out and ended.code is None
    assert sum(len(line) for line in lines) <= 1_000_000


@pytest.mark.parametrize("kind", KINDS)
def test_a_stream_within_its_cap_is_read_whole_with_stdin_fed(tmp_path: Path, kind: str) -> None:
    echo = "import sys\ndata = sys.stdin.read()\nprint(data.upper())\nprint('e', file=sys.stderr)"
    ended, lines = _spew(kind, tmp_path, echo, b"hello", 1_000)
    assert (lines, ended.stderr, ended.overflow, ended.code) == ([b"HELLO"], "e\n", False, 0)
