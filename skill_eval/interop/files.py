"""Copy input files between a skill folder and a suite folder without ever reading or
writing outside them: a path is refused when it is absolute, holds `..`, or leads out of
its folder through a symlink (on either side). Folders bring every file below them.

    plan = plan_copies([("evals[0].files[0]", "evals/files/a.csv")], src_root, dst_root,
                       source=json_path, force=False)
    copy_all(plan)

Every refusal is one UsageError naming the file that lists the path, the field and the path;
so is an OSError while writing (`writing`).
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..core.paths import inside
from ..core.task_files import MAX_TASK_BYTES, MAX_TASK_FILES
from ..errors import SkillEvalError, UsageError


@dataclass(frozen=True)
class Copy:
    source: Path  # a regular file inside the source root (after symlinks)
    dest: Path  # inside the destination root (after symlinks)
    relative: str  # POSIX path, relative to both roots
    dest_root: Path


def posix_relative(value: str) -> str:
    """A relative path as the suite writes it: `/` between parts (evals.json written on
    Windows may use `\\`)."""
    return PurePosixPath(value.replace("\\", "/")).as_posix()


def relative_problem(value: str) -> str | None:
    """Why `value` cannot be a root-relative path, or None."""
    if value.startswith(("/", "\\")) or Path(value).is_absolute() or ":" in value[:3]:
        return f"must be a relative path, not absolute: {value!r}"
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        return f"must not contain '..': {value!r}"
    return None


def _files_of(where: str, value: str, src_root: Path) -> list[tuple[str, Path]]:
    """(relative path, source file) for every file an entry names; raises ValueError."""
    rel = posix_relative(value)
    top = src_root / rel
    if not os.path.lexists(top):
        raise ValueError(f"not found: {value!r} (looked in {src_root})")
    if not inside(src_root, top):
        raise ValueError(f"{value!r} leads out of {src_root} through a symlink")
    if top.is_file():
        return [(rel, top)]
    if not top.is_dir():
        raise ValueError(f"must be a file or a folder: {value!r}")
    found: list[tuple[str, Path]] = []
    for directory, dirs, names in os.walk(top, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            full = Path(directory) / name
            shown = f"{rel}/{full.relative_to(top).as_posix()}"
            if full.is_symlink() and not inside(src_root, full):
                raise ValueError(f"{shown!r} is a symlink that leads out of {src_root}")
            if full.is_file():
                found.append((shown, full))
        for name in list(dirs):
            if (Path(directory) / name).is_symlink():  # never walked: say so instead
                raise ValueError(
                    f"{rel}/{(Path(directory) / name).relative_to(top).as_posix()}"
                    " is a symlinked folder; copy its files instead"
                )
    return found


def plan_copies(
    entries: Iterable[tuple[str, str]], src_root: Path, dst_root: Path, *, source: Path, force: bool
) -> list[Copy]:
    """The copies the (field, path) entries need, all checked before anything is written.
    `source` names the file listing them in errors; an existing different file at a
    destination is refused unless `force`."""
    plan: dict[str, Copy] = {}
    total = 0
    for where, value in entries:
        problem = relative_problem(value)
        try:
            if problem is not None:
                raise ValueError(problem)
            files = _files_of(where, value, src_root)
        except ValueError as exc:
            raise UsageError(f"{source}: {where}: {exc}", path=str(source)) from None
        for rel, src in files:
            dest = dst_root / rel
            if not inside(dst_root, dest):
                raise UsageError(
                    f"{source}: {where}: {rel!r} would be written outside "
                    f"{dst_root} (a symlink on the way)",
                    path=str(source),
                )
            if os.path.lexists(dest) and not _same(src, dest):
                if dest.is_symlink() or not dest.is_file():
                    raise UsageError(
                        f"{source}: {where}: {dest} exists and is not a regular file",
                        path=str(source),
                    )
                if not force and not filecmp.cmp(src, dest, shallow=False):
                    raise UsageError(
                        f"{source}: {where}: {dest} exists with other content "
                        "(use --force to overwrite)",
                        path=str(source),
                    )
            total += src.stat().st_size
            plan[rel] = Copy(src, dest, rel, dst_root)
        if len(plan) > MAX_TASK_FILES or total > MAX_TASK_BYTES:
            raise UsageError(
                f"{source}: {where}: more than {MAX_TASK_FILES} files or "
                f"{MAX_TASK_BYTES // (1024 * 1024)} MB of input files",
                path=str(source),
            )
    return list(plan.values())


def _same(src: Path, dest: Path) -> bool:
    try:
        return os.path.samefile(src, dest)
    except OSError:
        return False


@contextmanager
def writing() -> Iterator[None]:
    """Around writing the outputs the user named: an OSError there (a folder they may not
    write, a full disk) is bad input to fix, a UsageError naming the file, not a fault."""
    try:
        yield
    except SkillEvalError:
        raise  # already ours (FileTooLarge is an OSError too)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else "output"
        raise UsageError(f"{where}: cannot write: {exc.strerror or exc}", path=str(where)) from None


def copy_all(plan: Iterable[Copy]) -> int:
    """Copy every planned file (content only, never a link); the number copied."""
    copied = 0
    for item in plan:
        if os.path.lexists(item.dest) and _same(item.source, item.dest):
            continue  # the suite lives in the skill folder: the file is already there
        item.dest.parent.mkdir(parents=True, exist_ok=True)
        if not inside(item.dest_root, item.dest):  # a folder swapped for a link since the plan
            raise UsageError(f"{item.dest}: would be written outside {item.dest_root}")
        shutil.copyfile(item.source, item.dest, follow_symlinks=True)
        copied += 1
    return copied
