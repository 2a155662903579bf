"""One reader for the eval sets skills carry, whatever wrote them, and where a skill keeps
them: `read_eval_file` tells the shapes apart by their keys (skill-creator's evals and the
variants written after it: skill_creator.py; Driftproof's cases: driftproof.py; trigger sets:
triggers.py), and `find_skill_evals` finds a skill's files in `<skill>/evals/`: `evals.json`
and a trigger set beside it, or a suite of our own (`task_suite.yaml`), and says of every
other eval file there why it is not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import SuiteError
from .driftproof import parse_driftproof
from .records import EVALS_FOLDER, EvalsFile, read_json
from .skill_creator import parse_evals
from .triggers import TriggerSet, is_trigger_set, parse_trigger_set

EVALS_FILE = "evals.json"
SUITE_FILE = "task_suite.yaml"
# A trigger set beside evals.json, by the names skills give it; the first found is read.
TRIGGER_FILES = tuple(
    f"{stem}{sep}{word}.json"
    for stem in ("trigger",)
    for word in ("eval", "evals", "queries", "cases")
    for sep in ("-", "_")
) + ("triggers.json",)
# The files of evals/ that may hold evals (the rest: inputs, notes, scripts).
DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
MAX_OTHER_FILES = 50  # other JSON files of evals/ read to tell what they hold


def read_eval_file(path: Path) -> EvalsFile | TriggerSet:
    """The evals, or the trigger queries, of a JSON file of any shape above; a located error
    naming the file, the eval and the field when it cannot be read."""
    data = read_json(path, "eval set")
    return parse_eval_data(data, path)


def read_trigger_file(path: Path) -> TriggerSet:
    """The queries of a file given as a trigger set (any shape triggers.py reads)."""
    return parse_trigger_set(read_json(path, "trigger set"), path)


def parse_eval_data(data: Any, path: Path) -> EvalsFile | TriggerSet:
    if is_trigger_set(data):
        return parse_trigger_set(data, path)
    if isinstance(data, Mapping) and "cases" in data and "evals" not in data:
        return parse_driftproof(data, path)
    return parse_evals(data, path)


@dataclass(frozen=True)
class SkillEvals:
    """Where a skill keeps its evals (None: not there), and every other eval file of its
    evals/ with why it is not read."""

    skill_dir: Path
    evals_json: Path | None = None
    trigger_set: Path | None = None
    suite: Path | None = None  # evals/task_suite.yaml, when there is no evals.json
    unread: tuple[tuple[str, str], ...] = ()  # (file name, why it is not read)

    @property
    def found(self) -> bool:
        return any(p is not None for p in (self.evals_json, self.trigger_set, self.suite))

    def describe(self) -> str:
        parts = [p.name for p in (self.evals_json, self.trigger_set, self.suite) if p]
        return " + ".join(parts) if parts else "no evals"

    def unread_lines(self) -> tuple[str, ...]:
        return tuple(f"{EVALS_FOLDER}/{name}: not read: {why}" for name, why in self.unread)


def _read_any(path: Path) -> EvalsFile | TriggerSet | SuiteError:
    try:
        return read_eval_file(path)
    except SuiteError as exc:
        return exc


def find_skill_evals(skill_dir: Path) -> SkillEvals:
    """The eval files of the skill in `skill_dir` (the folder holding SKILL.md), told apart
    by what they hold, not by their names alone: `evals.json` (else the one eval set in
    evals/), the trigger set (the first of TRIGGER_FILES that is one, else the one trigger
    set there), or `task_suite.yaml` when there are no evals; every other eval file is listed
    with why it is not read."""
    folder = skill_dir / EVALS_FOLDER
    listing = [p for p in _listing(folder) if p.suffix.lower() in DATA_SUFFIXES]
    named = [p for p in listing if p.name in (EVALS_FILE, *TRIGGER_FILES)]
    others = [p for p in listing if p.suffix.lower() == ".json" and p not in named]
    # the folder is the candidate's: a bounded number of files read, each capped
    read = {p.name: _read_any(p) for p in [*named, *others[:MAX_OTHER_FILES]]}
    evals = _chosen(read, (EVALS_FILE,), EvalsFile)
    triggers = _chosen(read, TRIGGER_FILES, TriggerSet)
    suite = folder / SUITE_FILE if (folder / SUITE_FILE).is_file() and evals is None else None
    found = SkillEvals(
        skill_dir=skill_dir,
        evals_json=folder / evals if evals else None,
        trigger_set=folder / triggers if triggers else None,
        suite=suite,
    )
    used = {evals, triggers, suite.name if suite else None}
    unread = tuple(
        (p.name, _why_unread(p, read.get(p.name), found)) for p in listing if p.name not in used
    )
    return SkillEvals(found.skill_dir, found.evals_json, found.trigger_set, found.suite, unread)


def _chosen(read: Mapping[str, Any], names: tuple[str, ...], kind: type) -> str | None:
    """The file read as `kind`: the first of `names` that is one, else the only file of that
    kind. An evals.json that cannot be read is chosen all the same: the run says why."""
    for name in names:
        value = read.get(name)
        if isinstance(value, kind) or (name == EVALS_FILE and isinstance(value, SuiteError)):
            return name
    of_kind = [name for name, value in read.items() if isinstance(value, kind)]
    return of_kind[0] if len(of_kind) == 1 else None


def _listing(folder: Path) -> list[Path]:
    """The files at the top of `folder`, sorted, links included (reading one is refused:
    the skill folder is the candidate's); folders left out (they hold input files)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_symlink() or p.is_file())
    except OSError:
        return []


def _why_unread(path: Path, kind: Any, found: SkillEvals) -> str:
    """Why an eval file beside the ones read is not run, and how to run it."""
    how = f"run it with --task-suite {path}"
    if path.name == SUITE_FILE:
        return f"{found.describe()} is read instead (a skill's evals are one suite); {how}"
    if kind is None and path.suffix.lower() == ".json":
        return f"over the {MAX_OTHER_FILES} other JSON files skill-eval reads in evals/; {how}"
    if kind is None:
        return "only JSON eval sets and task_suite.yaml are read from a skill's evals/"
    if isinstance(kind, SuiteError):
        return f"not an eval set skill-eval reads ({_first_line(kind)})"
    if isinstance(kind, TriggerSet):
        chosen = found.trigger_set.name if found.trigger_set else "none"
        return f"a trigger set ({len(kind.queries)} queries) beside {chosen}, the one read; {how}"
    if found.evals_json is None:
        return (
            f"an eval set ({len(kind.evals)} evals); with several here and no {EVALS_FILE}, "
            f"none is read; {how}"
        )
    return (
        f"an eval set ({len(kind.evals)} evals) beside {found.evals_json.name}, the one read; {how}"
    )


def _first_line(exc: SuiteError) -> str:
    problem = exc.problems[0] if exc.problems else None
    text = f"{problem.field}: {problem.message}" if problem and problem.field else str(exc)
    return text.splitlines()[0]


def eval_set_kind(path: Path) -> str:
    """`evals` or `triggers`: what a JSON file given as --task-suite holds."""
    return "triggers" if is_trigger_set(read_json(path, "eval set")) else "evals"


__all__ = [
    "EVALS_FILE",
    "SUITE_FILE",
    "TRIGGER_FILES",
    "SkillEvals",
    "eval_set_kind",
    "find_skill_evals",
    "parse_eval_data",
    "read_eval_file",
    "read_trigger_file",
]
