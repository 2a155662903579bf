"""How a pull request's skills are judged: the change, not its word. For each skill the change
touched, which evals judge it and what the change did to them:

- the evals the base branch holds for it, when `evals_from="base"` and the base has any (a
  pull request cannot weaken the evals it is judged by; a new skill uses its own);
- `removed` when the base had evals and the change took them away (the gate fails it);
- `unjudged` when it has none on either side (not a pass unless the workflow allows it);
- whether the change touched its evals (named in the summary).

Judging a skill by the base's evals copies the changed skill's folder, less its evals/, into
`workdir` and the base's evals/ beside it: every reader then sees one skill folder.

    found = judge_change(find_skills(["."]), "origin/main", workdir, evals_from="base")
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..core.paths import inside
from ..errors import UsageError
from ..inputs.evalsets.folder import find_skill_evals
from ..inputs.evalsets.records import EVALS_FOLDER
from .git_refs import changed_paths, check_ref, copy_tree, toplevel
from .skill_finder import SkillFolder

EvalsFrom = Literal["head", "base"]
State = Literal["judged", "removed", "unjudged"]
MAX_SKILL_FILES = 5000  # files of a skill folder copied to judge it by the base's evals
MAX_SKILL_BYTES = 256 * 1024 * 1024  # and their bytes


@dataclass(frozen=True)
class JudgedSkill:
    """One changed skill: `folder` as the change has it, `judged_dir` the folder its evals
    are read from (the same, or a copy holding the base's evals/)."""

    folder: SkillFolder
    judged_dir: Path
    state: State
    evals_from: EvalsFrom = "head"
    evals_changed: bool = False  # the change touched files under its evals/
    base_had_evals: bool = False

    @property
    def label(self) -> str:
        return self.folder.label


def changed_since(folders: Iterable[Path], ref: str) -> list[Path]:
    """The folders holding a file changed since `ref` (see git_refs.changed_paths)."""
    folders = list(folders)
    if not folders:
        return []
    top = toplevel(folders[0].resolve(), "--changed-since")
    changed = changed_paths(check_ref(ref, top), top)
    return [f for f in folders if any(inside(f.resolve(), path) for path in changed)]


def _copy_skill(source: Path, dest: Path) -> None:
    """The skill folder without its evals/ (links kept as links, never followed), bounded in
    files and bytes: a pull request decides how big it is."""
    count, size = [0], [0]

    def ignore(folder: str, names: list[str]) -> set[str]:
        count[0] += len(names)
        if count[0] > MAX_SKILL_FILES:
            raise OSError(f"{source}: over {MAX_SKILL_FILES} files")
        return {EVALS_FOLDER} if Path(folder) == source else set()

    def copy(src: str, dst: str) -> str:
        size[0] += os.lstat(src).st_size
        if size[0] > MAX_SKILL_BYTES:
            raise OSError(f"{source}: over {MAX_SKILL_BYTES} bytes")
        return str(shutil.copy2(src, dst))

    shutil.copytree(source, dest, symlinks=True, ignore=ignore, copy_function=copy)


def judge_change(
    folders: Sequence[SkillFolder],
    ref: str | None,
    workdir: Path,
    *,
    evals_from: EvalsFrom = "head",
) -> list[JudgedSkill]:
    """The skills of `folders` the change since `ref` touched (all of them without a ref),
    each with the evals it is judged by (see the module docstring)."""
    if not folders:
        return []
    if ref is None:
        return [_judged(f, f.path, None, False, "head") for f in folders]
    top = toplevel(folders[0].path.resolve(), "--changed-since").resolve()
    commit = check_ref(ref, top)
    changed = changed_paths(commit, top)
    out: list[JudgedSkill] = []
    for n, folder in enumerate(folders):
        here = folder.path.resolve()
        if not any(inside(here, path) for path in changed):
            continue
        evals = here / EVALS_FOLDER
        touched = any(inside(evals, path) or path == evals for path in changed)
        base_copy = workdir / "base" / str(n) / here.name
        relative = f"{here.relative_to(top).as_posix()}/{EVALS_FOLDER}"
        copy_tree(commit, relative, base_copy / EVALS_FOLDER, top)
        base_has = find_skill_evals(base_copy).found
        judged_dir = here
        if base_has and evals_from == "base":
            judged_dir = workdir / "judged" / str(n) / here.name
            try:
                _copy_skill(here, judged_dir)
                shutil.copytree(base_copy / EVALS_FOLDER, judged_dir / EVALS_FOLDER)
            except OSError as exc:
                raise UsageError(f"--evals-from base: {folder.label}: cannot copy: {exc}") from None
        out.append(
            _judged(folder, judged_dir, base_has, touched, evals_from if base_has else "head")
        )
    return out


def _judged(
    folder: SkillFolder, judged_dir: Path, base_has: bool | None, touched: bool, source: str
) -> JudgedSkill:
    head_has = find_skill_evals(folder.path).found
    state: State = "judged"
    if base_has and not head_has:
        state = "removed"
    elif not head_has and not base_has:
        state = "unjudged"
    return JudgedSkill(
        folder,
        judged_dir,
        state,
        "base" if source == "base" else "head",
        touched,
        bool(base_has),
    )


__all__ = ["EvalsFrom", "JudgedSkill", "changed_since", "judge_change"]
