"""How a jailed command ended (`Ended`), and the error for a jail that did not behave."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import IO

from ..errors import ExecutorError
from .pipes import Read, Tail


@dataclass(frozen=True)
class Ended:
    """How the command ended: its exit code (None when stopped or killed), whether the
    harness stopped it (`stopped`: on_line said enough; `timed_out`; `overflow`: its stream
    went past the byte cap), the tail of its stderr and how many stream bytes it printed."""

    code: int | None
    stopped: bool = False
    timed_out: bool = False
    stderr: str = ""
    stream_bytes: int = 0
    overflow: bool = False


class JailBroken(ExecutorError):
    """The jail did not behave (bwrap failed, the holder died or never answered): the attempt
    is an error, never a result."""


def ended_as(code: int | None, read: Read, stderr: Tail) -> Ended:
    """How a command ended; no exit code when the harness ended it (it says nothing then)."""
    return Ended(
        None if read.ended_early else code,
        read.stopped,
        read.timed_out,
        stderr.text(),
        read.printed,
        read.overflow,
    )


def launcher_said(proc: subprocess.Popen[bytes] | None, err: IO[bytes] | None) -> str:
    """Why a jail did not start, from its launcher (bwrap, a runtime): its last line."""
    if proc is None or err is None:
        return "no jail process"
    if proc.poll() is None:
        return "no answer from the holder"
    err.seek(0)
    said = err.read(4096).decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"bwrap exit {proc.returncode}"
