"""`Popen.communicate` with a cap: Claude Code's stdout is the attempt's message stream, and
what it holds (tool results, file contents, whatever the agent printed) is the candidate's.
Read whole it could be any size; here at most `limit` characters of it are kept, and past that
the process is stopped (`kill`, which kills its group) and the caller is told. stderr keeps
its last `STDERR_TAIL` characters. The same `kill` ends it at the timeout.

    piped = communicate_bounded(proc, prompt, timeout, MAX_STREAM_BYTES, kill)
    piped.stdout, piped.stderr, piped.timed_out, piped.overflow
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from ..core.bounded import mib

STDERR_TAIL = 64 * 1024
_CHUNK = 64 * 1024


def overflow_message(limit: int) -> str:
    return (
        f"Claude Code wrote more than {mib(limit)} of messages in one attempt; it was stopped "
        "and the attempt counts as a failure (skill-eval reads no more of one attempt)"
    )


@dataclass(frozen=True)
class Piped:
    """What a process left: stdout (at most the limit), the tail of stderr, and whether it
    was killed at the timeout or for writing past the limit."""

    stdout: str
    stderr: str
    timed_out: bool = False
    overflow: bool = False


def communicate_bounded(
    proc: subprocess.Popen[str],
    stdin: str,
    timeout: float,
    limit: int,
    kill: Callable[[], None],
) -> Piped:
    """Feed `stdin` to a text-mode process with piped stdin, stdout and stderr and read its
    output, keeping at most `limit` characters of stdout. At the timeout, or past the limit,
    `kill` is called (it kills the process group); what was read until then is returned."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out: list[str] = []
    err: list[str] = []
    overflow = threading.Event()

    def read_out(stream: IO[str]) -> None:
        kept = 0
        while chunk := stream.read(_CHUNK):
            if overflow.is_set():
                continue  # drained, not kept, until the process is gone
            if kept + len(chunk) > limit:
                overflow.set()
                kill()
                continue
            out.append(chunk)
            kept += len(chunk)

    def read_err(stream: IO[str]) -> None:
        size = 0
        while chunk := stream.read(_CHUNK):
            err.append(chunk)
            size += len(chunk)
            while len(err) > 1 and size - len(err[0]) > STDERR_TAIL:
                size -= len(err.pop(0))

    def write_in(stream: IO[str]) -> None:
        try:
            stream.write(stdin)
            stream.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    threads = [
        threading.Thread(target=fn, args=(stream,), daemon=True)
        for fn, stream in ((read_out, proc.stdout), (read_err, proc.stderr), (write_in, proc.stdin))
    ]
    for thread in threads:
        thread.start()
    timed_out = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill()
        proc.wait()
    for thread in threads:
        thread.join(5)  # a process outside the group may hold a pipe: never wait forever
    return Piped("".join(out), "".join(err)[-STDERR_TAIL:], timed_out, overflow.is_set())
