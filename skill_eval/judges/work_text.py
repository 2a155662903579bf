"""The whole work of an attempt as one text, for a text judge with `scope: work`: the reply,
then every file the attempt created or changed (an eval set's `must_have` on an agent task:
its patterns may hold in a file the agent wrote, not in what it said). The task's input files
are not the attempt's changes and are never read as its work."""

from __future__ import annotations

from typing import Any

from ..core.bounded import MAX_FILE_BYTES, read_bounded
from ..core.work import Work

SCOPE: dict[str, Any] = {
    "enum": ["output", "work"],
    "errorMessage": "must be output (the reply, the default) or work (the reply and every "
    "file the attempt created or changed)",
}


def work_text(work: Work) -> str:
    """The output, then the content of each file the attempt created or changed, as one
    text; MAX_FILE_BYTES read in all (files past it, and files no longer kept, left out)."""
    parts, left = [work.text], MAX_FILE_BYTES
    for f in work.files.files if work.files is not None else ():
        if f.root is None or left <= 0:
            continue
        try:
            data = read_bounded(f.root / f.path, left)
        except OSError:  # too large for what is left, gone, or not a regular file
            continue
        left -= len(data)
        parts.append(data.decode("utf-8", "replace"))
    return "\n".join(parts)


__all__ = ["SCOPE", "work_text"]
