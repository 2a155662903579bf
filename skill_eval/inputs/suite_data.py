"""A task suite's data, checked and made a Suite: JSON Schema, then semantic rules (unique
ids, input files, references, each judge's own checks), every problem at once, each located by
line, task and field. The YAML reader (inputs/suite.py) and the eval-set reader
(inputs/evalsets/) both end here, so a suite read from either is checked alike.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from ..core.model import DEFAULT_TIMEOUT_SECONDS, Suite, SuiteSource, Task
from ..core.paths import SCHEMAS_DIR
from ..core.safeyaml import LineMap, PathKey, render_path
from ..core.task_files import task_file_problem
from ..core.validation import schema_problems
from ..errors import Problem, SuiteError
from ..judges import observers
from ..judges.base import validate_judge_config
from ..judges.triggers.tasks import trigger_task, trigger_task_problems
from .reference import reference_problems

SUITE_VERSION = "1.0"
_SCHEMA_FILE = SCHEMAS_DIR / "task_suite.schema.json"
_NUMBER_VERSION = (
    'must be the string "1.0": YAML reads an unquoted 1.0 as a number, so write version: "1.0"'
)
_TASK_FIELD = re.compile(r"^tasks\[(\d+)\](?:\.(.*))?$", re.DOTALL)


@cache
def suite_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a task suite, as shipped in the package."""
    with open(_SCHEMA_FILE, encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema


def build_suite(
    data: Mapping[str, Any],
    path: Path,
    sha256: str,
    *,
    root: Path | None = None,
    source: SuiteSource | None = None,
) -> Suite:
    """The Suite of data `check_suite_data` found no problem in."""
    return Suite(
        path=path,
        skill_id=data["skill_id"],
        version=data["version"],
        tasks=tuple(
            _task(i, t, data.get("allowed_tools"), data.get("observers") or ())
            for i, t in enumerate(data["tasks"])
        ),
        sha256=sha256,
        description=data.get("description") or "",
        root=root,
        source=source,
    )


def suite_error(shown: str, problems: list[Problem]) -> SuiteError:
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    return SuiteError(f"Invalid task suite {shown}: {count}", path=shown, problems=problems)


def _task(
    index: int,
    data: Mapping[str, Any],
    default_tools: list[str] | None,
    suite_observers: Iterable[Mapping[str, Any]],
) -> Task:
    if "should_trigger" in data:  # a trigger task: its query is the prompt, its judge implied
        task = trigger_task(index, data)
        return replace(
            task, observers=observers.for_task(suite_observers, data.get("observers") or (), task)
        )
    tools = data.get("allowed_tools", default_tools)  # the suite's list, unless the task's own
    task = Task(
        id=data["id"],
        prompt=data["prompt"],
        judge=dict(data["judge"]),
        timeout_seconds=float(data.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
        description=data.get("description") or "",
        category=data.get("category"),
        index=index,
        files=tuple(data.get("files") or ()),
        allowed_tools=tuple(tools) if tools is not None else None,
        max_turns=data.get("max_turns"),
        reference=data.get("reference"),
    )
    return replace(
        task, observers=observers.for_task(suite_observers, data.get("observers") or (), task)
    )


def check_suite_data(data: Any, lines: LineMap, path: str, suite_dir: Path) -> list[Problem]:
    """Every schema and semantic problem of already-parsed suite data, sorted by line.

    `lines` maps value paths to lines (see safeyaml.load_yaml_text); `path` names the file in
    problems; `suite_dir` is where judges resolve suite-relative files such as fixtures/.
    """
    if not isinstance(data, dict):
        what = "the file is empty" if data is None else f"got {_kind(data)}"
        message = f"the top level must be a mapping with skill_id, version and tasks; {what}"
        return [Problem(path, message, line=lines.get((), 1))]
    locate = _Locator(path, lines, data)
    schema = [
        p
        for p in schema_problems(data, suite_schema(), path=path, lines=lines)
        if not _inside_judge(p.field, locate.tasks)
    ]
    found: list[tuple[str, str]] = []
    if locate.tasks:
        found += _task_problems(locate.tasks, suite_dir, data.get("allowed_tools"))
    found += observers.problems(data.get("observers"), suite_dir, "observers")
    bad_numbers = _unusable_numbers(data)
    if bad_numbers:  # one problem per field: this one says what is wrong with the value
        schema = [p for p in schema if p.field not in bad_numbers]
        found = [(w, m) for w, m in found if w not in bad_numbers] + list(bad_numbers.items())
    version = data.get("version")
    if isinstance(version, int | float) and not isinstance(version, bool):
        schema = [
            replace(p, message=_NUMBER_VERSION) if p.field == "version" else p for p in schema
        ]
    problems = [relocate(p, locate.tasks) for p in schema]
    problems += [locate(where, message) for where, message in found]
    return sorted(problems, key=lambda p: p.line if p.line is not None else 0)


def _inside_judge(field: str, tasks: list[Any]) -> bool:
    """Whether `field` lies in a task's judge: each judge present is checked by
    validate_judge_config (in _task_problems), once, so the suite schema does not repeat it."""
    match = _TASK_FIELD.match(field)
    if not match or re.split(r"[.\[]", match.group(2) or "")[0] != "judge":
        return False
    index = int(match.group(1))
    return index < len(tasks) and isinstance(tasks[index], dict) and "judge" in tasks[index]


def _task_problems(tasks: list[Any], suite_dir: Path, default_tools: Any) -> list[tuple[str, str]]:
    """Unique ids, input files, references and each judge's own config checks, as (field,
    message) pairs."""
    found: list[tuple[str, str]] = []
    first_index: dict[str, int] = {}
    for index, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        task_id = task.get("id")
        if isinstance(task_id, str) and task_id:
            if task_id in first_index:
                found.append(
                    (
                        f"tasks[{index}].id",
                        f"duplicate task id {task_id!r}: tasks"
                        f"[{first_index[task_id]}] and tasks[{index}] share it",
                    )
                )
            else:
                first_index[task_id] = index
        files = task.get("files")
        if isinstance(files, list):
            found += [
                (f"tasks[{index}].files[{i}]", problem)
                for i, value in enumerate(files)
                if isinstance(value, str)
                and value
                and (problem := task_file_problem(value, suite_dir)) is not None
            ]
        if "query" in task or "should_trigger" in task:
            found += [
                (f"tasks[{index}].{where}", message)
                for where, message in trigger_task_problems(task)
            ]
        elif "judge" in task:
            try:
                judge_problems = validate_judge_config(task["judge"], suite_dir, "judge")
            except Exception as exc:  # a plugin's check must not crash validation
                judge_problems = [("judge", f"judge check failed: {type(exc).__name__}: {exc}")]
            found += [(f"tasks[{index}].{where}", msg) for where, msg in judge_problems]
        agent = bool(task.get("files")) or task.get("allowed_tools", default_tools) is not None
        found += [(f"tasks[{index}].{w}", m) for w, m in reference_problems(task, agent)]
        found += observers.problems(task.get("observers"), suite_dir, f"tasks[{index}].observers")
    return found


def _unusable_numbers(data: Any) -> dict[str, str]:
    """Field -> message for every number no computation should see: NaN and infinities
    (`.nan`, `.inf`, `1e999`), which compare false with every bound a schema sets, and
    integers too large to become a float. Anywhere in the suite, x- metadata included."""
    found: dict[str, str] = {}
    stack: list[tuple[PathKey, Any]] = [((), data)]
    while stack:
        at, value = stack.pop()
        if isinstance(value, dict):
            stack += [(at + (k,), v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(at + (i,), v) for i, v in enumerate(value)]
        elif isinstance(value, float) and not math.isfinite(value):
            shown = ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
            found[render_path(at)] = f"must be a finite number, not {shown}"
        elif (
            isinstance(value, int)
            and not isinstance(value, bool)
            and abs(value) > sys.float_info.max
        ):
            found[render_path(at)] = "is too large a number"
    return found


class _Locator:
    """Turns (field, message) into a Problem: the line of the field (or of its nearest
    ancestor), and task index, id and task-relative field for fields under tasks[i]."""

    def __init__(self, path: str, lines: LineMap, data: dict[str, Any]) -> None:
        self.path = path
        self.lines = {render_path(key): line for key, line in lines.items()}
        tasks = data.get("tasks")
        self.tasks: list[Any] = tasks if isinstance(tasks, list) else []

    def line_of(self, where: str) -> int | None:
        while where not in self.lines and where:
            cut = max(where.rfind("."), where.rfind("["))
            where = where[:cut] if cut > 0 else ""
        return self.lines.get(where)

    def __call__(self, where: str, message: str) -> Problem:
        return relocate(Problem(self.path, message, self.line_of(where), where), self.tasks)


def relocate(problem: Problem, tasks: list[Any] | None) -> Problem:
    """Make a `tasks[i].x` field task-relative: field `x`, task_index i, and task_id when
    the task has a non-empty string id."""
    match = _TASK_FIELD.match(problem.field)
    if not match:
        return problem
    index = int(match.group(1))
    task = tasks[index] if tasks is not None and index < len(tasks) else None
    task_id = task.get("id") if isinstance(task, dict) else None
    return Problem(
        problem.path,
        problem.message,
        problem.line,
        match.group(2) or "",
        index,
        task_id if isinstance(task_id, str) and task_id else None,
    )


def _kind(value: Any) -> str:
    names = {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), f"a {type(value).__name__}")


__all__ = [
    "SUITE_VERSION",
    "build_suite",
    "check_suite_data",
    "relocate",
    "suite_error",
    "suite_schema",
]
