"""A read-only copy of an attempt's final workspace for a judge that runs code on it (the
`pytest` judge's AI_WORKSPACE), bounded: no file past MAX_FILE_BYTES, no more than
MAX_COPY_BYTES in all (core/bounded.py), so output code never makes the harness copy a 6 GB
file it was handed."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.bounded import MAX_COPY_BYTES, MAX_FILE_BYTES, read_bounded
from ..core.work import Work
from .work_judges import workspace_files


def readonly_copy(work: Work, dest: Path) -> Path | None:
    """Copy the attempt's final workspace files to `dest`, files and folders read-only (for
    the `pytest` judge's AI_WORKSPACE); None for work with no files. `writable(dest)` undoes
    the modes so the copy can be deleted. ValueError when the workspace was not kept."""
    if work.files is None:
        return None
    files = workspace_files(work)
    lost = sorted(p for p, w in files.items() if w is None)
    if lost:
        raise ValueError(
            f"{lost[0]}: its workspace was not kept, so its content cannot be "
            "read (run with --keep-workspaces all)"
        )
    dest.mkdir(parents=True, exist_ok=True)
    budget = MAX_COPY_BYTES
    for name, source in ((p, w) for p, w in files.items() if w is not None):
        target = dest / name
        if not target.resolve().is_relative_to(dest.resolve()):
            continue  # a recorded path that would land outside: never copied
        data = read_bounded(source, min(MAX_FILE_BYTES, budget))  # FileTooLarge: an OSError
        budget -= len(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o444)
    for directory, _, _ in os.walk(dest):
        Path(directory).chmod(0o555)
    return dest


def writable(dest: Path) -> None:
    """Give a read-only copy its write bits back (so it can be deleted)."""
    for directory, _, _ in os.walk(dest):
        Path(directory).chmod(0o755)
