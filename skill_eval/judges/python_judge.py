"""`python`: a judge written as a plain function, named in the suite as
`callable: "package.module:function"` and called as `function(output, task)`, or as
`function(output, task, work=work)` when the function has a parameter named `work` (the
attempt's `skill_eval.Work`: transcript and changed files as well as the text).

The function returns a float score (passes when ≥ `pass_threshold`, default 1.0), a bool, a
JudgeResult, or a dict with `passed` and/or `score` (and optional `details`). A score outside
[0, 1] is clamped and noted; NaN or Infinity is a judge error. The module comes from the
harness's sys.path (install it, or set PYTHONPATH).

When the module is imported: never by `load_suite` (it checks the shape of `callable` only);
by the judge checks of `validate` and `run` (inputs/judge_checks.py), which call the function
on the task's reference and on an empty output before any model call, and by
`preflight_python_judges` at run start, so a typo fails the run at once instead of erroring
every attempt. Importing runs the module's top-level code: that code is the suite author's,
not model output.
An import error or an exception in the function during a run is a judge error, never a skill
failure, and a permanent one (recorded at once with the traceback's tail, not retried).
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.work import Work
from .base import JudgeContext, JudgeSpec, PreflightSettings, clamp_score, traceback_tail

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CALLABLE_RE = re.compile(rf"^{_IDENT}(\.{_IDENT})*:{_IDENT}(\.{_IDENT})*$")


def load_callable(spec: str) -> Callable[..., Any]:
    """Import `package.module:attr.path` and return the object; raises on any problem."""
    module_name, _, attr_path = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for attr in attr_path.split("."):
        obj = getattr(obj, attr)
    if not callable(obj):
        raise TypeError(f"{spec} is a {type(obj).__name__}, not a callable")
    function: Callable[..., Any] = obj
    return function


def _problem(spec: str) -> str | None:
    """Why `spec` cannot be loaded, in one line; None when it loads and is callable."""
    module_name, _, attr_path = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if (
            exc.name is not None
            and module_name.startswith(exc.name)
            and module_name[len(exc.name) :][:1] in ("", ".")
        ):
            return f"module {module_name!r} not found (install it, or put its folder on PYTHONPATH)"
        return f"importing module {module_name!r} failed: ModuleNotFoundError: {exc}"
    except (Exception, SystemExit) as exc:  # its top-level code may raise anything
        return f"importing module {module_name!r} failed: {type(exc).__name__}: {exc}"
    walked = module_name
    for attr in attr_path.split("."):
        if not hasattr(obj, attr):
            return f"{walked!r} has no attribute {attr!r}"
        obj = getattr(obj, attr)
        walked += (":" if walked == module_name else ".") + attr
    if not callable(obj):
        return f"{spec!r} is a {type(obj).__name__}, not a callable"
    return None


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


def load_problems(judge: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Import every `python` judge's callable in one judge config: a (field, message) pair
    per problem (module not found, import failed, attribute missing, not callable). Runs the
    modules' top-level code (the suite author's, see the module docstring)."""
    found: list[tuple[str, str]] = []
    for where, config in _python_configs(judge, "judge"):
        problem = _problem(str(config.get("callable", "")))
        if problem is not None:
            found.append((f"{where}.callable", problem))
    return found


def preflight_python_judges(tasks: Sequence[Task]) -> list[str]:
    """Import every `python` judge's callable before a run: one message per problem (module
    not found, import failed, attribute missing, not callable); empty when all load.

    Imports run the modules' top-level code (the suite author's, see the module docstring)."""
    return [
        f"task {task.id!r}: {where}: {problem}"
        for task in tasks
        for where, problem in load_problems(task.judge)
    ]


def preflight(tasks: Sequence[Task], settings: PreflightSettings) -> list[str]:
    return preflight_python_judges(tasks)


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


def _wants_work(fn: Callable[..., Any]) -> bool:
    """Whether `fn` takes a `work` argument: functions written for `(output, task)` keep
    being called that way."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # some builtins have no signature
        return False
    param = params.get("work")
    return param is not None and param.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


class PythonJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.spec = str(config["callable"])
        self.threshold = float(config.get("pass_threshold", 1.0))
        self._fn: Callable[..., Any] | None = None
        self._wants_work = False

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        if self._fn is None:
            try:
                self._fn = load_callable(self.spec)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # its top-level code may sys.exit()
                return JudgeResult.failure(
                    f"cannot load python judge {self.spec!r}: {type(exc).__name__}: {exc}"
                )
            self._wants_work = _wants_work(self._fn)
        try:
            value = (
                self._fn(work.text, task, work=work)
                if self._wants_work
                else self._fn(work.text, task)
            )
        except KeyboardInterrupt:  # Ctrl-C stops the run; everything else is this judgement's
            raise
        except BaseException as exc:  # permanent: the same output raises the same way again
            error = f"python judge {self.spec!r} raised {type(exc).__name__}: {exc}"
            return JudgeResult.failure(error, details=f"{error}\n{traceback_tail(exc)}")
        return to_result(value, self.threshold)


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
    build=PythonJudge,  # the schema checks the shape; importing waits until it judges
    deterministic=True,
    preflight=preflight,
)
