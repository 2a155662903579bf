"""How much of what the candidate produced the harness ever reads: an attempt's workspace, a
file a judge reads, Claude Code's message stream. The agent (and the output code a judge runs)
controls all of it, so every read stops at a set number of bytes and files; an attempt over
them fails with a clear message, and long lists are cut ("... and 199,990 more").

    read_bounded(path)              # bytes, or FileTooLarge past MAX_FILE_BYTES
    read_prefix(path, 16_000)       # the first bytes only (what a prompt shows)
    cut_list(names, 20)             # "a, b, ... and 199,980 more"
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from ..errors import SkillEvalError

# One workspace file, as a judge, an observer or a python judge reads it.
MAX_FILE_BYTES = 16 * 1024 * 1024
# Regular files an attempt's workspace may hold: past it the attempt fails unjudged.
MAX_WORKSPACE_FILES = 10_000
# Files counted beyond MAX_WORKSPACE_FILES, to say how many there were ("... and N more").
COUNT_CEILING = 1_000_000
# Bytes hashed for one snapshot (files past the budget are listed with their size only).
MAX_HASHED_BYTES = 512 * 1024 * 1024
# A read-only copy of a workspace for a code judge (pytest's AI_WORKSPACE).
MAX_COPY_BYTES = 256 * 1024 * 1024
# Files kept of one attempt's workspace (--keep-workspaces); bytes: workspace.KEEP_MAX_BYTES.
MAX_KEPT_FILES = 1_000
# Claude Code's message stream (stdout) of one attempt, and the tool calls kept of it.
MAX_STREAM_BYTES = 64 * 1024 * 1024
MAX_TRANSCRIPT_CALLS = 5_000
# Names listed in a message or a note before the rest is counted.
SHOWN_NAMES = 20


class FileTooLarge(SkillEvalError, OSError):
    """A file over the bytes the harness reads of one file; the message says which and why.
    An OSError too, so a reader that copes with an unreadable file copes with this one."""


def mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes, never following a final link and never reading past `limit`: a
    larger file is a FileTooLarge (its size from fstat, nothing read), a FIFO or device an
    OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name}: not a regular file")
        if info.st_size > limit:
            raise FileTooLarge(_too_large(path.name, info.st_size, limit))
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew since fstat
        raise FileTooLarge(_too_large(path.name, len(data), limit))
    return data


def _too_large(name: str, size: int, limit: int) -> str:
    return f"{name} is {size:,} bytes, over the {mib(limit)} skill-eval reads of one file; not read"


def read_prefix(path: Path, limit: int) -> bytes:
    """At most the first `limit` bytes of a regular file (links never followed)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{path.name}: not a regular file")
        return handle.read(limit)


def cut_list(names: Sequence[str], total: int | None = None, shown: int = SHOWN_NAMES) -> str:
    """The first `shown` names, then "... and N more" (N from `total` when the list itself
    was cut short)."""
    total = len(names) if total is None else total
    head = ", ".join(names[:shown])
    rest = total - min(len(names), shown)
    return f"{head}, ... and {rest:,} more" if rest > 0 else head
