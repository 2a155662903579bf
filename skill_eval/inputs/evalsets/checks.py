"""What an eval checks, in each shape the public eval sets write it, and the judge it becomes.

Statements (a model grades each PASS/FAIL: the `expectations` judge):
    "The report opens with a title"                 skill-creator's expectations, the
                                                     agentskills.io guide's assertions, a
                                                     `checks` list of sentences
    {"id": "a1", "text": "The report ..."}          statement objects
Deterministic checks (no model), under `type` or `kind`:
    {"name": "n", "type": "contains", "value": "..."}            -> contains
    not_contains, regex (`pattern`, `flags` "im" or a list), not_regex, equals, and
    min_length / max_length (of the trimmed output: a regex of that length)
Regular expression lists: `must_have: ["re", ...]` (each must be found: `regex`) and
    `must_not_have: [...]` (none may be: `not-regex`).
A check of a type with no judge here is not carried over, and said so (`Checks.dropped`).
A pattern Python cannot compile is bad input, named by its field.

An eval's judge (`judge_for`): each part the author gave (statements, a rubric, checks) is a
judge; several are `all` of them, so a task passes only when every part does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from ...judges.simple import compile_pattern
from .records import bad, is_text

# Each accepted check type -> the judge that runs it. `_` and `-` are one (not_contains).
CHECK_TYPES = {
    "contains": "contains",
    "includes": "contains",
    "not_contains": "not-contains",
    "excludes": "not-contains",
    "regex": "regex",
    "matches": "regex",
    "not_regex": "not-regex",
    "not_matches": "not-regex",
    "equals": "equals",
    "min_length": "regex",  # \S[\s\S]{n-2,}\S: the trimmed output holds n characters
    "max_length": "not-regex",
}
KIND_KEYS = ("type", "kind")  # skill-creator's guide says type, Driftproof kind
STATEMENT_KEYS = ("text", "assertion", "statement", "description", "check")
CHECK_VALUE_KEYS = ("value", "values", "pattern", "text", "expected")
LABEL_KEYS = ("id", "name")  # an assertion's own name: shown in the judge's config only
# JavaScript's regex flags (Driftproof writes "im") and what each is here; g, u and d change
# nothing for one search from the start.
JS_FLAGS = {"i": "ignorecase", "m": "multiline", "s": "dotall", "g": None, "u": None, "d": None}


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
    """A list of statements and check objects (None or []: none). Bad input is a located
    error naming the file and the entry; a check type with no judge is dropped and listed."""
    if value is None or value == []:
        return Checks()
    if not isinstance(value, list):
        raise bad(path, where, f"must be a list of {shape}")
    found = Checks()
    for i, entry in enumerate(value):
        spot = f"{where}[{i}]"
        if is_text(entry):
            found += Checks(statements=(entry.strip(),))
        elif isinstance(entry, Mapping):
            found += check_object(path, spot, entry)
        else:
            raise bad(path, spot, f"must be a non-empty string or an object ({shape})")
    return found


def regex_list(path: Path, where: str, value: Any, *, negate: bool) -> Checks:
    """`must_have` (each pattern found: regex) or `must_not_have` (none found: not-regex)."""
    if value is None or value == []:
        return Checks()
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, list) or not all(is_text(p) for p in patterns):
        raise bad(path, where, "must be a list of regular expressions (non-empty strings)")
    judge = "not-regex" if negate else "regex"
    return Checks(
        judges=tuple(
            _regex(path, f"{where}[{i}]" if isinstance(value, list) else where, judge, p, [])
            for i, p in enumerate(patterns)
        )
    )


def _regex(path: Path, where: str, judge: str, pattern: str, flags: list[str]) -> dict[str, Any]:
    config: dict[str, Any] = {"type": judge, "pattern": pattern}
    if flags:
        config["flags"] = flags
    try:
        compile_pattern(config)
    except (regex.error, ValueError, OverflowError) as exc:
        raise bad(path, where, f"invalid regular expression {pattern!r}: {exc}") from None
    return config


def _flags(path: Path, where: str, value: Any) -> tuple[list[str], list[str]]:
    """(our regex flags, the ones with no equivalent) of `flags`: JavaScript's letters ("im")
    or our names (["ignorecase"])."""
    if value is None:
        return [], []
    if isinstance(value, str):
        known = [JS_FLAGS.get(letter, "?") for letter in value]
        names = [f for f in known if f is not None and f != "?"]
        unknown = [letter for letter in value if letter not in JS_FLAGS]
        return sorted(set(names)), unknown
    if isinstance(value, list) and all(v in JS_FLAGS.values() for v in value):
        return sorted({str(v) for v in value}), []
    raise bad(path, where, 'must be regex flags: letters such as "im", or a list of names')


def check_object(path: Path, where: str, entry: Mapping[str, Any]) -> Checks:
    """One assertion object: a statement (`text`) or a typed check (`type` or `kind`)."""
    kind_key = next((k for k in KIND_KEYS if k in entry), None)
    if kind_key is None:
        text = next((entry[k] for k in STATEMENT_KEYS if k in entry), None)
        if not is_text(text):
            raise bad(path, where, "must have a non-empty `text` (a statement) or a `type`")
        extra = sorted(str(k) for k in entry if k not in (*STATEMENT_KEYS, *LABEL_KEYS))
        dropped = tuple(f"{where}.{k}: no place in a task suite" for k in extra)
        return Checks(statements=(str(text).strip(),), dropped=dropped)
    kind = entry[kind_key]
    if not is_text(kind):
        raise bad(path, f"{where}.{kind_key}", "must be a non-empty string")
    name = str(kind).strip().lower().replace("-", "_")
    judge_type = CHECK_TYPES.get(name)
    if judge_type is None:
        known = ", ".join(sorted(CHECK_TYPES))
        reason = f"check {kind_key} {kind!r} has no judge here (known: {known})"
        return Checks(dropped=(f"{where}: {reason}; not carried over",))
    key = next((k for k in CHECK_VALUE_KEYS if k in entry), None)
    if key is None:
        raise bad(path, where, f"a {kind} check needs a `value` (or `pattern`)")
    flags, unknown = _flags(path, f"{where}.flags", entry.get("flags"))
    if unknown:
        return Checks(
            dropped=(
                f"{where}.flags: {''.join(unknown)!r} has no equivalent here; not carried over",
            )
        )
    judges = _judges(path, f"{where}.{key}", name, judge_type, entry[key], flags)
    if entry.get("case_sensitive") is True and judge_type in ("contains", "not-contains"):
        judges = tuple({**j, "case_sensitive": True} for j in judges)
    label = next((entry[k] for k in LABEL_KEYS if is_text(entry.get(k))), None)
    if label is not None:
        judges = tuple({**j, "x-name": str(label)} for j in judges)
    known_keys = (*LABEL_KEYS, kind_key, key, "case_sensitive", "flags")
    extra = sorted(str(k) for k in entry if k not in known_keys)
    return Checks(
        judges=judges, dropped=tuple(f"{where}.{k}: no place in a task suite" for k in extra)
    )


def _judges(
    path: Path, where: str, name: str, judge_type: str, raw: Any, flags: list[str]
) -> tuple[dict[str, Any], ...]:
    if name in ("min_length", "max_length"):
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
            raise bad(path, where, "must be a whole number of characters (0 or more)")
        return (_regex(path, where, judge_type, length_pattern(raw, name == "max_length"), []),)
    values = [raw] if isinstance(raw, str) else raw
    if not isinstance(values, list) or not values or not all(is_text(v) for v in values):
        raise bad(path, where, "must be a non-empty string or list of strings")
    if judge_type in ("regex", "not-regex"):
        return tuple(_regex(path, where, judge_type, v, flags) for v in values)
    if judge_type == "equals":
        if len(values) != 1:
            raise bad(path, where, "an equals check takes one string")
        return ({"type": "equals", "expected": values[0]},)
    return ({"type": judge_type, "expected": list(values)},)


def length_pattern(n: int, over: bool) -> str:
    """A pattern found exactly when the trimmed text is at least `n` characters long (or, with
    `over`, longer than `n`: what max_length forbids)."""
    n = n + 1 if over else n
    if n <= 1:
        return r"\S"
    return rf"\S[\s\S]{{{n - 2},}}\S"


def judge_for(
    statements: Sequence[str],
    checks: Sequence[Mapping[str, Any]],
    *,
    threshold: float | None = None,
    expected_output: str = "",
    rubric: str | None = None,
    rubric_threshold: float | None = None,
) -> dict[str, Any] | None:
    """The judge of an eval (see the module docstring); None when it checks nothing.
    `threshold`: the share of the checks that must pass (None: all of them)."""
    parts: list[dict[str, Any]] = []
    if statements:
        judge: dict[str, Any] = {"type": "expectations", "expectations": list(statements)}
        if expected_output:
            judge["expected_output"] = expected_output
        parts.append(judge)
    if rubric is not None:
        scored: dict[str, Any] = {"type": "llm-rubric", "rubric": rubric}
        if rubric_threshold is not None:
            scored["pass_threshold"] = rubric_threshold
        parts.append(scored)
    if checks:
        if threshold is not None and len(checks) > 1:
            entries = [{"weight": 1, "judge": dict(c)} for c in checks]
            parts.append({"type": "weighted", "judges": entries, "pass_threshold": threshold})
        else:
            parts += [dict(c) for c in checks]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"type": "all", "judges": parts}


__all__ = [
    "CHECK_TYPES",
    "Checks",
    "check_object",
    "judge_for",
    "length_pattern",
    "read_assertions",
    "regex_list",
]
