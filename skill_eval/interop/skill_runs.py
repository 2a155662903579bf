"""Skills where they live: `skill-eval run SKILL_DIR...` (or a folder holding skill folders,
at any depth: interop/skill_finder.py) finds each skill's evals (inputs/evalsets/folder.py)
and plans one evaluation per suite: the eval set, the trigger set or the skill folder itself
is the run's `--task-suite`, read in memory like any suite (the run keeps the suite it ran in
its run directory).

The baseline is no skill, unless the command names one. A no-skill baseline never triggers,
so a skill's trigger set then runs apart, the skill alone (--no-baseline: its accuracy against
--min-pass-rate); with --baseline-skill, --no-baseline or --arm the evals and the trigger set
run as one suite. A skill folder with no evals is listed as such, never an error; one whose
evals cannot be read is listed with why, and the other skills still run.

`--changed-since REF` keeps the skills whose folder changed since REF: committed since the
merge base of REF and HEAD, uncommitted, or untracked (what a pull request touched;
interop/judged_change.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import SkillEvalError
from ..inputs.evalsets.folder import SkillEvals, find_skill_evals
from ..inputs.suite import load_suite
from .judged_change import changed_since
from .skill_finder import find_skills

Part = Literal["evals", "triggers", "evals+triggers", "suite"]


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
    unreadable: tuple[tuple[str, SkillEvalError], ...] = ()


def skill_folders(paths: Sequence[str]) -> list[Path]:
    """The skill folders named: each path is a skill folder (holding SKILL.md) or a folder
    searched for them at any depth (interop/skill_finder.py)."""
    return [found.path for found in find_skills(paths)]


def plan_skill_runs(
    folders: Sequence[Path],
    *,
    baseline_named: bool,
    labels: Mapping[Path, str] | None = None,
) -> SkillsPlan:
    """An evaluation per skill suite (two when a trigger set runs apart: see the docstring).
    Each suite is read in memory, nothing written; a skill whose evals cannot be read is
    listed in `unreadable` with why, and the others are still planned. `labels` names a
    folder in the summary (default: the folder's name)."""
    runs: list[SkillRun] = []
    without: list[Path] = []
    notes: list[str] = []
    unreadable: list[tuple[str, SkillEvalError]] = []
    for folder in folders:
        name = (labels or {}).get(folder) or folder.resolve().name
        found = find_skill_evals(folder)
        if not found.found:
            without.append(folder)
            continue
        notes += [f"{name}: {line}" for line in found.unread_lines()]
        try:
            runs += _runs_of(found, name, baseline_named, notes.append)
        except SkillEvalError as exc:
            unreadable.append((name, exc))
    return SkillsPlan(tuple(runs), tuple(without), tuple(notes), tuple(unreadable))


def _runs_of(
    found: SkillEvals, name: str, baseline_named: bool, note: Callable[[str], None]
) -> list[SkillRun]:
    """The skill's runs, each suite read (in memory, nothing written) so an eval set that
    cannot be read is known before any run starts: a SkillEvalError naming it."""
    runs = _parts(found, name, baseline_named, note)
    for run in runs:
        load_suite(run.suite)
    return runs


def _parts(
    found: SkillEvals, name: str, baseline_named: bool, note: Callable[[str], None]
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
    if evals is not None and triggers is not None and baseline_named:
        return [SkillRun(name, folder, folder, "evals+triggers")]
    runs = [SkillRun(name, folder, evals, "evals")] if evals is not None else []
    if triggers is not None:
        runs.append(SkillRun(name, folder, triggers, "triggers", no_baseline=not baseline_named))
    return runs


__all__ = [
    "SkillRun",
    "SkillsPlan",
    "changed_since",
    "plan_skill_runs",
    "skill_folders",
]
