"""Skills where they live: `skill-eval run SKILL_DIR...` (or a folder holding skill folders)
finds each skill's evals (inputs/evalsets/folder.py) and plans one evaluation per suite: the
eval set, the trigger set or the skill folder itself is the run's `--task-suite`, read in
memory like any suite (the run keeps the suite it ran in its run directory).

The baseline is no skill, unless the command names one. A no-skill baseline never triggers,
so a skill's trigger set then runs apart, the skill alone (--no-baseline: its accuracy against
--min-pass-rate); with --baseline-skill, --no-baseline or --arm the evals and the trigger set
run as one suite. A skill folder with no evals is listed as such, never an error.

`--changed-since REF` keeps the skills whose folder changed since REF: committed since the
merge base of REF and HEAD, uncommitted, or untracked (what a pull request touched).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..core.paths import inside
from ..errors import UsageError
from ..inputs.evalsets.folder import SkillEvals, find_skill_evals
from ..inputs.suite import load_suite

Part = Literal["evals", "triggers", "evals+triggers", "suite"]
GIT_TIMEOUT = 60


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


def skill_folders(paths: Sequence[str]) -> list[Path]:
    """The skill folders named: each path is a skill folder (holding SKILL.md) or a folder
    whose subfolders are (those without SKILL.md are ignored)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if (path / "SKILL.md").is_file():
            found.append(path)
        elif path.is_dir():
            skills = sorted(p for p in path.iterdir() if (p / "SKILL.md").is_file())
            if not skills:
                raise UsageError(f"{path}: no SKILL.md in it or in its folders", path=given)
            found += skills
        else:
            raise UsageError(f"{path}: not a skill folder (no such folder)", path=given)
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _git(args: Sequence[str], cwd: Path) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--changed-since: cannot run git: {exc}") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        raise UsageError(f"--changed-since: git {' '.join(args)}: {reason}")
    return done.stdout


def changed_paths(ref: str, cwd: Path) -> tuple[Path, list[Path]]:
    """(the repository's top folder, every file changed since `ref`: see the docstring)."""
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
    try:
        base = _git(["merge-base", ref, "HEAD"], top).strip() or ref
    except UsageError:  # no common history (a shallow clone): compare with the ref itself
        base = ref
    names = _git(["diff", "--name-only", "-z", base, "--"], top).split("\0")
    names += _git(["ls-files", "--others", "--exclude-standard", "-z"], top).split("\0")
    return top, [top / name for name in names if name]


def changed_since(folders: Iterable[Path], ref: str) -> list[Path]:
    """The skill folders holding a file changed since `ref`."""
    folders = list(folders)
    if not folders:
        return []
    _, changed = changed_paths(ref, folders[0].resolve())
    return [f for f in folders if any(inside(f.resolve(), path) for path in changed)]


def plan_skill_runs(folders: Sequence[Path], *, baseline_named: bool) -> SkillsPlan:
    """An evaluation per skill suite (two when a trigger set runs apart: see the docstring).
    Nothing is read but the folder listings, nothing written: each run reads its suite."""
    runs: list[SkillRun] = []
    without: list[Path] = []
    notes: list[str] = []
    for folder in folders:
        found = find_skill_evals(folder)
        if not found.found:
            without.append(folder)
            continue
        name = folder.resolve().name
        notes += [f"{name}: {line}" for line in found.unread_lines()]
        runs += _runs_of(found, baseline_named, notes.append)
    return SkillsPlan(tuple(runs), tuple(without), tuple(notes))


def _runs_of(
    found: SkillEvals, baseline_named: bool, note: Callable[[str], None]
) -> list[SkillRun]:
    """The skill's runs, each suite read (in memory, nothing written) so an eval set that
    cannot be read stops the plan before any run starts: a SkillEvalError naming it."""
    runs = _parts(found, baseline_named, note)
    for run in runs:
        load_suite(run.suite)
    return runs


def _parts(found: SkillEvals, baseline_named: bool, note: Callable[[str], None]) -> list[SkillRun]:
    name, folder = found.skill_dir.resolve().name, found.skill_dir
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
