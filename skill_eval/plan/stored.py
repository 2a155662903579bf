"""A run plan read back from a run's `run.json`, for `rejudge` and `merge`: the sectioned plan
`RunPlan.to_dict` writes (`{"version": 1, "inputs": {...}, ...}`), or the flat `options` of
the runs written before plans had sections (run.json schema_version 0 and 1).

A key this version does not know is dropped with a warning; a missing key takes its default
(`task_suite` excepted); a value of the wrong type is a UsageError naming the file and the
key. Nothing here needs the run's executor to still be installed: a plugin executor that is
gone leaves its options as they were stored (rejudge and merge do not run it).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields, replace
from typing import Any

from ..errors import ExecutorError, UsageError
from ..executors.base import OFFLINE_EXECUTOR, get_executor_spec
from .checks import executor_of_flags
from .executor_options import SHORTHANDS, given
from .flags import PLACES, SECTIONS
from .run_plan import PLAN_VERSION, RunPlan, frozen_mapping

Warn = Callable[[str], None]


def plan_from_dict(stored: Mapping[str, Any], *, where: str, warn: Warn) -> RunPlan:
    """The plan `RunPlan.to_dict` wrote (`where` names it in messages: `run.json: plan`)."""
    version = stored.get("version", PLAN_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise UsageError(f"{where}.version: must be an integer, got {version!r}")
    if version > PLAN_VERSION:
        warn(
            f"{where}: version {version} is newer than this skill-eval reads; reading what it knows"
        )
    unknown = sorted(k for k in stored if k not in SECTIONS and k != "version")
    if unknown:
        warn(f"{where}: ignoring unknown section(s) {', '.join(map(str, unknown))}")
    sections: dict[str, Any] = {}
    for name, cls in SECTIONS.items():
        values = _moved(stored, name)
        if not isinstance(values, Mapping):
            raise UsageError(f"{where}.{name}: must be an object, got {values!r}")
        sections[name] = section_from_dict(cls, values, where=f"{where}.{name}", warn=warn)
    return RunPlan(**sections)


# Fields that moved to another section since plans were first stored: field -> (old, new).
MOVED = {"max_output_bytes": ("records", "execution")}


def _moved(stored: Mapping[str, Any], name: str) -> Any:
    """Section `name` as stored, with the fields that moved into it from where older plans
    keep them, and without those that moved out."""
    values = stored.get(name, {})
    if not isinstance(values, Mapping):
        return values
    out = {k: v for k, v in values.items() if MOVED.get(k, (None, name))[1] == name}
    for key, (old, new) in MOVED.items():
        earlier = stored.get(old)
        if new == name and key not in out and isinstance(earlier, Mapping) and key in earlier:
            out[key] = earlier[key]
    return out


def section_from_dict(cls: type[Any], stored: Mapping[str, Any], *, where: str, warn: Warn) -> Any:
    """One section (a frozen dataclass of plain values) from its stored form."""
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(str(k) for k in stored if k not in known)
    if unknown:
        warn(
            f"{where}: ignoring {len(unknown)} unknown key(s) (from another version of "
            f"skill-eval?): {', '.join(unknown)}"
        )
    values: dict[str, Any] = {}
    for name, spec in known.items():
        if name not in stored:
            if spec.default is MISSING and spec.default_factory is MISSING:
                raise UsageError(f"{where}.{name}: is required")
            continue
        value, kind = stored[name], hints[name]
        if not fits(value, kind):
            raise UsageError(f"{where}.{name}: must be {describe(kind)}, got {value!r}")
        values[name] = _as_field(value)
    return cls(**values)


def _as_field(value: Any) -> Any:
    """A stored value as the frozen section holds it: lists as tuples, objects read-only."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, Mapping):
        return frozen_mapping(value)
    return value


def _arms(kind: Any) -> tuple[Any, ...]:
    return typing.get_args(kind) if _is_union(kind) else (kind,)


def _is_union(kind: Any) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType)


def fits(value: Any, kind: Any) -> bool:
    """Whether a stored JSON value fits a field type: str, int, float, bool, None, a Literal,
    tuple[str, ...], a Mapping, or a union of them (a bool is not an int: JSON keeps them
    apart)."""
    for arm in _arms(kind):
        origin = typing.get_origin(arm)
        if arm is type(None) and value is None:
            return True
        if origin is typing.Literal and value in typing.get_args(arm):
            return True
        if origin is tuple and isinstance(value, list | tuple):
            if all(isinstance(v, str) for v in value):
                return True
        if origin is not None and origin not in (tuple, typing.Literal):
            if isinstance(value, Mapping):  # Mapping[str, Any]
                return True
        if arm in (str, bool) and isinstance(value, arm):
            return True
        if arm in (int, float) and not isinstance(value, bool):
            if isinstance(value, int if arm is int else int | float):
                return True
    return False


def describe(kind: Any) -> str:
    """A field type in the words of messages: `int`, `str or null`, `one of a, b`."""
    words = []
    for arm in _arms(kind):
        origin = typing.get_origin(arm)
        if arm is type(None):
            words.append("null")
        elif origin is typing.Literal:
            words.append("one of " + ", ".join(map(str, typing.get_args(arm))))
        elif origin is tuple:
            words.append("a list of strings")
        elif origin is not None:
            words.append("an object")
        else:
            words.append(getattr(arm, "__name__", str(arm)))
    return " or ".join(words)


# -- the flat `options` of run.json before schema_version 2 ------------------------------------

LEGACY_RENAMED = {"backend": "runner"}  # `run --backend` became --runner
LEGACY_RESOLVED = frozenset({"standalone", "mock", "executor", "no_judge_cache"})


def plan_from_options(stored: Mapping[str, Any], *, where: str, warn: Warn) -> RunPlan:
    """The plan of a run written with the flat options (every flag of `run`, by its Python
    name, defaults included). Their executor shorthands become the executor's options when
    it is still installed and has them (rejudge and merge do not need them otherwise)."""
    shorthand = {s.param for s in SHORTHANDS}
    known = set(PLACES) | LEGACY_RESOLVED | shorthand | set(LEGACY_RENAMED)
    unknown = sorted(str(k) for k in stored if k not in known)
    if unknown:
        warn(
            f"{where}: ignoring {len(unknown)} unknown key(s) (from another version of "
            f"skill-eval?): {', '.join(unknown)}"
        )
    if "task_suite" not in stored:
        raise UsageError(f"{where}.task_suite: is required")
    values: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
    for key, value in stored.items():
        flag = LEGACY_RENAMED.get(key, key)
        if flag in PLACES:
            section, field = PLACES[flag]
            values[section][field] = value
    for flag in ("standalone", "mock", "no_judge_cache"):
        if not isinstance(stored.get(flag, False), bool):
            raise UsageError(f"{where}.{flag}: must be bool, got {stored[flag]!r}")
    mock = bool(stored.get("mock"))
    name = stored.get("executor") or executor_of_flags(mock, None)
    if not isinstance(name, str):
        raise UsageError(f"{where}.executor: must be str or null, got {name!r}")
    values["inputs"]["mode"] = "standalone" if stored.get("standalone") else "pipeline"
    values["judging"]["cache"] = not stored.get("no_judge_cache", False)
    if mock and not values["judging"].get("executor"):
        values["judging"]["executor"] = OFFLINE_EXECUTOR
    values["executor"]["name"] = name
    sections = {
        section: section_from_dict(SECTIONS[section], vals, where=where, warn=lambda m: None)
        for section, vals in values.items()
    }
    options, grader = _legacy_options(name, stored)
    return RunPlan(
        **{
            **sections,
            "executor": replace(sections["executor"], options=frozen_mapping(options)),
            "judging": replace(sections["judging"], grader_options=frozen_mapping(grader)),
        }
    )


def _legacy_options(name: str, stored: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        known = {f.name for f in fields(get_executor_spec(name).config_cls)}
    except ExecutorError:  # a plugin executor no longer installed
        known = set()
    options: dict[str, Any] = {}
    grader: dict[str, Any] = {}
    for short in SHORTHANDS:
        value = stored.get(short.param)
        if not given(value):
            continue
        converted = short.convert(value)
        if short.option in known:
            options[short.option] = converted
        if short.grader:
            grader[short.option] = converted
    return options, grader


__all__ = ["describe", "fits", "plan_from_dict", "plan_from_options", "section_from_dict"]
