"""Load and validate task suites, whatever their shape: a task_suite.yaml (safe YAML -> JSON
Schema -> semantic rules, inputs/suite_data.py), an eval set or trigger set in JSON, or a skill
folder's `evals/` (read in memory by inputs/evalsets/). Every problem is reported at once,
each with file, line, task and field:

    suites/x.yaml:12: tasks[2] (id "t-3").judge.expected: must be a non-empty string or a
    non-empty list of strings
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import Suite
from ..core.safeyaml import MAX_BYTES, MAX_NODES, YamlError, load_yaml_file
from ..errors import Problem, SuiteError
from .evalsets.shapes import is_eval_set, is_skill_folder
from .suite_data import (
    SUITE_VERSION,
    build_suite,
    check_suite_data,
    relocate,
    suite_error,
    suite_schema,
)

SUITE_FILE_NAME = "task_suite.yaml"


def load_suite(
    path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES, max_nodes: int = MAX_NODES
) -> Suite:
    """Load and validate a task suite: a suite file (or a directory holding
    `task_suite.yaml`), an eval set or trigger set (`*.json`, any shape inputs/evalsets/
    reads), or a skill folder (its `evals/`). Nothing is written.

    Returns a Suite with an absolute `path` and the sha256 of the bytes read. Raises
    SuiteError: `Task suite not found: <path>` when there is no such file; otherwise its
    `problems` list every problem found, each located by line (or eval), task and field.
    """
    shown = os.fspath(path)
    file = Path(path)
    if is_skill_folder(file) or is_eval_set(file):
        # the eval-set reader (and the judges it maps checks to) loads only for these
        from .evalsets.load import load_eval_sets, skill_evals

        found = skill_evals(file) if is_skill_folder(file) else None
        if found is not None and found.suite is not None:  # a suite of our own in evals/
            return load_suite(found.suite, max_bytes=max_bytes, max_nodes=max_nodes)
        return load_eval_sets(file)
    if file.is_dir():
        file = file / SUITE_FILE_NAME
        shown = os.path.join(shown, SUITE_FILE_NAME)
    if not file.is_file():
        raise SuiteError(f"Task suite not found: {shown}", path=shown)
    try:
        raw, data, lines = load_yaml_file(file, shown, max_bytes=max_bytes, max_nodes=max_nodes)
    except YamlError as exc:
        raise suite_error(shown, [relocate(p, None) for p in exc.problems]) from None
    except OSError as exc:
        problem = Problem(shown, f"cannot read the file: {exc.strerror or exc}")
        raise suite_error(shown, [problem]) from None
    problems = check_suite_data(data, lines, shown, file.resolve().parent)
    if problems:
        raise suite_error(shown, problems)
    return build_suite(data, file.resolve(), hashlib.sha256(raw).hexdigest())


@dataclass
class ValidationReport:
    """What `validate_paths` found: the suites that are valid, and every problem elsewhere."""

    valid: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def find_suites(directory: str) -> list[str]:
    """Every `task_suite.yaml` below `directory`, sorted; symlinked directories not followed."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        if SUITE_FILE_NAME in files:
            found.append(os.path.join(root, SUITE_FILE_NAME))
    return found


def validate_paths(paths: Iterable[str]) -> ValidationReport:
    """Validate suite files; a directory means every `task_suite.yaml` below it (a directory
    holding none is a problem). Never raises for bad input: everything lands in the report."""
    report = ValidationReport()
    for given in paths:
        given = os.fspath(given)
        if os.path.isdir(given) and not is_skill_folder(Path(given)):
            files = find_suites(given)
            if not files:
                from .evalsets.load import evals_without_skill  # an error's words

                why = evals_without_skill(Path(given))  # as `run` says it
                why = why or f"no {SUITE_FILE_NAME} found below this directory"
                report.problems.append(Problem(given, why))
        else:
            files = [given]
        for file in files:
            try:
                load_suite(file)
            except SuiteError as exc:
                report.problems += exc.problems or [Problem(file, "task suite not found")]
            else:
                report.valid.append(file)
    return report


__all__ = [
    "SUITE_FILE_NAME",
    "SUITE_VERSION",
    "ValidationReport",
    "check_suite_data",
    "find_suites",
    "load_suite",
    "suite_schema",
    "validate_paths",
]
