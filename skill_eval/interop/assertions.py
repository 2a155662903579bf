"""What an eval checks, in each shape the public eval sets write it, and the judge it becomes.

Statements (graded PASS/FAIL by a model: the `expectations` judge):
    "The report opens with a title"                 skill-creator's expectations, the
                                                     agentskills.io guide's assertions
    {"id": "a1", "text": "The report ..."}          assertion objects
Deterministic checks (no model; `contains`, `not-contains`, `regex` judges):
    {"name": "n", "type": "contains" | "not_contains" | "regex", "value": "..."}
    Driftproof's rubric checks {"type": "regex" | "contains", "pattern" | "value": ...}
A check of a type with no judge here is not carried over, and said so (`Checks.dropped`).

An eval's judge (`judge_for`): its statements alone give an `expectations` judge; checks alone
their judge (several: `all`, or `weighted` with the eval's pass threshold); both give `all` of
the two parts, so a task passes only when its statements and its checks do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

# Each accepted check type -> the judge that runs it. `_` and `-` are one (not_contains).
CHECK_TYPES = {
    "contains": "contains",
    "not_contains": "not-contains",
    "regex": "regex",
    "matches": "regex",
}
STATEMENT_KEYS = ("text", "assertion", "statement", "description")  # the first one given
CHECK_VALUE_KEYS = ("value", "values", "pattern", "text", "expected")
LABEL_KEYS = ("id", "name")  # an assertion's own name: shown in the judge's config only


def bad(path: Path, where: str, message: str) -> UsageError:
    return UsageError(f"{path}: {where}: {message}", path=str(path))


def is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


@dataclass(frozen=True)
class Checks:
    """What one list of assertions holds."""

    statements: tuple[str, ...] = ()
    judges: tuple[dict[str, Any], ...] = ()  # deterministic judge configs
    dropped: tuple[str, ...] = field(default=())  # `FIELD[i]: why`, one per entry left out

    def __add__(self, other: Checks) -> Checks:
        return Checks(
            self.statements + other.statements,
            self.judges + other.judges,
            self.dropped + other.dropped,
        )


def read_assertions(path: Path, where: str, value: Any, *, shape: str) -> Checks:
    """A list of statements and check objects (None: none). Bad input is a UsageError naming
    the file and the entry; a check type with no judge is dropped and listed."""
    if value is None:
        return Checks()
    if not isinstance(value, list) or not value:
        if isinstance(value, list):
            return Checks()
        raise bad(path, where, f"must be a list of {shape}")
    found = Checks()
    for i, entry in enumerate(value):
        spot = f"{where}[{i}]"
        if is_text(entry):
            found += Checks(statements=(entry.strip(),))
        elif isinstance(entry, Mapping):
            found += _object(path, spot, entry)
        else:
            raise bad(path, spot, f"must be a non-empty string or an object ({shape})")
    return found


def _object(path: Path, where: str, entry: Mapping[str, Any]) -> Checks:
    kind = entry.get("type")
    if kind is None:
        text = next((entry[k] for k in STATEMENT_KEYS if k in entry), None)
        if not is_text(text):
            raise bad(path, where, "must have a non-empty `text` (a statement) or a `type`")
        extra = sorted(str(k) for k in entry if k not in (*STATEMENT_KEYS, *LABEL_KEYS))
        dropped = tuple(f"{where}.{k}: no place in a task suite" for k in extra)
        return Checks(statements=(str(text).strip(),), dropped=dropped)
    if not is_text(kind):
        raise bad(path, f"{where}.type", "must be a non-empty string")
    judge_type = CHECK_TYPES.get(str(kind).strip().lower().replace("-", "_"))
    if judge_type is None:
        return Checks(
            dropped=(
                f"{where}: check type {kind!r} has no judge here "
                f"(known: {', '.join(sorted(CHECK_TYPES))}); not carried over",
            )
        )
    key = next((k for k in CHECK_VALUE_KEYS if k in entry), None)
    if key is None:
        raise bad(path, where, f"a {kind} check needs a `value` (or `pattern`)")
    raw = entry[key]
    values = [raw] if isinstance(raw, str) else raw
    if not isinstance(values, list) or not values or not all(is_text(v) for v in values):
        raise bad(path, f"{where}.{key}", "must be a non-empty string or list of strings")
    if judge_type == "regex":
        judges = tuple({"type": "regex", "pattern": v} for v in values)
    else:
        judges = ({"type": judge_type, "expected": list(values)},)
    if entry.get("case_sensitive") is True and judge_type != "regex":
        judges = tuple({**j, "case_sensitive": True} for j in judges)
    label = next((entry[k] for k in LABEL_KEYS if is_text(entry.get(k))), None)
    if label is not None:
        judges = tuple({**j, "x-name": str(label)} for j in judges)
    known = (*LABEL_KEYS, "type", key, "case_sensitive")
    extra = sorted(str(k) for k in entry if k not in known)
    return Checks(
        judges=judges, dropped=tuple(f"{where}.{k}: no place in a task suite" for k in extra)
    )


def judge_for(
    statements: Sequence[str],
    checks: Sequence[Mapping[str, Any]],
    *,
    threshold: float | None = None,
    expected_output: str = "",
) -> dict[str, Any] | None:
    """The judge of an eval (see the module docstring); None when it checks nothing.
    `threshold`: the share of the checks that must pass (None: all of them)."""
    parts: list[dict[str, Any]] = []
    if statements:
        judge: dict[str, Any] = {"type": "expectations", "expectations": list(statements)}
        if expected_output:
            judge["expected_output"] = expected_output
        parts.append(judge)
    if checks:
        if threshold is not None and len(checks) > 1:
            entries = [{"weight": 1, "judge": dict(c)} for c in checks]
            parts.append({"type": "weighted", "judges": entries, "pass_threshold": threshold})
        elif len(checks) == 1:
            parts.append(dict(checks[0]))
        else:
            parts.append({"type": "all", "judges": [dict(c) for c in checks]})
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    if parts[1]["type"] == "all":  # statements and plain checks: one flat `all`
        return {"type": "all", "judges": [parts[0], *parts[1]["judges"]]}
    return {"type": "all", "judges": parts}


__all__ = ["CHECK_TYPES", "Checks", "bad", "is_text", "judge_for", "read_assertions"]
