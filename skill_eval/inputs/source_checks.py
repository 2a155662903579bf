"""Checks that read what a suite points at, for `skill-eval validate`: every Python file under
the suite's fixtures/ and the module of each `python` judge must compile, and a mock outputs
file must name only the suite's tasks. Compiling runs none of the code."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from ..core.model import Suite
from ..errors import Problem

FIXTURES_DIR = "fixtures"


def compile_problem(path: Path, shown: str) -> Problem | None:
    """A located SyntaxError (or unreadable file) of one Python file; None when it compiles."""
    try:
        source = path.read_bytes()
        compile(source, shown, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Problem(shown, f"SyntaxError: {exc.msg}", line=exc.lineno)
    except (OSError, ValueError) as exc:
        return Problem(shown, f"cannot compile: {exc}")
    return None


def module_file(module: str) -> Path | None:
    """The source file of `package.module` found on sys.path without importing anything."""
    search: list[str] | None = None
    spec = None
    for part in module.split("."):
        spec = PathFinder.find_spec(part, search)
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


def judge_types(judge: Any) -> Iterator[str]:
    """Every judge type in a judge config, nested ones (all/any/weighted/composite) too."""
    if isinstance(judge, Mapping):
        if isinstance(judge.get("type"), str):
            yield judge["type"]
        for value in judge.values():
            yield from judge_types(value)
    elif isinstance(judge, list):
        for item in judge:
            yield from judge_types(item)


def _judge_modules(judge: object) -> Iterable[str]:
    """Modules named by `python` judges, including ones nested in all/any/composite."""
    if isinstance(judge, dict):
        if judge.get("type") == "python" and isinstance(judge.get("callable"), str):
            yield judge["callable"].partition(":")[0]
        for value in judge.values():
            yield from _judge_modules(value)
    elif isinstance(judge, list):
        for item in judge:
            yield from _judge_modules(item)


def python_problems(suite: Suite, shown_suite: str) -> list[Problem]:
    """Syntax errors in the suite's fixtures/ (shown relative to the suite path as given) and
    in the files of its python judges."""
    problems: list[Problem] = []
    shown_dir = os.path.dirname(shown_suite)
    fixtures = suite.directory / FIXTURES_DIR
    if fixtures.is_dir():
        for path in sorted(fixtures.rglob("*.py")):
            shown = os.path.join(shown_dir, path.relative_to(suite.directory).as_posix())
            if (problem := compile_problem(path, shown)) is not None:
                problems.append(problem)
    modules = {m for task in suite.tasks for m in _judge_modules(dict(task.judge))}
    for module in sorted(modules):
        source = module_file(module)
        if source is not None and (problem := compile_problem(source, str(source))) is not None:
            problems.append(problem)
    return problems


def mock_output_problems(outputs_path: str, suite: Suite) -> list[Problem]:
    """The mock outputs file read as a run would read it, against this suite's task ids."""
    # the mock executor pulls in skill installation; `validate` without --mock-outputs skips it
    from ..executors.mock_outputs import MockOutputsError, check_mock_tasks, load_mock_outputs

    try:
        outputs = load_mock_outputs(Path(outputs_path))
        check_mock_tasks(Path(outputs_path), outputs, {task.id for task in suite.tasks})
    except MockOutputsError as exc:
        return [Problem(outputs_path, f"{exc.detail} (suite {suite.path})", line=exc.line)]
    return []
