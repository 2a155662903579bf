"""`pytest`: the suite's test file, run against the model output in a fresh, jailed
process (judges/pytest_run.py), decides the judgement (judges/pytest_verdict.py). This
module is the judge type: its config, its schema, and the check that pytest can run here.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.work import Work
from ..jail import Limits
from ..jail.providers import require
from .base import JudgeContext, JudgeSpec, PreflightSettings
from .fixtures import FIXTURES_DIR, fixture_problem, resolve_fixture
from .pytest_run import DEFAULT_LIMITS, run_pytest


@functools.cache
def pytest_problem() -> str | None:
    """Why this interpreter cannot run the judge's `python -m pytest`, or None. Found with
    `find_spec`, not an import: validating a suite stays fast. Checked once per process."""
    if importlib.util.find_spec("pytest") is not None:
        return None
    return (
        f"pytest judges need pytest, which {sys.executable} cannot import "
        f"(skill-eval runs it with its own interpreter): "
        f"{sys.executable} -m pip install pytest"
    )


def has_pytest_judge(config: Any) -> bool:
    """True when a judge config, through any nesting (all, any, weighted, composite), holds a
    `pytest` judge."""
    if isinstance(config, Mapping):
        return config.get("type") == "pytest" or any(map(has_pytest_judge, config.values()))
    if isinstance(config, list):
        return any(map(has_pytest_judge, config))
    return False


def preflight_pytest(tasks: Sequence[Task]) -> list[str]:
    """Before a run: one message when a task has a pytest judge and pytest cannot run here."""
    problem = pytest_problem()
    if problem is None or not any(has_pytest_judge(t.judge) for t in tasks):
        return []
    return [problem]


def preflight(tasks: Sequence[Task], settings: PreflightSettings) -> list[str]:
    """The run's preflight of pytest judges: their jail can start here (JailUnavailable naming
    what to install, unless --no-jail), and pytest can run."""
    if settings.jailed and any(has_pytest_judge(t.judge) for t in tasks):
        require(settings.jail)
    return preflight_pytest(tasks)


class PytestJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.test_file = str(config["test_file"])
        self.timeout = config.get("timeout")
        defaults = DEFAULT_LIMITS
        self.limits = Limits(
            memory_mb=int(config.get("memory_mb", defaults.memory_mb)),
            file_size_mb=int(config.get("file_size_mb", defaults.file_size_mb)),
            processes=int(config.get("processes", defaults.processes)),
            disk_mb=int(config.get("disk_mb", defaults.disk_mb)),
        )

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        missing = pytest_problem()
        if missing is not None:  # permanent: every judgement of the run would hit it
            return JudgeResult.failure(missing)
        try:  # again at judge time: a symlink swapped after loading is still caught
            path = resolve_fixture(self.test_file, ctx.suite_dir)
        except ValueError as exc:  # permanent: the file will not come back on a retry
            return JudgeResult.failure(f"test_file {exc}")
        timeout = float(self.timeout if self.timeout is not None else task.timeout_seconds)
        fixtures = (ctx.suite_dir / FIXTURES_DIR).resolve()
        return run_pytest(path, work, timeout, fixtures, jail=ctx.jail, limits=self.limits)


def _check(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    problem = fixture_problem(config["test_file"], suite_dir)
    return [("test_file", problem)] if problem else []


PYTEST_SPEC = JudgeSpec(
    type="pytest",
    summary="a pytest file under fixtures/ passes against the output (AI_OUTPUT_FILE)",
    schema={
        "type": "object",
        "required": ["type", "test_file"],
        "properties": {
            "type": {"const": "pytest"},
            "test_file": {
                "type": "string",
                "minLength": 1,
                "errorMessage": "must be a path starting with fixtures/",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "errorMessage": "must be a number of seconds > 0",
            },
            "memory_mb": {
                "type": "integer",
                "minimum": 64,
                "errorMessage": "must be a whole number of MiB >= 64",
            },
            "file_size_mb": {
                "type": "integer",
                "minimum": 1,
                "errorMessage": "must be a whole number of MiB >= 1",
            },
            "processes": {
                "type": "integer",
                "minimum": 1,
                "errorMessage": "must be a whole number >= 1",
            },
            "disk_mb": {
                "type": "integer",
                "minimum": 1,
                "errorMessage": "must be a whole number of MiB >= 1",
            },
        },
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    },
    build=PytestJudge,
    deterministic=True,
    check=_check,
    preflight=preflight,
)
