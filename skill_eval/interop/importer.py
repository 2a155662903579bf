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
from .files import copy_all, plan_copies, posix_relative, writing
from .formats import (
    EvalCase,
    EvalsFile,
    TriggerQuery,
    default_files_root,
    files_note,
    parse_evals,
    parse_trigger_set,
    read_json,
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
    judge: dict[str, Any] = {"type": "expectations"}
    if case.expectations:
        judge["expectations"] = list(case.expectations)
    elif case.expected_output.strip():
        judge["expectations"] = [
            f"The result meets this description of success: {case.expected_output.strip()}"
        ]
        judge[DERIVED_KEY] = True
        dropped.append(
            f"{where}: no expectations; graded as one statement made from expected_output"
        )
    else:
        dropped.append(
            f"{where}: no expectations and no expected_output: nothing to judge, eval not imported"
        )
        return None
    if case.expected_output:
        judge["expected_output"] = case.expected_output
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

    def claim(task_id: str, where: str, path: Path) -> None:
        if task_id in owner:
            raise UsageError(
                f"{path}: {where}: task id {task_id!r} is also {owner[task_id]}'s", path=str(path)
            )
        owner[task_id] = where

    for i, case in enumerate(evals.evals):
        where = f"evals[{i}]"
        dropped += [f"{where}.{key}: no place in a task suite" for key in case.extra]
        judge = _judge(case, dropped, where)
        if judge is None:
            continue
        task_id = task_id_of(case)
        claim(task_id, where, evals_path)
        files = [posix_relative(f) for f in case.files]
        task: dict[str, Any] = {"id": task_id, "prompt": case.prompt + files_note(files)}
        if files:
            task["files"] = files
        task["judge"] = judge
        task["source"] = {"format": SOURCE_FORMAT, "eval_id": case.id}
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
    evals_json: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    trigger_set: str | os.PathLike[str] | None = None,
    files_root: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ImportResult:
    """Write the suite for `evals_json` (+ `trigger_set`) at `output`, its input files
    beside it. Refuses an existing output (or a different existing input file) unless
    `force`. Raises UsageError (one line naming file and field) on bad input."""
    evals_path = Path(evals_json)
    evals = parse_evals(read_json(evals_path, "evals.json"), evals_path)
    trigger_path = Path(trigger_set) if trigger_set is not None else None
    triggers = (
        parse_trigger_set(read_json(trigger_path, "trigger eval set"), trigger_path)
        if trigger_path is not None
        else []
    )
    suite_path = suite_output_path(output)
    if os.path.lexists(suite_path) and not force:
        raise UsageError(
            f"{suite_path}: already exists (use --force to overwrite)", path=str(suite_path)
        )
    if suite_path.is_symlink() or (suite_path.exists() and not suite_path.is_file()):
        raise UsageError(f"{suite_path}: exists and is not a regular file", path=str(suite_path))
    dropped = [f"{key}: no place in a task suite" for key in evals.extra]
    tasks = build_tasks(evals, triggers, dropped, evals_path, trigger_path)
    if not tasks:
        raise UsageError(
            f"{evals_path}: evals: no eval could be imported ({dropped[-1]})", path=str(evals_path)
        )
    root = Path(files_root) if files_root is not None else default_files_root(evals_path)
    suite_dir = suite_path.resolve().parent
    entries = [
        (f"evals[{i}].files[{j}]", value)
        for i, case in enumerate(evals.evals)
        for j, value in enumerate(case.files)
    ]
    plan = plan_copies(entries, root.resolve(), suite_dir, source=evals_path, force=force)
    data = {
        "skill_id": evals.skill_name,
        "version": SUITE_VERSION,
        "description": f"Imported from skill-creator's {evals_path.name}"
        + (f" and {trigger_path.name}" if trigger_path else ""),
        "tasks": tasks,
    }
    header = (
        f"Imported by `skill-eval import` from {evals_path}"
        + (f"\nand the trigger eval set {trigger_path}" if trigger_path else "")
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
    skill_root = default_files_root(evals_path)
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
