"""Judges checked before they judge: every deterministic judge of a suite runs on its task's
reference, which it must pass, and on an empty output, which it must fail. `validate` and
`run` (before any model call) make these checks.

    checks = check_judges(suite, "suites/x/task_suite.yaml")
    checks.errors    # a judge that fails its reference or cannot run: Problems at file:line
    checks.warnings  # a judge that passes (or cannot judge) an empty output

A judge is deterministic when its spec says so (`JudgeSpec.deterministic`): contains, regex,
pytest, python, the file and tool judges, and combinations of them. Model-graded judges, and
combinations holding one, are checked on request only (`validate --judges`, judge_trial.py):
that costs calls. Trigger tasks are left out: their judge is implied, and a task that should
not trigger passes on nothing by design.

pytest and python judges run their real code, in the jail (a suite can name any code: see
judges/python_jail.py): pytest on a temporary workspace (inputs/reference.py); a python
judge's module is loaded first (in one jailed process for the suite), and a module that does
not load is an error here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import JudgeResult, Suite, Task
from ..core.safeyaml import YamlError, load_yaml_file
from ..errors import Problem
from ..jail import JailKind
from ..judges.base import JudgeContext, build_judge, is_deterministic, run_judge
from .reference import Sample, sample_work
from .source_checks import judge_types

CHECK_WORKERS = 4  # pytest and python judgements run as jailed processes: a few at once
CODE_JUDGES = frozenset({"pytest", "python"})  # judge types that run the suite's code
MESSAGE_CHARS = 240


@dataclass(frozen=True)
class TaskCheck:
    """What one task's judge said of its reference (None: the task has none) and of the empty
    output; `skipped` says why it was not checked, `load` why its judge cannot run."""

    task: Task
    reference: JudgeResult | None = None
    empty: JudgeResult | None = None
    skipped: str | None = None
    load: tuple[tuple[str, str], ...] = ()


@dataclass
class JudgeChecks:
    """Every check of a suite: `errors` refuse it, `warnings` are errors under --strict."""

    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    tasks: list[TaskCheck] = field(default_factory=list)


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A judge's details on one line: lines joined with ' / ', cut at `limit` characters."""
    joined = " / ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def checked_tasks(suite: Suite) -> list[Task]:
    """The tasks whose judges these checks run: deterministic, not trigger tasks."""
    return [t for t in suite.tasks if not t.is_trigger_task and is_deterministic(t.judge)]


def _environment_problem(task: Task, jail: JailKind) -> str | None:
    """Why this machine cannot run the task's judge: "" for a pytest judge without pytest
    (`validate` and `run` report that themselves), the jail's problem without the jail (for
    pytest and python judges, whose code runs jailed); checked without importing the pytest
    judge for suites that have none."""
    types = set(judge_types(task.judge))
    if not types & CODE_JUDGES:
        return None
    from ..jail import JailUnavailable
    from ..jail.providers import require

    if "pytest" in types:
        from ..judges.pytest_judge import pytest_problem

        if pytest_problem() is not None:
            return ""
    try:
        require(jail)
    except JailUnavailable as exc:  # what is missing: `validate` has no --no-jail to offer
        return exc.why
    return None


def judge_samples(
    task: Task, ctx: JudgeContext, samples: Sequence[Sample]
) -> dict[Sample, JudgeResult]:
    """The task's judge on each of `samples` (its reference, the empty output), each in its
    own temporary workspace for an agent task."""
    judge = build_judge(task.judge)
    results: dict[Sample, JudgeResult] = {}
    for sample in samples:
        with sample_work(task, ctx.suite_dir, sample) as work:
            results[sample] = run_judge(judge, task, work, ctx)
    return results


def check_task(
    task: Task,
    suite_dir: Path,
    jail: JailKind = "auto",
    loaded: dict[str, list[tuple[str, str]]] | None = None,
) -> TaskCheck:
    """Run one task's deterministic judge on its reference and on the empty output; `loaded`
    is what `python_loads` found for the suite (computed for this task alone without it)."""
    why = _environment_problem(task, jail)
    if why is not None:
        return TaskCheck(task, skipped=why or None)  # "": reported elsewhere
    if "python" in set(judge_types(task.judge)):
        problems = (loaded if loaded is not None else python_loads([task], jail)).get(task.id)
        if problems:
            return TaskCheck(task, load=tuple(problems))
    samples: list[Sample] = ["empty", "reference"] if task.reference is not None else ["empty"]
    results = judge_samples(task, JudgeContext(suite_dir=suite_dir, jail=jail), samples)
    return TaskCheck(task, reference=results.get("reference"), empty=results["empty"])


def python_loads(tasks: Sequence[Task], jail: JailKind) -> dict[str, list[tuple[str, str]]]:
    """Every `python` judge's callable of `tasks` loaded in one jailed process: task id ->
    its problems (none where the jail cannot run: each task's check says so)."""
    with_python = [t for t in tasks if "python" in set(judge_types(t.judge))]
    if not with_python:
        return {}
    from ..jail import JailUnavailable
    from ..judges.python_judge import load_problems_of

    try:
        return load_problems_of(with_python, jail)
    except JailUnavailable:
        return {}


def _run_all(tasks: list[Task], check: Callable[[Task], TaskCheck]) -> list[TaskCheck]:
    """Each task's check; concurrently when some judges start processes (pytest, python)."""
    if sum(bool(set(judge_types(t.judge)) & CODE_JUDGES) for t in tasks) < 2:
        return [check(t) for t in tasks]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=CHECK_WORKERS) as pool:
        return list(pool.map(check, tasks))


def check_judges(suite: Suite, shown: str, *, jail: JailKind = "auto") -> JudgeChecks:
    """Check every deterministic judge of `suite` (shown as `shown` in problems)."""
    tasks = checked_tasks(suite)
    loaded = python_loads(tasks, jail)
    checks = JudgeChecks(
        tasks=_run_all(tasks, lambda t: check_task(t, suite.directory, jail, loaded))
    )
    findings: list[tuple[str, TaskCheck, str, str]] = []  # (severity, check, field, message)
    for check in checks.tasks:
        findings += _findings(check)
    located = locate(suite.path, shown, [(c.task, where, m) for _, c, where, m in findings])
    for (severity, *_), problem in zip(findings, located, strict=True):
        (checks.errors if severity == "error" else checks.warnings).append(problem)
    return checks


def locate(path: Path, shown: str, found: Sequence[tuple[Task, str, str]]) -> list[Problem]:
    """(task, field, message) as Problems at the field's line: the suite is read again for
    its lines only when there is something to locate."""
    lines = _lines(path, shown) if found else {}
    problems = []
    for task, where, message in found:
        top = where.split(".")[0]  # judge, or reference
        line = lines.get(("tasks", task.index, top)) or lines.get(("tasks", task.index))
        problems.append(Problem(shown, message, line, where, task.index, task.id))
    return problems


def _findings(check: TaskCheck) -> list[tuple[str, TaskCheck, str, str]]:
    if check.skipped is not None:
        message = f"not checked on its reference and an empty output: {check.skipped}"
        return [("warning", check, "judge", message)]
    found = [("error", check, where, message) for where, message in check.load]
    ref, empty = check.reference, check.empty
    if ref is not None and ref.error is not None:
        found.append(("error", check, "judge", f"cannot judge the task's reference: {ref.error}"))
    elif ref is not None and not ref.passed:
        found.append(
            ("error", check, "judge", f"fails the task's reference: {one_line(ref.details)}")
        )
    if empty is not None and empty.error is not None:
        found.append(
            (
                "warning",
                check,
                "judge",
                f"cannot judge an empty output ({one_line(empty.error)}): an empty answer "
                "would be an error, left out of the pass rates, instead of a failure",
            )
        )
    elif empty is not None and empty.passed:
        nothing = (
            "no text, no file written, no tool call" if check.task.is_agent_task else "no text"
        )
        found.append(
            (
                "warning",
                check,
                "judge",
                f"passes on an empty output ({nothing}): {one_line(empty.details)}; it "
                "cannot tell an answer from none",
            )
        )
    return found


def _lines(path: Path, shown: str) -> dict[tuple[str | int, ...], int]:
    """The suite's value paths -> lines, read again only when there is something to locate."""
    try:
        return dict(load_yaml_file(path, shown)[2])
    except (OSError, YamlError):
        return {}


__all__ = [
    "CODE_JUDGES",
    "JudgeChecks",
    "TaskCheck",
    "check_judges",
    "check_task",
    "checked_tasks",
    "judge_samples",
    "locate",
    "one_line",
    "python_loads",
]
