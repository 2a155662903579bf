"""Skills where they live: `skill-eval run SKILL_DIR...` (or a folder holding skill folders)
finds each skill's evals (interop/evals_sets.py), writes the suite they map to under
`<state-root>/suites/` (the same suite `import` writes), and plans one evaluation per suite.

The baseline is no skill, unless the command names one. A no-skill baseline never triggers,
so a skill's trigger set then runs apart, the skill alone (--no-baseline: its accuracy against
--min-pass-rate); with --baseline-skill, --no-baseline or --arm the evals and the trigger set
run as one suite. A skill folder with no evals is listed as such, never an error.

`--changed-since REF` keeps the skills whose folder changed since REF: committed since the
merge base of REF and HEAD, uncommitted, or untracked (what a pull request touched;
interop/judged_change.py).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import SkillEvalError, UsageError
from .evals_sets import SkillEvals, eval_set_kind, find_skill_evals
from .importer import ImportResult, import_evals
from .judged_change import changed_since
from .skill_finder import find_skills

Part = Literal["evals", "triggers", "evals+triggers", "suite"]
SUITES_FOLDER = "suites"  # under the state root: the suites made from eval sets


@dataclass(frozen=True)
class SkillRun:
    """One evaluation of a skill: its suite, and whether it runs with no baseline."""

    skill: str  # the skill folder's name, as the summary names it
    skill_dir: Path
    suite: Path
    part: Part
    no_baseline: bool = False

    @property
    def label(self) -> str:
        return self.skill if self.part != "triggers" else f"{self.skill} (triggers)"


@dataclass(frozen=True)
class SkillsPlan:
    runs: tuple[SkillRun, ...]
    without_evals: tuple[Path, ...]  # skill folders that hold no evals
    notes: tuple[str, ...]  # what the reader left out or assumed, and how trigger sets run
    # (skill name, why): skills whose evals cannot be read; the others still run
    unreadable: tuple[tuple[str, str], ...] = ()


def skill_folders(paths: Sequence[str]) -> list[Path]:
    """The skill folders named: each path is a skill folder (holding SKILL.md) or a folder
    searched for them at any depth (interop/skill_finder.py)."""
    return [found.path for found in find_skills(paths)]


def suite_from_eval_sets(
    evals_json: Path | None, trigger_set: Path | None, state_root: Path
) -> ImportResult:
    """The suite `import` writes for these eval sets, under `<state-root>/suites/`, in a folder
    named by their paths and bytes: the same sets give the same suite (a --resume finds it)."""
    digest = hashlib.sha256()
    for path in (evals_json, trigger_set):
        if path is not None:
            digest.update(os.fsencode(path.resolve()) + b"\0")
            try:
                digest.update(path.read_bytes())
            except OSError as exc:
                raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
        digest.update(b"\0")
    first = evals_json or trigger_set
    stem = first.resolve().parent.parent.name if first is not None else "suite"
    # absolute: run.json's plan names it, and `run --resume RUN_DIR` may start elsewhere
    folder = state_root.resolve() / SUITES_FOLDER / f"{stem or 'suite'}-{digest.hexdigest()[:12]}"
    return import_evals(evals_json, f"{folder}{os.sep}", trigger_set=trigger_set, force=True)


def suite_for_task_suite(path: str, state_root: Path, note: Callable[[str], None]) -> str:
    """--task-suite as a suite file: an evals.json (any shape) or a trigger set becomes the
    suite `import` writes for it; anything else is the suite itself."""
    file = Path(path)
    if file.suffix.lower() != ".json" or not file.is_file():
        return path
    kind = eval_set_kind(file)
    result = suite_from_eval_sets(
        file if kind == "evals" else None, file if kind == "triggers" else None, state_root
    )
    _say(result, note, file.name)
    return str(result.suite_path)


def _say(result: ImportResult, note: Callable[[str], None], name: str) -> None:
    for line in result.dropped:
        note(f"{name}: not carried over: {line}")
    for problem in result.problems:
        note(f"{name}: {problem}")
    if result.problems:
        raise UsageError(f"{name}: the suite made from it does not validate (see above)")


def plan_skill_runs(
    folders: Sequence[Path],
    state_root: Path,
    *,
    baseline_named: bool,
    labels: Mapping[Path, str] | None = None,
) -> SkillsPlan:
    """An evaluation per skill suite (two when a trigger set runs apart: see the docstring).
    A skill whose evals cannot be read is listed in `unreadable` with why; the others are
    still planned. `labels` names a folder in the summary (default: the folder's name)."""
    runs: list[SkillRun] = []
    without: list[Path] = []
    notes: list[str] = []
    unreadable: list[tuple[str, str]] = []
    for folder in folders:
        name = (labels or {}).get(folder) or folder.resolve().name
        found = find_skill_evals(folder)
        if not found.found:
            without.append(folder)
            continue
        mine: list[str] = []
        try:
            runs += _runs_of(found, name, state_root, baseline_named, mine.append)
        except SkillEvalError as exc:
            unreadable.append((name, " / ".join([*mine, str(exc)])))
            continue
        notes += mine
    return SkillsPlan(tuple(runs), tuple(without), tuple(notes), tuple(unreadable))


def _runs_of(
    found: SkillEvals,
    name: str,
    state_root: Path,
    baseline_named: bool,
    note: Callable[[str], None],
) -> list[SkillRun]:
    folder = found.skill_dir
    if found.suite is not None:
        return [SkillRun(name, folder, found.suite, "suite")]
    evals, triggers = found.evals_json, found.trigger_set
    if triggers is not None and not baseline_named:
        note(
            f"{name}: trigger set: run with --no-baseline (a no-skill baseline never "
            "triggers; --baseline-skill PATH compares two descriptions)"
        )
    if baseline_named or triggers is None or evals is None:
        result = suite_from_eval_sets(evals, triggers, state_root)
        _say(result, note, name)
        part: Part = "evals+triggers" if evals and triggers else "evals" if evals else "triggers"
        alone = part == "triggers" and not baseline_named
        return [SkillRun(name, folder, result.suite_path, part, no_baseline=alone)]
    first = suite_from_eval_sets(evals, None, state_root)
    second = suite_from_eval_sets(None, triggers, state_root)
    _say(first, note, name)
    _say(second, note, name)
    return [
        SkillRun(name, folder, first.suite_path, "evals"),
        SkillRun(name, folder, second.suite_path, "triggers", no_baseline=True),
    ]


@dataclass(frozen=True)
class ToValidate:
    """`validate`'s paths with each skill folder and eval set replaced by the suite made from
    it (in `workdir`), what that suite is shown as, and the problems and notes of the
    reading."""

    paths: tuple[str, ...]
    shown: dict[str, str]  # a made suite's path -> the skill folder or eval set it came from
    problems: tuple[str, ...]
    notes: tuple[str, ...]


def suites_to_validate(paths: Sequence[str], workdir: Path) -> ToValidate:
    """See ToValidate. A skill folder with no evals, or an eval set that cannot be read, is a
    problem (its one line)."""
    out: list[str] = []
    shown: dict[str, str] = {}
    problems: list[str] = []
    notes: list[str] = []
    for given in paths:
        path = Path(given)
        is_set = path.suffix.lower() == ".json" and path.is_file()
        if not is_set and not (path / "SKILL.md").is_file():
            out.append(given)
            continue
        found = find_skill_evals(path) if not is_set else None
        if found is not None and not found.found:
            problems.append(f"{given}: no evals (evals/evals.json, a trigger set or a suite)")
            continue
        if found is not None and found.suite is not None:
            out.append(str(found.suite))
            continue
        try:
            if found is not None:
                result = suite_from_eval_sets(found.evals_json, found.trigger_set, workdir)
            else:
                kind = eval_set_kind(path)
                result = suite_from_eval_sets(
                    path if kind == "evals" else None, path if kind == "triggers" else None, workdir
                )
        except UsageError as exc:
            problems.append(str(exc))
            continue
        notes += [f"{given}: not carried over: {line}" for line in result.dropped]
        out.append(str(result.suite_path))
        shown[str(result.suite_path)] = given
    return ToValidate(tuple(out), shown, tuple(problems), tuple(notes))


__all__ = [
    "SkillRun",
    "ToValidate",
    "SkillsPlan",
    "changed_since",
    "plan_skill_runs",
    "skill_folders",
    "suite_for_task_suite",
    "suite_from_eval_sets",
    "suites_to_validate",
]
