"""The judge seam: a one-method protocol, a registry keyed by the suite's `judge.type`,
and config validation that each judge owns through its JSON Schema.

A judge never raises into the runner: `run_judge` turns any exception into a result with
`error` set, which makes the attempt an `error` (reported apart), never `failed`. Only errors
the judge marks transient (`JudgeResult.failure(..., transient=True)`) are retried.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core import validation
from ..core.model import JudgeResult, ModelCall, Task, Usage
from ..core.registry import Registry
from ..core.validation import join_field
from ..core.work import Work
from ..errors import JudgeError
from ..executors.base import OFFLINE_EXECUTOR
from ..executors.grader import Grader, GradeRequest, Reply
from ..jail import JailKind
from .builtin import BUILTIN_JUDGES

if TYPE_CHECKING:  # the cache module (sqlite3) loads only when a run opens one
    from .judge_cache import JudgeCache, MemoryJudgeCache
    from .roles import JudgeRole

# A load-time semantic check: (config, suite directory) -> [(field, message)].
ConfigCheck = Callable[[Mapping[str, Any], Path], list[tuple[str, str]]]


@dataclass(frozen=True)
class PreflightSettings:
    """What a judge's preflight may need of the run: where evaluator skills are found, and
    whether code judges run on outputs is jailed (False only with --no-jail)."""

    evaluators_dirs: tuple[str, ...] = ()
    project_dir: Path = Path(".")
    jailed: bool = True
    jail: str = "auto"  # the run's jail provider (jail/providers.py)


# A run-start check of a judge type over the suite's tasks (each preflight finds its own
# configs in them, nested ones too): one message per problem, or an exception of the error
# tree for what stops the run outright (no jail to run its code in).
Preflight = Callable[[Sequence[Task], PreflightSettings], list[str]]


class _DefaultGrader:
    """The grader of a context built without one: the mock's (a fixed, well-formed answer),
    built on its first call, so a context for deterministic judges alone (`validate`'s
    checks) imports no executor."""

    name = OFFLINE_EXECUTOR

    def __init__(self) -> None:
        self._grader: Grader | None = None

    def _real(self) -> Grader:
        if self._grader is None:
            from ..executors.base import create_grader

            self._grader = create_grader(OFFLINE_EXECUTOR)
        return self._grader

    def complete(self, request: GradeRequest) -> Reply:
        return self._real().complete(request)

    def __getattr__(self, name: str) -> Any:  # the mock grader's record (`requests`), ...
        return getattr(self._real(), name)


def _mock_grader() -> Grader:
    return _DefaultGrader()


@dataclass(frozen=True)
class JudgeContext:
    """Run-level facilities a judge may use, fixed for the run: whoever builds it (the
    conductor, `evaluate`, rejudge, a worker rebuilding it from `engine.jobs.JudgeSettings`)
    builds its grader too. A batch of judgements is a new context (`dataclasses.replace`)."""

    suite_dir: Path
    # The model service model-graded judges ask (the grader of --judge-executor, by default
    # the executor's own or the mock's); its `name` is the executor registry name it is of.
    grader: Grader = field(default_factory=_mock_grader)
    judge_model: str | None = None
    # Run-time settings judges read (`evaluators_dirs`, `project_dir`: rubric judges) and the
    # grader's executor settings (`claude_bin`, `base_url`, ...), kept to rebuild it elsewhere.
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    cache: JudgeCache | MemoryJudgeCache | None = None  # None: judge caching is off
    env: Mapping[str, str] | None = None  # environment for the harness side (API keys)
    # Where code a judge runs on an output is confined ("none" only with --no-jail).
    jail: JailKind = "auto"
    # The model of a judge that names none (the plan's Judging.default_model; None:
    # judges/llm.py default_judge_model()).
    default_model: str | None = None


class Judge(Protocol):
    """Judges what one attempt produced. Text judges read `work.text`; agent judges may read
    `work.transcript` and `work.files` too."""

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult: ...


@dataclass(frozen=True)
class JudgeSpec:
    """A judge type: its YAML `type`, the JSON Schema of its config, and how to build it."""

    type: str
    schema: Mapping[str, Any]
    build: Callable[[Mapping[str, Any]], Judge]
    check: ConfigCheck | None = None
    summary: str = ""
    # Whether the judge gives one answer per output at no cost (no model call): `validate`
    # and `run` then check it on the task's reference and on an empty output. A judge made
    # of judges decides per config. Left False (a plugin that does not say) the judge counts
    # as model-graded: checked only on request, by `validate --judges`.
    deterministic: bool | Callable[[Mapping[str, Any]], bool] = False
    # Checked once before any attempt of a run that uses the type (see Preflight).
    preflight: Preflight | None = None
    # What the type adds to a run besides its judgements (judges/roles.py).
    role: JudgeRole | None = None
    # Whether its model calls may go out as one Message Batch with --batch: one call per
    # judgement, built before it is answered (judges/batch_judging.py).
    batchable: bool = False


def _coerce(value: Any) -> JudgeSpec:
    """What a `skill_eval.judges` entry point may load: a JudgeSpec, or a zero-argument
    callable returning one."""
    if callable(value) and not isinstance(value, JudgeSpec):
        value = value()
    if not isinstance(value, JudgeSpec):
        raise TypeError(f"expected a JudgeSpec, got {type(value).__name__}")
    return value


REGISTRY: Registry[JudgeSpec] = Registry(
    kind="judge type",
    valid="valid types",
    group="skill_eval.judges",
    package=__package__ or "skill_eval.judges",
    builtins=BUILTIN_JUDGES,
    coerce=_coerce,
    name_of=lambda spec: spec.type,
)


def register_judge(spec: JudgeSpec) -> JudgeSpec:
    return REGISTRY.register(spec)


def judge_types() -> list[str]:
    return REGISTRY.names()


def get_judge_spec(judge_type: str) -> JudgeSpec:
    spec = REGISTRY.get(judge_type)
    if spec is None:
        raise JudgeError(REGISTRY.unknown(judge_type))
    return spec


def schema_problems(
    instance: Any, schema: Mapping[str, Any], prefix: str = ""
) -> list[tuple[str, str]]:
    """Validate `instance` against `schema`; one (field, message) per problem, the shape a
    ConfigCheck returns. The wording is validation.schema_problems's, shared by every schema."""
    return [
        (p.field, p.message) for p in validation.schema_problems(instance, schema, prefix=prefix)
    ]


def validate_judge_config(
    config: Any, suite_dir: Path, prefix: str = "judge"
) -> list[tuple[str, str]]:
    """Every problem with one judge config: its type, its schema, its semantic checks.
    Nested judges (all/any/weighted) call back into this with a longer prefix."""
    if not isinstance(config, Mapping):
        return [(prefix, "must be a mapping with a 'type'")]
    judge_type = config.get("type")
    if not isinstance(judge_type, str) or not judge_type:
        return [(join_field(prefix, "type"), "is required (a judge type such as 'contains')")]
    try:
        spec = get_judge_spec(judge_type)
    except JudgeError as exc:
        return [(join_field(prefix, "type"), str(exc))]
    problems = schema_problems(config, spec.schema, prefix)
    if not problems and spec.check is not None:
        problems += [(join_field(prefix, f), m) for f, m in spec.check(config, suite_dir)]
    return problems


def is_deterministic(config: Mapping[str, Any]) -> bool:
    """Whether the judge of `config` (a valid config) is deterministic, as its spec declares;
    JudgeError for an unknown type."""
    declared = get_judge_spec(str(config.get("type"))).deterministic
    return bool(declared(config) if callable(declared) else declared)


def judge_types_used(configs: Sequence[Any]) -> list[str]:
    """The registered judge types named in `configs`, nested judges included (a combinator's
    or composite's parts), in order of first appearance."""
    known = set(judge_types())
    seen: dict[str, None] = {}

    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, Mapping):
            kind = value.get("type")
            if isinstance(kind, str) and kind in known:
                yield kind
            for inner in value.values():
                yield from walk(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from walk(inner)

    for config in configs:
        seen.update(dict.fromkeys(walk(config)))
    return list(seen)


def preflight_judges(tasks: Sequence[Task], settings: PreflightSettings) -> list[str]:
    """Every problem the preflights of the judge types `tasks` use find, before a run."""
    checks = [get_judge_spec(kind).preflight for kind in judge_types_used([t.judge for t in tasks])]
    problems: dict[str, None] = {}  # a preflight two types share reports once
    for check in dict.fromkeys(c for c in checks if c is not None):
        problems.update(dict.fromkeys(check(tasks, settings)))
    return list(problems)


def build_judge(config: Mapping[str, Any]) -> Judge:
    return get_judge_spec(str(config["type"])).build(config)


def traceback_tail(exc: BaseException, lines: int = 12) -> str:
    """The last lines of `exc`'s traceback: where it was raised, for the attempt's details."""
    text = "".join(traceback.format_exception(exc)).rstrip().splitlines()
    return "\n".join(text[-lines:])


class _Counted:
    """The context's grader as one judgement sees it: each reply that used tokens is kept as
    a ModelCall (its model and usage), the judgement's `calls`, whatever the judge records of
    it in its data. A judge asking through `ctx.grader` cannot leave a call out."""

    def __init__(self, inner: Grader) -> None:
        self.inner, self.name = inner, inner.name
        self.calls: list[ModelCall] = []
        self._lock = threading.Lock()

    def complete(self, request: GradeRequest) -> Reply:
        reply = self.inner.complete(request)
        if reply.usage != Usage():  # a reply that billed nothing (the mock's, a refusal)
            with self._lock:
                self.calls.append(ModelCall(reply.model or request.model, reply.usage, reply.batch))
        return reply

    def __getattr__(self, name: str) -> Any:  # the mock grader's record (`requests`), ...
        return getattr(self.inner, name)


def run_judge(judge: Judge, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
    """Judge one attempt's work; a judge that raises yields a permanent error result instead
    (the same work raises again), with the traceback's tail in its details. The result's
    `calls` are the model calls the judgement made through the context's grader (a judge
    made of judges: every part's)."""
    counted = _Counted(ctx.grader)
    result = _judged(judge, task, work, replace(ctx, grader=counted))
    return replace(result, calls=tuple(counted.calls))


def _judged(judge: Judge, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
    try:
        result = judge.judge(task, work, ctx)
    except KeyboardInterrupt:  # Ctrl-C stops the run (cleanly, by the runner), not a judgement
        raise
    except BaseException as exc:  # SystemExit too: a judge never ends the run, even with 0
        error = f"judge crashed: {type(exc).__name__}: {exc}"
        return JudgeResult.failure(error, details=f"{error}\n{traceback_tail(exc)}")
    if not isinstance(result, JudgeResult):
        return JudgeResult.failure(f"judge returned {type(result).__name__}, not JudgeResult")
    if not isinstance(result.passed, bool):  # "false" is truthy: never let it pass
        return JudgeResult.failure(
            f"judge returned passed={result.passed!r}; 'passed' must be true or false"
        )
    return result


def clamp_score(score: float) -> float:
    return min(1.0, max(0.0, float(score)))
