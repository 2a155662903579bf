"""A task's input files (`files:` in the suite): which suite-relative paths are acceptable,
and what they expand to in the attempt's workspace.

    task_file_problem("inputs/sales.csv", suite_dir)   # None, or why the path is refused
    expand_task_files(task, suite_dir)                  # {"inputs/sales.csv": <real path>}

The same containment rules as `fixtures/`: relative, no `..` out of the suite folder, no
symlink that leads out of it. A folder brings every regular file below it; a symlink inside a
folder is left out (it could point anywhere by the time the run copies it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from .paths import inside

# A folder of input files larger than this is a mistake (a dataset, a venv): refuse it at
# load time rather than copy it once per attempt.
MAX_TASK_FILES = 500
MAX_TASK_BYTES = 50 * 1024 * 1024


def task_file_problem(value: object, suite_dir: Path) -> str | None:
    """Why `value` is not an acceptable `files:` entry for the suite in `suite_dir`, or None."""
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty path relative to the suite folder"
    if value.startswith(("/", "\\")) or Path(value).is_absolute() or ":" in value[:3]:
        return f"must be a path relative to the suite folder, not absolute: {value!r}"
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if ".." in parts:
        return f"must not contain '..': {value!r}"
    target = suite_dir / value
    if not inside(suite_dir, target):
        return f"must stay inside the suite folder after resolving symlinks: {value!r} leaves it"
    if not target.exists():
        return f"not found: {value!r} (looked in {suite_dir})"
    if not (target.is_file() or target.is_dir()):
        return f"must be a file or a folder: {value!r}"
    try:
        files = _walk(target, value)
    except ValueError as exc:
        return str(exc)
    total = sum(size for _, _, size in files)
    if len(files) > MAX_TASK_FILES or total > MAX_TASK_BYTES:
        return (
            f"{value!r} holds {len(files)} files, {total} bytes: more than "
            f"{MAX_TASK_FILES} files or {MAX_TASK_BYTES // (1024 * 1024)} MB"
        )
    return None


def _walk(target: Path, relative: str) -> list[tuple[str, Path, int]]:
    """(workspace path, real source, size) of every regular file of an entry."""
    rel = PurePosixPath(relative.replace("\\", "/")).as_posix()
    if target.is_file():
        real = Path(os.path.realpath(target))
        return [(rel, real, real.stat().st_size)]
    found: list[tuple[str, Path, int]] = []
    for directory, dirs, names in os.walk(target, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            full = Path(directory) / name
            if full.is_symlink() or not full.is_file():
                continue  # never follow a link out of the folder, never copy a device
            sub = full.relative_to(target).as_posix()
            found.append((f"{rel}/{sub}", full, full.stat().st_size))
            if len(found) > MAX_TASK_FILES:
                raise ValueError(f"{relative!r} holds more than {MAX_TASK_FILES} files")
    return found


def expand_task_files(paths: Iterable[str], suite_dir: Path) -> dict[str, Path]:
    """Workspace path -> source file for a task's `files:`; checked again here (a symlink
    swapped after load is still refused). Raises ValueError naming the entry."""
    out: dict[str, Path] = {}
    for value in paths:
        problem = task_file_problem(value, suite_dir)
        if problem is not None:
            raise ValueError(f"files: {problem}")
        for dest, source, _ in _walk(suite_dir / value, value):
            out[dest] = source
    return out


def task_files_digest(tasks: Iterable[object], suite_dir: Path) -> dict[str, str]:
    """Workspace path -> sha256 of every input file of the tasks (a changed input must not
    reuse cached results); "missing" for an entry that cannot be read."""
    out: dict[str, str] = {}
    for task in tasks:
        for value in getattr(task, "files", ()):
            try:
                for dest, source in expand_task_files([value], suite_dir).items():
                    out[dest] = hashlib.sha256(source.read_bytes()).hexdigest()
            except (OSError, ValueError):
                out[value] = "missing"
    return out
