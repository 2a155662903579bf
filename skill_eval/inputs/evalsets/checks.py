"""What an eval checks, under every name eval sets give it, and the judge it becomes.

Statements (a model grades each PASS/FAIL: the `expectations` judge):
    expectations, assertions, checks, anti_expectations, expected_behavior, success_goals,
    expect: strings, or objects whose statement is `text` or `description` (a `name` beside
    it is the statement's label); `fail` lists what must not happen ("This does not happen:
    ..."); `rubric` as a list of `{dimension, pass_if}`; `evaluation_criteria` as an object of
    criterion -> statement.
Typed checks (deterministic: operators.py), in the same lists: `{type | kind: OP, ...}`, or a
    statement with a `check` holding operators.
Literal and pattern lists: `must_have` / `must_not_have` (regular expressions: each found,
    none found), `must_contain` / `must_not_contain` (strings, or `{regex}` objects).
A rubric string is scored 0..1 by a model (`llm-rubric`). What has no judge here is not
carried over, and said so (`Checks.dropped`); a pattern Python cannot compile is bad input.

An eval's judge (`judge_for`): each part the author gave (statements, a rubric, checks) is a
judge; several are `all` of them, so a task passes only when every part does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .operators import KIND_KEYS, Found, check_block, regex_judge, typed_check
from .records import bad, is_text

# Lists of statements (or typed checks), under the names in use; the first is skill-creator's.
STATEMENT_LISTS = (
    "expectations", "assertions", "checks", "anti_expectations", "expected_behavior",
    "success_goals", "expect",
)  # fmt: skip
SINGLE_OK = ("expected_behavior", "expect")  # written as one string as often as a list
NEGATED_LISTS = ("fail",)  # what must not happen
PATTERN_LISTS = {"must_have": False, "must_not_have": True}  # regular expressions; negated
LITERAL_LISTS = {"must_contain": False, "must_not_contain": True}  # strings or {regex}
STATEMENT_KEYS = ("text", "description", "assertion", "statement", "check_text")
CRITERIA_KEY = "evaluation_criteria"
CHECK_FIELDS = (
    *STATEMENT_LISTS, *NEGATED_LISTS, *PATTERN_LISTS, *LITERAL_LISTS, CRITERIA_KEY,
    "deterministic_assertions",
)  # fmt: skip


@dataclass(frozen=True)
class Checks:
    """What the check fields of one eval hold."""

    statements: tuple[str, ...] = ()
    judges: tuple[dict[str, Any], ...] = ()  # deterministic judge configs
    dropped: tuple[str, ...] = field(default=())  # `FIELD[i]: why`, one per entry left out

    def __add__(self, other: Checks | Found) -> Checks:
        fresh = tuple(s for s in dict.fromkeys(other.statements) if s not in self.statements)
        return Checks(self.statements + fresh, self.judges + other.judges,
                      self.dropped + other.dropped)  # fmt: skip


def _entry(path: Path, where: str, entry: Mapping[str, Any]) -> Found:
    """One object of a statement list: a typed check, a statement with a `check`, or a
    statement (`text`, `description`, or a `{dimension, pass_if}` criterion)."""
    kind_key = next((k for k in KIND_KEYS if k in entry), None)
    if kind_key is not None:
        return typed_check(path, where, entry, kind_key)
    if "check" in entry:
        return check_block(path, f"{where}.check", entry["check"], entry)
    if is_text(entry.get("pass_if")):
        label = entry.get("dimension") or entry.get("name")
        text = f"{label}: {entry['pass_if']}" if is_text(label) else str(entry["pass_if"])
        return Found(statements=(text.strip(),))
    key = next((k for k in STATEMENT_KEYS if is_text(entry.get(k))), None)
    if key is None:
        raise bad(path, where, "must have a non-empty `text` (a statement) or a `type`")
    used = {key, "id", "name"} | ({"description"} if key == "text" else set())
    extra = tuple(f"{where}.{k}: no place in a task suite" for k in sorted(entry) if k not in used)
    return Found(statements=(str(entry[key]).strip(),), dropped=extra)


def read_statements(
    path: Path, where: str, value: Any, *, negate: bool = False, one: bool = False
) -> Checks:
    """A statement list (None or []: none) of strings and objects; `one`: a bare string is
    one statement (as `expected_behavior` is written). `negate`: each string says what must
    not happen."""
    if value is None or value == []:
        return Checks()
    items = [value] if one and isinstance(value, str) else value
    if not isinstance(items, list):
        raise bad(path, where, "must be a list of non-empty strings (or statement objects)")
    found = Checks()
    for i, entry in enumerate(items):
        spot = f"{where}[{i}]" if isinstance(value, list) else where
        if is_text(entry):
            text = entry.strip()
            found += Found(statements=(f"This does not happen: {text}" if negate else text,))
        elif isinstance(entry, Mapping):
            found += _entry(path, spot, entry)
        else:
            raise bad(path, spot, "must be a non-empty string or an object")
    return found


def pattern_list(path: Path, where: str, value: Any, *, negate: bool, literal: bool) -> Checks:
    """`must_have` / `must_not_have` (patterns) or `must_contain` / `must_not_contain`
    (strings, or `{regex}` objects): each entry found, or (negated) none found."""
    if value is None or value == []:
        return Checks()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise bad(path, where, "must be a list of strings")
    judges: list[dict[str, Any]] = []
    for i, entry in enumerate(items):
        spot = f"{where}[{i}]" if isinstance(value, list) else where
        if isinstance(entry, Mapping) and "regex" in entry:
            judges.append(regex_judge(path, f"{spot}.regex", entry["regex"], negate=negate))
        elif literal and is_text(entry):
            judges.append({"type": "not-contains" if negate else "contains", "expected": [entry]})
        elif is_text(entry):
            judges.append(regex_judge(path, spot, entry, negate=negate))
        else:
            raise bad(path, spot, "must be a non-empty string (or a {regex} object)")
    return Checks(judges=tuple(judges))


def read_checks(path: Path, where: str, entry: Mapping[str, Any]) -> Checks:
    """Every check field of one eval, in the order above."""
    found = Checks()
    for key in STATEMENT_LISTS:
        one = key in SINGLE_OK
        found += read_statements(path, f"{where}.{key}", entry.get(key), one=one)
    for key in NEGATED_LISTS:
        found += read_statements(path, f"{where}.{key}", entry.get(key), negate=True)
    for key, negate in PATTERN_LISTS.items():
        found += pattern_list(path, f"{where}.{key}", entry.get(key), negate=negate, literal=False)
    for key, negate in LITERAL_LISTS.items():
        found += pattern_list(path, f"{where}.{key}", entry.get(key), negate=negate, literal=True)
    criteria = entry.get(CRITERIA_KEY)
    if isinstance(criteria, Mapping):
        found += Checks(statements=tuple(str(v).strip() for v in criteria.values() if is_text(v)))
    elif criteria is not None:
        found += read_statements(path, f"{where}.{CRITERIA_KEY}", criteria, one=True)
    if entry.get("deterministic_assertions"):
        why = "runs commands; no judge here runs an eval set's commands"
        found += Checks(dropped=(f"{where}.deterministic_assertions: {why}",))
    return found


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
    "CHECK_FIELDS",
    "STATEMENT_LISTS",
    "Checks",
    "judge_for",
    "pattern_list",
    "read_checks",
    "read_statements",
]
