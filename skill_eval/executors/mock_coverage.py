"""What a `--mock-outputs` file leaves unscripted in a run: arms of the run it has no key for
(an --arm run's outputs are keyed by arm name, not candidate/baseline), tasks of the suite an
arm has no output for (every arm, for a file keyed by task), and keys that name no arm of the
run (a typo). An unscripted attempt gets MOCK_OUTPUT and fails its judges as if the skill had
failed, so `run --mock` says each gap before any attempt (an error with --strict) and
`validate --mock-outputs` reports them as warnings. A trigger task left unscripted is not a
gap: its default outcome (not triggered) is one a file means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.model import ARM_NAMES, Task
from ..core.validation import closest_name
from .mock_outputs import (
    MockOutputsError,
    arm_keys,
    check_mock_tasks,
    keyed_by_arm,
    load_mock_outputs,
)

SHOWN_TASKS = 5  # task ids named in one line; the rest are counted
DEFAULT = "the mock's default output"  # MOCK_OUTPUT, named in words


@dataclass(frozen=True)
class Coverage:
    """What scripted outputs leave out of a run; all empty when they script all of it."""

    tasks: int  # the suite's tasks
    unkeyed: tuple[str, ...] = ()  # arms of the run a file keyed by arm has no key for
    missing: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (arm, "" for every arm; task ids)
    stray: tuple[tuple[str, str], ...] = ()  # (a key naming no arm of the run, a hint)

    def lines(self, *, stray_only: bool = False) -> list[str]:
        """One line per gap: the arms with no key, each arm's unscripted tasks, the keys
        naming no arm (`stray_only`: those alone)."""
        out = []
        tasks = f"{self.tasks} task{'s' if self.tasks != 1 else ''}"
        if self.unkeyed and self.tasks and not stray_only:
            arms = ", ".join(repr(a) for a in self.unkeyed)
            out.append(
                f"arm {arms} has no key: its {tasks} get {DEFAULT}"
                if len(self.unkeyed) == 1
                else f"arms {arms} have no key: their {tasks} get {DEFAULT}"
            )
        for arm, ids in [] if stray_only else self.missing:
            named = ", ".join(ids[:SHOWN_TASKS]) + (
                f" and {len(ids) - SHOWN_TASKS} more" if len(ids) > SHOWN_TASKS else ""
            )
            gap = f"{len(ids)} of {tasks} have no output ({named})"
            out.append(
                f"arm {arm!r}: {gap}: they get {DEFAULT}"
                if arm
                else f"{gap}: every arm gets {DEFAULT} for them"
            )
        hints: dict[str, list[str]] = {}
        for key, hint in self.stray:
            hints.setdefault(hint, []).append(repr(key))
        for hint, keys in hints.items():
            which = f"key {keys[0]} names" if len(keys) == 1 else f"keys {', '.join(keys)} name"
            out.append(f"{which} no arm of this run{hint}")
        return out


def coverage(
    outputs: Mapping[str, Any], task_ids: Sequence[str], arms: Sequence[str] | None = None
) -> Coverage:
    """What `outputs` (as load_mock_outputs reads them) leave out of a run of the tasks
    `task_ids` by the arms `arms` (by name: candidate and baseline, or the --arm names).
    `arms` None, for a file checked without a run (`validate`), takes the arms the file
    names, and both candidate and baseline when it names either."""
    if not keyed_by_arm(outputs):
        unscripted = tuple(t for t in task_ids if t not in outputs)
        return Coverage(len(task_ids), missing=(("", unscripted),) if unscripted else ())
    keys = arm_keys(outputs)
    if arms is None:
        pair = list(ARM_NAMES) if set(keys) & set(ARM_NAMES) else []
        arms = [*pair, *(k for k in keys if k not in pair)]
    two_arms = set(arms) <= set(ARM_NAMES)  # a --no-baseline run may script a baseline
    unkeyed = tuple(a for a in arms if a not in keys)
    missing = []
    for arm in arms:
        table = outputs.get(arm) or {}
        unscripted = tuple(t for t in task_ids if t not in table)
        if arm in keys and unscripted:
            missing.append((arm, unscripted))
    stray = tuple(
        (key, _hint(key, unkeyed or arms))
        for key in keys
        if key not in arms and not (two_arms and key in ARM_NAMES)
    )
    return Coverage(len(task_ids), unkeyed, tuple(missing), stray)


def _hint(key: str, arms: Sequence[str]) -> str:
    """Why a key names no arm: the arm it was likely meant for, or the run's arms."""
    names = ", ".join(arms)
    if key in ARM_NAMES:
        return f"; an --arm run's outputs are keyed by arm name ({names})"
    close = closest_name(key, arms)
    return f" (did you mean {close!r}?)" if close is not None else f" (its arms: {names})"


def check_scripted(
    source: Path | None,
    outputs: Mapping[str, Any],
    tasks: Sequence[Task],
    arms: Sequence[str],
    *,
    strict: bool,
    rules: bool = False,
) -> list[str]:
    """A run's check of its scripted outputs (MockExecutor.check_run): an output for a task
    the suite does not have is a MockOutputsError (a typo); each gap is a warning line naming
    the file, or with `strict` one MockOutputsError naming them all. With `rules`
    (--mock-rules) an unscripted task is answered by the skill's rules, so only keys that name
    no arm are gaps."""
    where = source or Path("mock_outputs")
    check_mock_tasks(where, outputs, {task.id for task in tasks})
    gaps = coverage(outputs, scripted_tasks(tasks), arms).lines(stray_only=rules)
    if gaps and strict:
        raise MockOutputsError(where, "does not script this run (--strict): " + "; ".join(gaps))
    return [f"{where}: {gap}" for gap in gaps]


def scripted_notes(
    source: Path | None, outputs: Mapping[str, Any], tasks: Sequence[Task], arms: Sequence[str]
) -> list[str]:
    """The run's note on its scripted outputs (MockExecutor.run_notes): every arm gets the
    same ones (a file keyed by task, or one table under every arm), when they script it all."""
    gaps = coverage(outputs, scripted_tasks(tasks), arms).lines()
    if gaps or not _same_for_every_arm(outputs, arms):
        return []
    return [f"{source or Path('mock_outputs')}: {SAME_OUTPUTS}"]


# Said when a run's arms all get one script: the usual surprise of comparing two skills.
SAME_OUTPUTS = (
    "every arm gets the same scripted outputs, so the arms cannot differ whatever their "
    "skills: mock outputs are keyed by arm (candidate, baseline), not by skill"
)


def _same_for_every_arm(outputs: Mapping[str, Any], arms: Sequence[str]) -> bool:
    """Whether the run's two or more arms are all answered alike (a file keyed by task, or
    the same table under every arm's key)."""
    if len(arms) < 2 or not keyed_by_arm(outputs):
        return len(arms) >= 2
    tables = [outputs.get(arm) for arm in arms]
    return all(table == tables[0] for table in tables)


def scripted_tasks(tasks: Sequence[Task]) -> list[str]:
    """The ids of the tasks an output must be scripted for: a trigger task's unscripted
    outcome is a real one (not triggered), so it is not a gap."""
    return [task.id for task in tasks if not task.is_trigger_task]


def file_gaps(path: Path, tasks: Sequence[Task]) -> list[str]:
    """The gaps of a mock outputs file against a suite's tasks, for `validate`: a file keyed
    by arm is checked for the arms it names (load_mock_outputs's errors propagate)."""
    return coverage(load_mock_outputs(path), scripted_tasks(tasks)).lines()


__all__ = [
    "SAME_OUTPUTS",
    "Coverage",
    "check_scripted",
    "coverage",
    "file_gaps",
    "scripted_notes",
]
