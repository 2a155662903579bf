"""`skill-eval import`: skill-creator's evals.json (and a trigger eval set) as a task suite.

Each eval becomes a task: id `eval-<id>` (or its `eval_name`), its prompt (with the list of
its input files appended, as skill-creator gives it to its executor), its input files
(copied into the suite folder at the same relative path, contained: files.py) and one
`expectations` judge holding every statement, with expected_output as the grader's context.
expected_output never becomes the task's `reference`: it describes success in words ("A
chart of ..."), and a reference is an output every deterministic judge must pass.
Each trigger query becomes a trigger task `{id: trigger-<n>, query, should_trigger}`.
Everything that has no place in the suite is listed in `ImportResult.dropped`; the written
suite is loaded back and any problem it has is in `ImportResult.problems`.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..core.paths import atomic_write_text
from ..errors import SuiteError, UsageError
from ..inputs.suite import SUITE_FILE_NAME, SUITE_VERSION, load_suite
from .assertions import judge_for
from .evals_sets import read_eval_set, read_trigger_set
from .files import Copy, copy_all, plan_copies, posix_relative, writing
from .formats import (
    EvalCase,
    EvalsFile,
    TriggerQuery,
    default_files_root,
    files_note,
)

SOURCE_FORMAT = "skill-creator evals.json"
TRIGGER_SOURCE_FORMAT = "skill-creator trigger eval set"
# Set on a judge whose single statement was made from expected_output (the eval had no
# expectations): export leaves it out again, so evals.json -> suite -> evals.json holds.
DERIVED_KEY = "x-derived-from-expected-output"
# What the printed run command leaves to the user: the skill folder when import found none,
# and for trigger tasks another version of the skill to compare with.
SKILL_PLACEHOLDER = "SKILL_DIR"
BASELINE_PLACEHOLDER = "OTHER_VERSION"
STATE_ROOT = ".skill-eval"


@dataclass(frozen=True)
class ImportResult:
    suite_path: Path
    tasks: int
    trigger_tasks: int
    files_copied: int
    dropped: list[str] = field(default_factory=list)  # what was not carried over
    problems: list[str] = field(default_factory=list)  # the written suite's, if any
    run_command: str = ""  # the `skill-eval run` that runs the suite (see run_command)
    run_notes: list[str] = field(default_factory=list)  # what to fill in, and why


def suite_output_path(output: str | os.PathLike[str]) -> Path:
    """`-o` as a suite file: a folder (existing, or written with a trailing slash) means
    `<folder>/task_suite.yaml`."""
    text = os.fspath(output)
    path = Path(text)
    if path.is_dir() or text.endswith(("/", os.sep)):
        return path / SUITE_FILE_NAME
    return path


def task_id_of(case: EvalCase) -> str:
    if case.name is not None:
        return case.name
    return f"eval-{case.id}" if isinstance(case.id, int) else str(case.id)


def _judge(case: EvalCase, dropped: list[str], where: str) -> dict[str, Any] | None:
    """The eval's judge (interop/assertions.py judge_for); with no statement and no check,
    one statement made from expected_output; with neither, None (the eval is left out)."""
    statements = list(case.expectations)
    derived = False
    if not statements and not case.checks and case.expected_output.strip():
        statements = [
            f"The result meets this description of success: {case.expected_output.strip()}"
        ]
        derived = True
        dropped.append(
            f"{where}: no expectations; graded as one statement made from expected_output"
        )
    judge = judge_for(
        statements, case.checks, threshold=case.threshold, expected_output=case.expected_output
    )
    if judge is None:
        dropped.append(
            f"{where}: no expectations and no expected_output: nothing to judge, eval not imported"
        )
        return None
    if derived:
        judge[DERIVED_KEY] = True
    return judge


def build_tasks(
    evals: EvalsFile,
    triggers: list[TriggerQuery],
    dropped: list[str],
    evals_path: Path,
    trigger_path: Path | None,
) -> list[dict[str, Any]]:
    """The suite's task list; `dropped` gains a line per thing left behind."""
    tasks: list[dict[str, Any]] = []
    owner: dict[str, str] = {}
    names = [case.name for case in evals.evals]

    def claim(task_id: str, where: str, path: Path) -> None:
        if task_id in owner:
            raise UsageError(
                f"{path}: {where}: task id {task_id!r} is also {owner[task_id]}'s", path=str(path)
            )
        owner[task_id] = where

    for i, case in enumerate(evals.evals):
        where = f"{evals.list_key}[{i}]"
        dropped += [f"{where}.{key}: no place in a task suite" for key in case.extra]
        dropped += list(case.dropped)
        judge = _judge(case, dropped, where)
        if judge is None:
            continue
        task_id = task_id_of(case)
        if case.name is not None and names.count(case.name) > 1:  # a title, not an id
            task_id = f"eval-{case.id}" if isinstance(case.id, int) else str(case.id)
            dropped.append(f"{where}: name {case.name!r} is not unique; task id {task_id!r}")
        claim(task_id, where, evals_path)
        files = [posix_relative(f) for f in case.files]
        task: dict[str, Any] = {"id": task_id, "prompt": case.prompt + files_note(files)}
        if files:
            task["files"] = files
        task["judge"] = judge
        task["source"] = {"format": evals.source_format, "eval_id": case.id}
        tasks.append(task)
    for i, query in enumerate(triggers):
        where = f"trigger set [{i}]"
        dropped += [f"{where}.{key}: no place in a trigger task" for key in query.extra]
        task_id = f"trigger-{i + 1}"
        claim(task_id, where, trigger_path or evals_path)
        tasks.append({"id": task_id, "query": query.query, "should_trigger": query.should_trigger})
    return tasks


def _shown(path: Path) -> str:
    """A path for a command line: relative to the working directory when below it."""
    text = os.path.relpath(path) if path.is_absolute() else os.fspath(path)
    return shlex.quote(os.fspath(path.resolve()) if text.startswith("..") else text)


def run_command(
    suite_path: Path, skill_dir: Path | None, trigger_tasks: int
) -> tuple[str, list[str]]:
    """The `skill-eval run` command that runs what import wrote, and a line for each part the
    user fills in. Trigger tasks need a baseline that can trigger (another version of the
    skill: --baseline-skill); the no-skill baseline, the default, never triggers."""
    skill = _shown(skill_dir) if skill_dir is not None else SKILL_PLACEHOLDER
    parts = [
        "skill-eval",
        "run",
        "--task-suite",
        _shown(suite_path),
        "--standalone",
        "--skill-path",
        skill,
    ]
    notes = []
    if skill_dir is None:
        notes.append(f"{SKILL_PLACEHOLDER}: the skill's folder (the one holding SKILL.md)")
    if trigger_tasks:
        parts += ["--baseline-skill", BASELINE_PLACEHOLDER]
        notes.append(
            f"{BASELINE_PLACEHOLDER}: another version of the skill to compare with "
            "(say a copy made before you edit its description): trigger tasks "
            "compare two descriptions, and a no-skill baseline never triggers; "
            f"--no-baseline in its place measures {skill} alone"
        )
    return " ".join([*parts, "--state-root", STATE_ROOT]), notes


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (prompts) as `|` blocks, so the suite reads like a hand-written one."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render_suite(data: dict[str, Any], header: str) -> str:
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return "".join(f"# {line}\n" for line in header.splitlines()) + body


def import_evals(
    evals_json: str | os.PathLike[str] | None,
    output: str | os.PathLike[str],
    *,
    trigger_set: str | os.PathLike[str] | None = None,
    files_root: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ImportResult:
    """Write the suite for `evals_json` (any shape interop/evals_sets.py reads) and/or
    `trigger_set` at `output`, its input files beside it. Refuses an existing output (or a
    different existing input file) unless `force`. Raises UsageError (one line naming file,
    eval and field) on bad input."""
    evals_path = Path(evals_json) if evals_json is not None else None
    trigger_path = Path(trigger_set) if trigger_set is not None else None
    first = evals_path or trigger_path
    if first is None:
        raise UsageError("import: give an eval set, a trigger set, or both")
    evals = read_eval_set(evals_path) if evals_path is not None else _no_evals(first)
    triggers = read_trigger_set(trigger_path) if trigger_path is not None else []
    suite_path = suite_output_path(output)
    if os.path.lexists(suite_path) and not force:
        raise UsageError(
            f"{suite_path}: already exists (use --force to overwrite)", path=str(suite_path)
        )
    if suite_path.is_symlink() or (suite_path.exists() and not suite_path.is_file()):
        raise UsageError(f"{suite_path}: exists and is not a regular file", path=str(suite_path))
    dropped = [*evals.notes, *(f"{key}: no place in a task suite" for key in evals.extra)]
    tasks = build_tasks(evals, triggers, dropped, evals_path or first, trigger_path)
    if not tasks:
        raise UsageError(
            f"{first}: {evals.list_key}: no eval could be imported ({dropped[-1]})",
            path=str(first),
        )
    suite_dir = suite_path.resolve().parent
    plan = _copies(evals, evals_path, files_root, suite_dir, force)
    given = [p for p in (evals_path, trigger_path) if p is not None]
    sources = [p.name for p in given]
    data = {
        "skill_id": evals.skill_name,
        "version": SUITE_VERSION,
        "description": f"Imported from {' and '.join(sources)} ({_formats(evals, evals_path)})",
        "tasks": tasks,
    }
    header = (
        f"Imported by `skill-eval import` from {' and '.join(map(str, given))}"
        + "\nJudges of type `expectations` grade each statement with a model."
    )
    with writing():
        suite_dir.mkdir(parents=True, exist_ok=True)
        copied = copy_all(plan)
        atomic_write_text(suite_path, render_suite(data, header))
    problems: list[str] = []
    try:
        load_suite(suite_path)
    except SuiteError as exc:
        problems = [str(p) for p in exc.problems] or [str(exc)]
    trigger_tasks = sum("should_trigger" in t for t in tasks)
    skill_root = default_files_root(first)
    command, notes = run_command(
        suite_path, skill_root if (skill_root / "SKILL.md").is_file() else None, trigger_tasks
    )
    return ImportResult(
        suite_path=suite_path,
        tasks=sum("judge" in t for t in tasks),
        trigger_tasks=trigger_tasks,
        files_copied=copied,
        dropped=dropped,
        problems=problems,
        run_command=command,
        run_notes=notes,
    )


def _formats(evals: EvalsFile, evals_path: Path | None) -> str:
    return evals.source_format if evals_path is not None else TRIGGER_SOURCE_FORMAT


def _no_evals(trigger_path: Path) -> EvalsFile:
    """The empty eval set of a trigger set imported alone: named after its skill folder (the
    one holding SKILL.md above it), else after the file."""
    root = default_files_root(trigger_path)
    name = root.name if (root / "SKILL.md").is_file() else trigger_path.stem
    return EvalsFile(skill_name=name, evals=())


def _copies(
    evals: EvalsFile,
    evals_path: Path | None,
    files_root: str | os.PathLike[str] | None,
    suite_dir: Path,
    force: bool,
) -> list[Copy]:
    """The input files to copy. Each is relative to --files-root when given; else to the skill
    root (skill-creator), or, when it is not there, to the eval set's own folder (`evals/`:
    sets written by hand often name `files/x.csv`)."""
    if evals_path is None:
        return []
    root = Path(files_root).resolve() if files_root is not None else None
    skill_root = default_files_root(evals_path).resolve()
    own = evals_path.resolve().parent
    plans: dict[Path, list[tuple[str, str]]] = {}
    for i, case in enumerate(evals.evals):
        for j, value in enumerate(case.files):
            base = root or skill_root
            if root is None and not os.path.lexists(skill_root / value):
                base = own if os.path.lexists(own / value) else skill_root
            plans.setdefault(base, []).append((f"{evals.list_key}[{i}].files[{j}]", value))
    copies: list[Copy] = []
    for base, entries in plans.items():
        copies += plan_copies(entries, base, suite_dir, source=evals_path, force=force)
    return copies
