"""Observers: non-gating judges. A suite lists them under `observers:` (suite level, and per
task); each one's reading is recorded on every judged attempt (`Attempt.observations`) and
summarised per arm in the artifact, but never touches an attempt's status, a task's result
or the verdict. Built in: `latency` (seconds), `cost` (USD), `length` (chars, words or lines
of the output or of a workspace file) and `consistency` (how alike one task's attempts are
across samples: computed in the summary, once all samples are in); any judge type (e.g. an
`llm-rubric`) works as a soft signal. `target:` narrows the tasks an observer runs on.

An observer that crashes records an error for itself and nothing else."""

from __future__ import annotations

import difflib
import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.model import Attempt, Task
from .base import JudgeContext, build_judge, run_judge, validate_judge_config

BUILT_IN = ("latency", "cost", "length", "consistency")
_OWN_KEYS = {"name", "target"}  # observer keys that are not the judge's config
_BUILT_IN_KEYS = {
    "latency": {"budget_seconds"},
    "cost": {"budget_usd"},
    "length": {"unit", "file", "budget"},
    "consistency": set(),
}
_UNITS = ("chars", "words", "lines")
_TARGET_KEYS = {"category", "id", "kind"}

Spec = Mapping[str, Any]


def _mean(values: Sequence[float]) -> float:
    """The mean, as statistics.fmean gives it (that module costs its importer 10-60 ms)."""
    return math.fsum(values) / len(values)


def name_of(spec: Spec) -> str:
    return str(spec.get("name") or spec.get("type"))


def targets(spec: Spec, task: Task) -> bool:
    """Whether `spec` runs on `task`: every key of its `target` must match (category: one name
    or a list; id: a glob pattern; kind: agent or text)."""
    target = spec.get("target") or {}
    category = target.get("category")
    if category is not None:
        wanted = [category] if isinstance(category, str) else list(category)
        if task.category not in wanted:
            return False
    pattern = target.get("id")
    if pattern is not None and not fnmatch.fnmatchcase(task.id, str(pattern)):
        return False
    kind = target.get("kind")
    return kind is None or kind == ("agent" if task.is_agent_task else "text")


def for_task(suite_level: Iterable[Spec], own: Iterable[Spec], task: Task) -> tuple[Spec, ...]:
    """The observers that run on `task`: the suite's that target it, then its own (a task's
    own observer replaces a suite one of the same name)."""
    own = [dict(s) for s in own]
    names = {name_of(s) for s in own}
    shared = [dict(s) for s in suite_level if name_of(s) not in names]
    return tuple(s for s in shared + own if targets(s, task))


def problems(specs: Any, suite_dir: Path, prefix: str) -> list[tuple[str, str]]:
    """(field, message) for each problem of an `observers:` list (the schema checks shapes)."""
    if not isinstance(specs, list):
        return []
    found: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        where = f"{prefix}[{i}]"
        if not isinstance(spec, Mapping) or not isinstance(spec.get("type"), str):
            continue
        name = name_of(spec)
        if name in seen:
            found.append(
                (
                    f"{where}.name",
                    f"duplicate observer name {name!r}: "
                    f"{prefix}[{seen[name]}] has it too; set name:",
                )
            )
        seen.setdefault(name, i)
        found += _target_problems(spec.get("target"), f"{where}.target")
        kind = spec["type"]
        if kind in BUILT_IN:
            allowed = _OWN_KEYS | {"type"} | _BUILT_IN_KEYS[kind]
            found += [
                (
                    f"{where}.{key}",
                    f"is not a field of a {kind} observer (allowed: {', '.join(sorted(allowed))})",
                )
                for key in spec
                if key not in allowed
            ]
            found += _built_in_problems(spec, where)
        else:
            config = {k: v for k, v in spec.items() if k not in _OWN_KEYS}
            found += validate_judge_config(config, suite_dir, where)
    return found


def _target_problems(target: Any, where: str) -> list[tuple[str, str]]:
    if target is None:
        return []
    if not isinstance(target, Mapping):  # the suite schema says so
        return []
    found = [
        (f"{where}.{k}", "is not a target field (allowed: category, id, kind)")
        for k in target
        if k not in _TARGET_KEYS
    ]
    category = target.get("category")
    if category is not None and not (
        isinstance(category, str)
        or (isinstance(category, list) and all(isinstance(c, str) for c in category))
    ):
        found.append((f"{where}.category", "must be a category name or a list of them"))
    if target.get("id") is not None and not isinstance(target.get("id"), str):
        found.append((f"{where}.id", "must be a task id pattern such as 'fix-*'"))
    if target.get("kind") not in (None, "agent", "text"):
        found.append((f"{where}.kind", "must be agent or text"))
    return found


def _built_in_problems(spec: Spec, where: str) -> list[tuple[str, str]]:
    found = []
    for key in ("budget_seconds", "budget_usd", "budget"):
        value = spec.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value < 0
        ):
            found.append((f"{where}.{key}", "must be a number of at least 0"))
    if spec.get("unit", "chars") not in _UNITS:
        found.append((f"{where}.unit", f"must be one of {', '.join(_UNITS)}"))
    file = spec.get("file")
    if file is not None and (not isinstance(file, str) or not file):
        found.append((f"{where}.file", "must be a workspace-relative file path"))
    return found


def observe(task: Task, attempt: Attempt, ctx: JudgeContext) -> dict[str, dict[str, Any]]:
    """Each per-attempt observer's reading of a judged attempt, by name (consistency waits
    for the summary). Runs while the workspace still exists, so `length` can read a file."""
    if attempt.status == "error":  # no judged work to observe
        return {}
    found: dict[str, dict[str, Any]] = {}
    for spec in task.observers:
        if spec.get("type") == "consistency":
            continue
        try:
            found[name_of(spec)] = _observe_one(spec, task, attempt, ctx)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the observer's own failure, recorded on it alone
            found[name_of(spec)] = {
                "type": spec.get("type"),
                "value": None,
                "error": f"observer crashed: {type(exc).__name__}: {exc}",
            }
    return found


def _flag(reading: dict[str, Any], budget: Any) -> dict[str, Any]:
    if budget is not None and reading["value"] is not None:
        reading["budget"] = budget
        reading["flagged"] = reading["value"] > budget
    return reading


def _observe_one(spec: Spec, task: Task, attempt: Attempt, ctx: JudgeContext) -> dict[str, Any]:
    kind = spec["type"]
    if kind == "latency":
        seconds = (
            attempt.duration_ms / 1000
            if attempt.duration_ms
            else float(attempt.meta.get("latency_ms") or 0) / 1000
        )
        return _flag(
            {"type": kind, "value": round(seconds, 3), "unit": "s"}, spec.get("budget_seconds")
        )
    if kind == "cost":
        return _flag(
            {"type": kind, "value": round(attempt.cost_usd, 6), "unit": "USD"},
            spec.get("budget_usd"),
        )
    if kind == "length":
        return _flag(_length(spec, attempt), spec.get("budget"))
    judge = build_judge({k: v for k, v in spec.items() if k not in _OWN_KEYS})
    result = run_judge(judge, task, attempt.load_work(), ctx)
    reading: dict[str, Any] = {
        "type": kind,
        "value": round(result.score, 4),
        "passed": result.passed,
        "details": result.details[:2000],
    }
    if result.error:
        reading.update(value=None, error=result.error)
    return reading


def _length(spec: Spec, attempt: Attempt) -> dict[str, Any]:
    unit = spec.get("unit", "chars")
    text = attempt.output
    file = spec.get("file")
    if file is not None:
        found = attempt.files.get(file) if attempt.files else None
        if found is None:
            return {
                "type": "length",
                "value": None,
                "unit": unit,
                "error": f"the attempt wrote no file {file!r}",
            }
        try:
            text = found.read_text()  # at most core/bounded.MAX_FILE_BYTES
        except OSError as exc:
            return {"type": "length", "value": None, "unit": unit, "error": str(exc)}
    value = (
        len(text)
        if unit == "chars"
        else len(text.split())
        if unit == "words"
        else len(text.splitlines())
    )
    return {"type": "length", "value": value, "unit": unit}


def similarity(a: str, b: str) -> float:
    """How alike two outputs are, 0..1, word by word (whitespace does not count)."""
    return difflib.SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio()


# Word-by-word similarity is quadratic: outputs stored beyond this are compared by their
# previews (identical outputs are still found by their sha256).
CONSISTENCY_MAX_BYTES = 256 * 1024


def _compared(a: Attempt, b: Attempt) -> float:
    ra, rb = a.output_ref, b.output_ref
    if ra is not None and rb is not None and ra.sha256 == rb.sha256:
        return 1.0
    return similarity(_text_of(a), _text_of(b))


def _text_of(attempt: Attempt) -> str:
    """The whole output when it is stored apart and small enough to compare, else `output`."""
    ref = attempt.output_ref
    if ref is not None and ref.blob is not None and ref.size <= CONSISTENCY_MAX_BYTES:
        try:
            return attempt.full_output()
        except OSError:
            pass
    return attempt.output


def consistency(attempts: Sequence[Attempt]) -> dict[str, Any]:
    """One task's attempts (one arm) in sample order: each attempt's mean similarity to the
    earlier ones (None for the first), and the task's mean over them."""
    ordered = sorted((a for a in attempts if a.status != "error"), key=lambda a: a.index)
    per_attempt: list[float | None] = [None]
    for i in range(1, len(ordered)):
        scores = [_compared(ordered[i], earlier) for earlier in ordered[:i]]
        per_attempt.append(round(_mean(scores), 4))
    known = [s for s in per_attempt[1:] if s is not None]
    return {
        "value": round(_mean(known), 4) if known else None,
        "attempts": {str(a.index): s for a, s in zip(ordered, per_attempt, strict=False)},
    }


def summarise(tasks: Sequence[Task], attempts: Sequence[Attempt]) -> dict[str, Any] | None:
    """Per arm, per observer: how many attempts it read, their mean and min/max, how many were
    flagged or failed, and its errors; consistency per task. None when no task has observers
    (so artifacts of suites without them stay as they were)."""
    if not any(t.observers for t in tasks):
        return None
    by_task = {t.id: t for t in tasks}
    out: dict[str, Any] = {}
    for arm in sorted({a.arm for a in attempts}):
        mine = [a for a in attempts if a.arm == arm and a.task_id in by_task]
        arm_out: dict[str, Any] = {}
        names = {name_of(s): s for t in tasks for s in t.observers}
        for name, spec in names.items():
            if spec.get("type") == "consistency":
                arm_out[name] = _consistency_summary(name, tasks, mine)
            else:
                arm_out[name] = _reading_summary(name, spec, mine)
        out[arm] = arm_out
    return out


def _reading_summary(name: str, spec: Spec, attempts: Sequence[Attempt]) -> dict[str, Any]:
    readings = [a.observations[name] for a in attempts if name in a.observations]
    values = [r["value"] for r in readings if isinstance(r.get("value"), int | float)]
    summary: dict[str, Any] = {
        "type": spec.get("type"),
        "observed": len(readings),
        "mean": round(_mean(values), 6) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "errors": sum(1 for r in readings if r.get("error")),
    }
    if any("flagged" in r for r in readings):
        summary["flagged"] = sum(1 for r in readings if r.get("flagged"))
    if any("passed" in r for r in readings):
        summary["failed"] = sum(1 for r in readings if r.get("passed") is False)
    return summary


def _consistency_summary(
    name: str, tasks: Sequence[Task], attempts: Sequence[Attempt]
) -> dict[str, Any]:
    per_task: dict[str, Any] = {}
    for task in tasks:
        if not any(name_of(s) == name for s in task.observers):
            continue
        mine = [a for a in attempts if a.task_id == task.id]
        if mine:
            per_task[task.id] = consistency(mine)
    values = [t["value"] for t in per_task.values() if t["value"] is not None]
    return {
        "type": "consistency",
        "observed": len(values),
        "mean": round(_mean(values), 4) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "errors": 0,
        "tasks": per_task,
    }


def reading_text(name: str, reading: Mapping[str, Any]) -> str:
    """One reading for people: `latency 1.2 s (over 1)`, `tone 0.40 fail`, `boom error: ...`."""
    if reading.get("error"):
        return f"{name} error: {reading['error']}"
    value = reading.get("value")
    shown = "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)
    text = f"{name} {shown}" + (f" {reading['unit']}" if reading.get("unit") else "")
    if reading.get("flagged"):
        text += f" (over {reading.get('budget')})"
    if reading.get("passed") is False:
        text += " fail"
    return text


def summary_lines(summary: Mapping[str, Any] | None) -> list[str]:
    """Per arm, one line of observer means: `observers candidate: latency mean 0.01 (2
    flagged) · length mean 120`. Empty without observers."""
    lines = []
    for arm, by_name in (summary or {}).items():
        parts = []
        for name, s in by_name.items():
            mean = s.get("mean")
            part = f"{name} mean {'-' if mean is None else f'{mean:.4g}'}"
            extra = [f"{s[k]} {k}" for k in ("flagged", "failed", "errors") if s.get(k)]
            parts.append(part + (f" ({', '.join(extra)})" if extra else ""))
        lines.append(f"observers {arm}: " + " · ".join(parts))
    return lines
