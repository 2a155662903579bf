"""The judge seam: a one-method protocol, a registry keyed by the suite's `judge.type`,
and config validation that each judge owns through its JSON Schema.

A judge never raises into the runner: `run_judge` turns any exception into a result with
`error` set, which makes the attempt an `error` (retried, reported apart), never `failed`.
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from jsonschema import Draft202012Validator

from ..errors import JudgeError
from ..model import JudgeResult, Task
from ..work import Work

# A load-time semantic check: (config, suite directory) -> [(field, message)].
ConfigCheck = Callable[[Mapping[str, Any], Path], list[tuple[str, str]]]


@dataclass
class JudgeContext:
    """Run-level facilities a judge may use. Built once per run by the runner's caller."""

    suite_dir: Path
    mock: bool = False
    # Backend for model-graded judges ("anthropic", "claude-cli", "mock") and its settings.
    judge_backend: str = "mock"
    judge_model: str | None = None
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    cache: Any = None  # a JudgeCache, or None when judge caching is off
    env: Mapping[str, str] | None = None  # environment for the harness side (API keys)


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


JUDGES: dict[str, JudgeSpec] = {}
_plugins_loaded = False


def register_judge(spec: JudgeSpec) -> JudgeSpec:
    JUDGES[spec.type] = spec
    return spec


def _load_builtin(judge_type: str) -> None:
    from .builtin import BUILTIN_JUDGES

    module = BUILTIN_JUDGES.get(judge_type)
    if module is not None and judge_type not in JUDGES:
        importlib.import_module(f"{__package__}.{module}")


def _load_builtins_and_plugins() -> None:
    """Every built-in judge, then the plugins of the `skill_eval.judges` entry-point group
    (a plugin cannot replace a built-in type)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    from importlib.metadata import entry_points

    from .builtin import BUILTIN_JUDGES

    for judge_type in BUILTIN_JUDGES:
        _load_builtin(judge_type)
    _plugins_loaded = True  # only once the built-ins are all in
    for ep in entry_points(group="skill_eval.judges"):
        try:
            spec = ep.load()
            if callable(spec) and not isinstance(spec, JudgeSpec):
                spec = spec()
            if isinstance(spec, JudgeSpec) and spec.type not in BUILTIN_JUDGES:
                register_judge(spec)
        except Exception:  # a broken plugin must not break the harness
            continue


def judge_types() -> list[str]:
    _load_builtins_and_plugins()
    return sorted(JUDGES)


def get_judge_spec(judge_type: str) -> JudgeSpec:
    _load_builtin(judge_type)
    if judge_type not in JUDGES:
        _load_builtins_and_plugins()
    try:
        return JUDGES[judge_type]
    except KeyError:
        raise JudgeError(
            f"unknown judge type {judge_type!r}; valid types: {', '.join(sorted(JUDGES))}"
        ) from None


def _field_of(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(prefix: str, suffix: str) -> str:
    if not suffix:
        return prefix
    if not prefix:
        return suffix
    return prefix + suffix if suffix.startswith("[") else f"{prefix}.{suffix}"


def schema_problems(instance: Any, schema: Mapping[str, Any], prefix: str = "") \
        -> list[tuple[str, str]]:
    """Validate `instance` against `schema`; one (field, message) per problem, unknown keys
    named with the closest valid key suggested."""
    problems: list[tuple[str, str]] = []
    validator = Draft202012Validator(schema)
    for err in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.path))):
        where = _join(prefix, _field_of(err.absolute_path))
        if err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
            allowed = list((err.schema.get("properties") or {}).keys())
            patterns = list((err.schema.get("patternProperties") or {}).keys())
            for key in err.instance:
                if key in allowed or any(re.search(p, str(key)) for p in patterns):
                    continue
                hint = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
                msg = f"unknown key {key!r}"
                msg += f" (did you mean {hint[0]!r}?)" if hint else ""
                if allowed:
                    msg += f"; allowed: {', '.join(allowed)}"
                problems.append((_join(where, str(key)), msg))
            continue
        problems.append((where, _message(err)))
    return problems


def _message(err: Any) -> str:
    custom = err.schema.get("errorMessage") if isinstance(err.schema, Mapping) else None
    if isinstance(custom, str):
        return custom
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    if err.validator == "type":
        return f"must be of type {err.validator_value}, got {type(err.instance).__name__}"
    if err.validator == "minLength" and err.validator_value == 1:
        return "must be a non-empty string"
    if err.validator == "minItems" and err.validator_value == 1:
        return "must be a non-empty list"
    return err.message


def validate_judge_config(config: Any, suite_dir: Path, prefix: str = "judge") \
        -> list[tuple[str, str]]:
    """Every problem with one judge config: its type, its schema, its semantic checks.
    Nested judges (all/any/weighted) call back into this with a longer prefix."""
    if not isinstance(config, Mapping):
        return [(prefix, "must be a mapping with a 'type'")]
    judge_type = config.get("type")
    if not isinstance(judge_type, str) or not judge_type:
        return [(_join(prefix, "type"), "is required (a judge type such as 'contains')")]
    try:
        spec = get_judge_spec(judge_type)
    except JudgeError as exc:
        return [(_join(prefix, "type"), str(exc))]
    problems = schema_problems(config, spec.schema, prefix)
    if not problems and spec.check is not None:
        problems += [(_join(prefix, f), m) for f, m in spec.check(config, suite_dir)]
    return problems


def build_judge(config: Mapping[str, Any]) -> Judge:
    return get_judge_spec(str(config["type"])).build(config)


def run_judge(judge: Judge, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
    """Judge one attempt's work; a judge that raises yields an error result instead."""
    try:
        result = judge.judge(task, work, ctx)
    except Exception as exc:  # non-blocking evaluators: the run goes on
        return JudgeResult.failure(f"judge crashed: {type(exc).__name__}: {exc}")
    if not isinstance(result, JudgeResult):
        return JudgeResult.failure(f"judge returned {type(result).__name__}, not JudgeResult")
    return result


def clamp_score(score: float) -> float:
    return min(1.0, max(0.0, float(score)))
