"""`python`: a judge written as a plain function, named in the suite as
`callable: "package.module:function"` and called as `function(output, task)`, or as
`function(output, task, work=work)` when the function has a parameter named `work` (the
attempt's `skill_eval.Work`: transcript and changed files as well as the text).

The function returns a float score (passes when ≥ `pass_threshold`, default 1.0), a bool, a
JudgeResult, or a dict with `passed` and/or `score` (and optional `details`). A score outside
[0, 1] is clamped and noted; NaN or Infinity is a judge error. The module comes from the
harness's sys.path (install it, or set PYTHONPATH).

The harness never imports the module nor calls the function itself: a suite (in a pull
request, say) can name any importable callable, `pty:spawn` or `os:system` with the task's
reference as its argument. Both happen in a jailed process (judges/python_jail.py): no
secret in its environment, no network, the jail's limits. `load_suite` checks the shape of
`callable` only; the judge checks of `validate` and `run` (inputs/judge_checks.py) and the
run's preflight load it in the jail before any model call, so a typo fails the run at once.
An import error or an exception in the function during a run is a judge error, never a skill
failure, and a permanent one (recorded at once with the traceback's tail, not retried).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.work import Work
from .base import JudgeContext, JudgeSpec, PreflightSettings, clamp_score

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CALLABLE_RE = re.compile(rf"^{_IDENT}(\.{_IDENT})*:{_IDENT}(\.{_IDENT})*$")


def _python_configs(judge: Any, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every `python` judge config in a judge config, with its field path, through the nesting
    of all, any and weighted."""
    if not isinstance(judge, Mapping):
        return
    kind = judge.get("type")
    if kind == "python":
        yield where, judge
    elif kind in ("all", "any") and isinstance(judge.get("judges"), list):
        for i, sub in enumerate(judge["judges"]):
            yield from _python_configs(sub, f"{where}.judges[{i}]")
    elif kind == "weighted" and isinstance(judge.get("judges"), list):
        for i, entry in enumerate(judge["judges"]):
            if isinstance(entry, Mapping):
                yield from _python_configs(entry.get("judge"), f"{where}.judges[{i}].judge")


def python_specs(judge: Any) -> list[tuple[str, str]]:
    """(field, callable) of every `python` judge in one judge config."""
    return [
        (f"{where}.callable", str(config.get("callable", "")))
        for where, config in _python_configs(judge, "judge")
    ]


def load_problems_of(tasks: Sequence[Task], jail: str) -> dict[str, list[tuple[str, str]]]:
    """Load every `python` judge's callable of `tasks` in one jailed process (their modules'
    top-level code runs there): task id -> (field, message) per problem (module not found,
    import failed, attribute missing, not callable). JailUnavailable when no jail runs here."""
    from .python_jail import check_callables

    wanted = {task.id: python_specs(task.judge) for task in tasks}
    found = check_callables([spec for specs in wanted.values() for _, spec in specs], jail)
    return {
        task_id: [(where, problem) for where, spec in specs if (problem := found.get(spec))]
        for task_id, specs in wanted.items()
    }


def load_problems(judge: Mapping[str, Any], jail: str = "auto") -> list[tuple[str, str]]:
    """load_problems_of for one judge config."""
    task = Task(id="-", prompt="", judge=judge)
    return load_problems_of([task], jail)["-"]


def preflight_python_judges(tasks: Sequence[Task], jail: str = "auto") -> list[str]:
    """Load every `python` judge's callable before a run, in the jail: one message per
    problem; empty when all load. JailUnavailable when no jail can run here."""
    found = load_problems_of(tasks, jail)
    return [
        f"task {task.id!r}: {where}: {problem}"
        for task in tasks
        for where, problem in found.get(task.id, [])
    ]


def preflight(tasks: Sequence[Task], settings: PreflightSettings) -> list[str]:
    return preflight_python_judges(tasks, settings.jail)


def to_result(value: Any, threshold: float) -> JudgeResult:
    """Turn what a user's function returned into a JudgeResult (error when it makes no sense)."""
    if isinstance(value, JudgeResult):
        if not isinstance(value.passed, bool):
            return _not_bool(value.passed)
        if not value.error and not math.isfinite(value.score):
            return JudgeResult.failure(f"python judge returned a non-finite score: {value.score!r}")
        if value.error or 0.0 <= value.score <= 1.0:
            return value
        clamped = clamp_score(value.score)
        note = f"score {value.score} outside [0, 1], clamped to {clamped}"
        return JudgeResult(
            passed=value.passed,
            score=clamped,
            details=f"{value.details}; {note}" if value.details else note,
            data=value.data,
        )
    if isinstance(value, bool):
        return JudgeResult(
            passed=value, score=1.0 if value else 0.0, details="python judge returned " + str(value)
        )
    if isinstance(value, int | float):
        return _scored(float(value), threshold, "")
    if isinstance(value, Mapping) and ("passed" in value or "score" in value):
        details = str(value.get("details") or "")
        if "passed" in value and not isinstance(value["passed"], bool):
            return _not_bool(value["passed"])
        if "score" not in value:
            passed = bool(value["passed"])
            return JudgeResult(passed=passed, score=1.0 if passed else 0.0, details=details)
        try:
            score = float(value["score"])
        except (TypeError, ValueError):
            return JudgeResult.failure(
                f"python judge returned a non-numeric score: {value['score']!r}"
            )
        result = _scored(score, threshold, details)
        if "passed" in value and not result.error:
            result = JudgeResult(
                passed=bool(value["passed"]), score=result.score, details=result.details
            )
        return result
    return JudgeResult.failure(
        f"python judge returned {type(value).__name__}; expected a float, a bool, "
        "a JudgeResult or a dict with 'passed'/'score'"
    )


def _not_bool(passed: Any) -> JudgeResult:
    # {"passed": "false"} is truthy in Python: a judge error, never a pass.
    return JudgeResult.failure(
        f"python judge returned passed={passed!r}; 'passed' must be true or false"
    )


def _scored(score: float, threshold: float, details: str) -> JudgeResult:
    if not math.isfinite(score):
        return JudgeResult.failure(f"python judge returned a non-finite score: {score!r}")
    clamped = clamp_score(score)
    notes = [details] if details else []
    if clamped != score:
        notes.append(f"score {score} outside [0, 1], clamped to {clamped}")
    passed = clamped >= threshold
    notes.append(f"score {clamped:.3f} {'>=' if passed else '<'} threshold {threshold}")
    return JudgeResult(passed=passed, score=clamped, details="; ".join(notes))


def _answer(found: Mapping[str, Any], spec: str, threshold: float) -> JudgeResult:
    """The jailed runner's answer (python_runner.py) as a JudgeResult: what the function
    returned goes through `to_result`, as if it had been called here."""
    kind = found.get("kind")
    if kind == "load_error":
        return JudgeResult.failure(f"cannot load python judge {spec!r}: {found.get('message')}")
    if kind == "raised":
        error = f"python judge {spec!r} raised {found.get('type')}: {found.get('message')}"
        return JudgeResult.failure(error, details=f"{error}\n{found.get('traceback') or ''}")
    if kind == "judge_result":
        return _judge_result(found, threshold)
    if kind == "value":
        return to_result(found.get("value"), threshold)
    return JudgeResult.failure(
        f"python judge returned {found.get('type')}; expected a float, a bool, "
        "a JudgeResult or a dict with 'passed'/'score'"
    )


def _judge_result(found: Mapping[str, Any], threshold: float) -> JudgeResult:
    try:
        score = float(found.get("score"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return JudgeResult.failure(
            f"python judge returned a non-numeric score: {found.get('score')!r}"
        )
    error = found.get("error")
    data = found.get("data")
    value = JudgeResult(
        passed=found.get("passed"),  # type: ignore[arg-type]  # checked by to_result
        score=score,
        details=str(found.get("details") or ""),
        error=None if error is None else str(error),
        data=data if isinstance(data, dict) else {},
    )
    return to_result(value, threshold)


class PythonJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.spec = str(config["callable"])
        self.threshold = float(config.get("pass_threshold", 1.0))

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        from ..jail import JailUnavailable
        from .python_jail import JailedCallError, call_callable

        try:
            found = call_callable(self.spec, task, work, ctx.jail)
        except JailUnavailable as exc:
            return JudgeResult.failure(f"cannot jail the python judge: {exc}")
        except JailedCallError as exc:
            return JudgeResult.failure(f"python judge {self.spec!r}: {exc}")
        except (OSError, ValueError) as exc:  # the workspace could not be shown to it
            return JudgeResult.failure(f"python judge {self.spec!r}: {exc}")
        return _answer(found, self.spec, self.threshold)


PYTHON_SPEC = JudgeSpec(
    type="python",
    summary="a Python function `package.module:function` called with (output, task)",
    schema={
        "type": "object",
        "required": ["type", "callable"],
        "properties": {
            "type": {"const": "python"},
            "callable": {
                "type": "string",
                "pattern": CALLABLE_RE.pattern,
                "errorMessage": "must look like 'package.module:function'",
            },
            "pass_threshold": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "errorMessage": "must be a number between 0 and 1",
            },
        },
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    },
    build=PythonJudge,  # the schema checks the shape; importing waits until it judges (jailed)
    deterministic=True,
    preflight=preflight,
)
