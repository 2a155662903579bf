"""Eval sets as a Suite in memory: an evals.json (any shape folder.py reads), a trigger set,
or a skill folder's `evals/` becomes the suite `import` would write, checked as a suite file
is (inputs/suite_data.py), with nothing written. Its input files stay where they are: each
eval's `files` resolve against the skill root (a path not there is looked for in the eval
set's own folder, or read as one from the repository's root, and said so), contained as a
suite's are (relative, no `..`, no link out, bounded).

What the reading assumed or left out, and what a run must say about it, travels with the
suite (`Suite.source`): every key with no place in a suite, every eval file of the skill's
evals/ not read, a skill name that is not the folder's, and an eval whose input files are the
skill's own (SKILL.md, references/...): the baseline gets the skill that way.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from ...core.bounded import read_bounded
from ...core.model import Suite, SuiteSource
from ...core.paths import inside
from ...errors import Problem, SuiteError
from ...skills.plans import read_frontmatter
from ..suite_data import SUITE_VERSION, build_suite, check_suite_data
from .folder import SkillEvals, find_skill_evals, read_eval_file, read_trigger_file
from .records import EVALS_FOLDER, EvalsFile, bad, collapse, default_files_root
from .shapes import is_eval_set, is_skill_folder
from .tasks import map_tasks
from .triggers import TriggerSet

TRIGGER_FORMAT = "trigger set"
NO_EVALS = "no evals (evals/evals.json, a trigger set or evals/task_suite.yaml)"


def evals_without_skill(path: Path) -> str | None:
    """What `run` and `validate` both say of a folder with evals/ but no SKILL.md (None for
    any other): not a skill folder, and how its eval set is read alone."""
    if not path.is_dir() or is_skill_folder(path) or not (path / EVALS_FOLDER).is_dir():
        return None
    found = find_skill_evals(path)
    named = next((p for p in (found.evals_json, found.trigger_set, found.suite) if p), None)
    alone = f" (to read its eval set alone, name the file: {named})" if named else ""
    return (
        f"no SKILL.md in it, though it has {EVALS_FOLDER}/: a skill folder holds SKILL.md "
        f"beside {EVALS_FOLDER}/{alone}"
    )


def skill_evals(folder: Path) -> SkillEvals:
    """The skill folder's eval files; a located error when it has none."""
    found = find_skill_evals(folder)
    if not found.found:
        unread = "; ".join(found.unread_lines())
        problem = Problem(str(folder), NO_EVALS + (f" ({unread})" if unread else ""))
        raise SuiteError(str(problem), path=str(folder), problems=[problem])
    return found


def load_eval_sets(path: Path) -> Suite:
    """The suite of an eval set or trigger set file, or of a skill folder's evals.json and
    trigger set together (a folder whose evals are a task_suite.yaml: inputs/suite.py)."""
    if is_skill_folder(path):
        found = skill_evals(path)
        return suite_of(found.evals_json, found.trigger_set, path, found.unread_lines())
    read = read_eval_file(path)
    if isinstance(read, TriggerSet):
        return suite_of(None, path, path, (), triggers=read)
    return suite_of(path, None, path, (), evals=read)


def files_root(evals: EvalsFile | None, path: Path) -> Path:
    """Where the evals' input files are: the skill root (the folder above evals/), unless
    none of them is there and all are in the eval set's own folder (sets written by hand
    often name `files/x.csv` from evals/). `path`: the eval set (or the trigger set, whose
    tasks have no files)."""
    root = default_files_root(path)
    own = path.resolve().parent
    named = [f for case in (evals.evals if evals else ()) for f in case.files]
    if named and own != root and not any(os.path.lexists(root / f) for f in named):
        if all(os.path.lexists(own / f) for f in named):
            return own
    return root


def _found_as(value: str, root: Path, own: Path) -> tuple[str, str] | None:
    """Where an input file missing from the skill root is, as a path from the root, and how
    it was found: in the eval set's own folder (sets written by hand name `files/x.csv` from
    evals/), or named from the repository's root (`skills/<skill>/evals/files/x.csv`)."""
    if own != root and own.is_relative_to(root) and os.path.lexists(own / value):
        prefix = own.relative_to(root).as_posix()
        return f"{prefix}/{value}", f"taken from {prefix}/"
    parts = PurePosixPath(value).parts
    tail = root.parts
    for k in range(min(len(parts) - 1, len(tail)), 0, -1):
        if parts[:k] == tail[-k:] and os.path.lexists(root.joinpath(*parts[k:])):
            return PurePosixPath(*parts[k:]).as_posix(), "named from the repository's root"
    return None


def _beside(evals: EvalsFile, evals_path: Path, root: Path) -> tuple[EvalsFile, list[str]]:
    """Each input file missing from the skill root but found as `_found_as` says, under its
    path from the root; said so."""
    own = evals_path.resolve().parent
    notes: list[str] = []
    cases = []
    for i, case in enumerate(evals.evals):
        files = []
        for j, value in enumerate(case.files):
            found = None if os.path.lexists(root / value) else _found_as(value, root, own)
            files.append(found[0] if found else value)
            if found:
                notes.append(
                    f"{evals.list_key}[{i}].files[{j}]: {value!r} is not in the skill root; "
                    f"{found[1]}: {found[0]!r}"
                )
        cases.append(replace(case, files=tuple(files)))
    return replace(evals, evals=tuple(cases)), notes


def suite_of(
    evals_path: Path | None,
    trigger_path: Path | None,
    given: Path,
    unread: tuple[str, ...],
    *,
    evals: EvalsFile | None = None,
    triggers: TriggerSet | None = None,
    files_root_given: Path | None = None,
) -> Suite:
    """The Suite of an eval set and/or a trigger set (read here unless given); the evals'
    input files relative to `files_root_given` when given (import --files-root)."""
    if evals is None and evals_path is not None:
        read = read_eval_file(evals_path)
        evals = read if isinstance(read, EvalsFile) else None
        triggers = read if isinstance(read, TriggerSet) and triggers is None else triggers
        evals_path = evals_path if evals is not None else None
    if triggers is None and trigger_path is not None:
        triggers = read_trigger_file(trigger_path)
    files = tuple(p for p in (evals_path, trigger_path) if p is not None)
    first = files[0]
    root = files_root_given.resolve() if files_root_given else files_root(evals, first)
    moved: list[str] = []
    if evals is not None and evals_path is not None and files_root_given is None:
        evals, moved = _beside(evals, evals_path, root)
    mapped = map_tasks(evals, triggers, evals_path, trigger_path)
    if not mapped.tasks:
        nothing = [line for line in mapped.dropped if "nothing to judge" in line]
        reason = collapse(nothing)[0] if nothing else "it holds no eval"
        problem = Problem(str(first), f"no eval could be imported ({reason})")
        raise SuiteError(str(problem), path=str(first), problems=[problem])
    skill_dir = default_files_root(first)
    name = _skill_name(evals, triggers, skill_dir, first)
    data: dict[str, Any] = {
        "skill_id": name,
        "version": SUITE_VERSION,
        "description": f"Imported from {' and '.join(p.name for p in files)} "
        f"({evals.source_format if evals else TRIGGER_FORMAT})",
        "tasks": mapped.tasks,
    }
    _check_files(evals, evals_path or first, root)
    problems = check_suite_data(data, {}, str(first), root)
    if problems:
        found = [_located(p, mapped.origins, first) for p in problems]
        raise SuiteError("\n".join(map(str, found)), path=str(first), problems=found)
    own = skill_files_given(mapped.tasks, root, skill_dir)
    source = SuiteSource(
        format=evals.source_format if evals else TRIGGER_FORMAT,
        files=tuple(p.resolve() for p in files),
        data=data,
        not_carried_over=collapse([*(evals.notes if evals else ()), *_top_extra(evals, triggers),
                                   *moved, *mapped.dropped, *unread]),
        warnings=(*_name_warning(evals, skill_dir, first), *side_door_warnings(own)),
        skill_files=own,
        origins=tuple(mapped.origins),
    )  # fmt: skip
    return build_suite(data, given.resolve(), _digest(files), root=root, source=source)


def _skill_name(
    evals: EvalsFile | None, triggers: TriggerSet | None, skill_dir: Path, first: Path
) -> str:
    if evals is not None:
        return evals.skill_name
    if triggers is not None and triggers.skill_name:
        return triggers.skill_name
    return skill_dir.name if (skill_dir / "SKILL.md").is_file() else first.stem


def _top_extra(evals: EvalsFile | None, triggers: TriggerSet | None) -> list[str]:
    keys = [*(evals.extra if evals else ()), *(triggers.extra if triggers else ())]
    return [f"{key}: no place in a task suite" for key in keys]


def _frontmatter_name(skill_dir: Path) -> str | None:
    try:
        text = read_bounded(skill_dir / "SKILL.md").decode("utf-8", "replace")
    except OSError:
        return None
    meta = read_frontmatter(text)
    name = meta.get("name") if meta else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def _name_warning(evals: EvalsFile | None, skill_dir: Path, first: Path) -> list[str]:
    """A skill name the eval set gives that is neither its skill folder's nor the one its
    SKILL.md declares: the evals may have been copied from another skill, or it renamed."""
    if evals is None or not evals.named or not (skill_dir / "SKILL.md").is_file():
        return []
    folder, declared = skill_dir.resolve().name, _frontmatter_name(skill_dir)
    if evals.skill_name in (folder, declared):
        return []
    also = f" or the name its SKILL.md gives ({declared!r})" if declared else ""
    return [
        f"{first.name} names skill {evals.skill_name!r}, not its skill folder {folder!r}{also}: "
        "evals copied from another skill, or the skill renamed?"
    ]


def skill_files_given(
    tasks: list[dict[str, Any]], root: Path, skill_dir: Path
) -> dict[str, tuple[str, ...]]:
    """Task id -> the skill's own files (anything of its folder outside evals/) among the
    task's input files: copied into the workspace of every arm, the no-skill baseline's too."""
    if not (skill_dir / "SKILL.md").is_file():
        return {}
    skill, evals_dir = skill_dir.resolve(), (skill_dir / EVALS_FOLDER).resolve()
    found: dict[str, tuple[str, ...]] = {}
    for task in tasks:
        own = [
            value
            for value in task.get("files") or ()
            if inside(skill, root / value) and not inside(evals_dir, root / value)
        ]
        if own:
            found[str(task["id"])] = tuple(own)
    return found


def side_door_warnings(own: dict[str, tuple[str, ...]]) -> list[str]:
    return [
        f"task {task_id!r}: its input files include the skill's own ({', '.join(files)}): "
        "the baseline reads them too, so the comparison measures less than the skill"
        for task_id, files in own.items()
    ]


def _located(problem: Problem, origins: list[str], path: Path) -> Problem:
    """A suite problem of a made task, named by the eval it came from (and, for a field of
    the judge it was given, by the task)."""
    if problem.task_index is None or problem.task_index >= len(origins):
        return Problem(str(path), problem.message, field=problem.field)
    where = origins[problem.task_index]
    if problem.field.split(".")[0].split("[")[0] not in ("files", "prompt", "id"):
        where += f" (task {problem.task_id!r})"
    return Problem(str(path), problem.message, field=f"{where}.{problem.field}".rstrip("."))


def file_problem(value: str, root: Path) -> str | None:
    """Why an eval's input file cannot be used, or None: it must be a relative path, with
    no `..`, that exists in `root` and does not lead out of it through a link."""
    if value.startswith(("/", "\\")) or Path(value).is_absolute() or ":" in value[:3]:
        return f"must be a relative path, not absolute: {value!r}"
    if ".." in PurePosixPath(value.replace("\\", "/")).parts:
        return f"must not contain '..': {value!r}"
    if not os.path.lexists(root / value):
        return f"not found: {value!r} (looked in {root})"
    if not inside(root, root / value):
        return f"{value!r} leads out of {root} through a symlink"
    return None


def _check_files(evals: EvalsFile | None, path: Path, root: Path) -> None:
    if evals is None:
        return
    for i, case in enumerate(evals.evals):
        for j, value in enumerate(case.files):
            if (problem := file_problem(value, root)) is not None:
                raise bad(path, f"{evals.list_key}[{i}].files[{j}]", problem)


def _digest(files: tuple[Path, ...]) -> str:
    """The sha256 of the files read, in order (a change to either is another suite)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(hashlib.sha256(read_bounded(path)).digest())
    return digest.hexdigest()


__all__ = [
    "NO_EVALS",
    "files_root",
    "is_eval_set",
    "is_skill_folder",
    "load_eval_sets",
    "side_door_warnings",
    "skill_evals",
    "skill_files_given",
    "suite_of",
]
