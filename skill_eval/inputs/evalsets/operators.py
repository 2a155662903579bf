"""Typed checks as eval sets spell them, and the deterministic judge each becomes.

A typed check names its operator under `type` or `kind` (`{"type": "contains", "value": "x"}`,
Driftproof's `{"kind": "regex", "pattern": ..., "flags": "im"}`), or an assertion holds them
under `check` as keys (`{"text": ..., "check": {"contains_any": [...], "not_matches": [...]}}`).
The operators seen in public eval sets, by the judge they become:

    contains      contains, includes, contains_all, content_includes_all
    any contains  contains_any, content_includes_any, includes_any
    not-contains  not_contains, excludes, content_excludes
    regex         regex, matches, regex_includes, min_length (a pattern of that length)
    any regex     matches_any
    not-regex     not_regex, not_matches, regex_excludes, max_length
    equals        equals
    file-exists   file_exists, files_exist (`path` / `paths`)
    on a file     file_contains ({path, needle | contains | value}), file_matches ({path, pattern})
    statements    judge ({rubric: [...]}): graded by a model like any statement

An operator that runs something (`script`, `command`, a `check` that is a shell command) has no
judge here: an eval set is the candidate's text and no judge runs its commands. It is not
carried over, and said so, as is any operator not above.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from ...judges.simple import compile_pattern
from .records import bad, is_text

CONTAINS = ("contains", "includes", "contains_all", "content_includes_all")
ANY_CONTAINS = ("contains_any", "content_includes_any", "includes_any")
NOT_CONTAINS = ("not_contains", "excludes", "content_excludes")
REGEX = ("regex", "matches", "regex_includes")
ANY_REGEX = ("matches_any",)
NOT_REGEX = ("not_regex", "not_matches", "regex_excludes")
FILE_EXISTS = ("file_exists", "files_exist")
FILE_TEXT = ("file_contains", "file_matches")
LENGTH = ("min_length", "max_length")
OPERATORS = (
    *CONTAINS, *ANY_CONTAINS, *NOT_CONTAINS, *REGEX, *ANY_REGEX, *NOT_REGEX, *FILE_EXISTS,
    *FILE_TEXT, *LENGTH, "equals", "judge",
)  # fmt: skip
RUNS = ("script", "command", "shell", "cmd", "run")
KIND_KEYS = ("type", "kind")
VALUE_KEYS = ("value", "values", "pattern", "expected", "needle", "rubric", "text")
LABEL_KEYS = ("name", "id", "description", "text")  # the check's own name, kept as x-name
# JavaScript's regex flags (Driftproof writes "im") and ours; g, u and d change nothing for
# one search from the start.
JS_FLAGS = {"i": "ignorecase", "m": "multiline", "s": "dotall", "g": None, "u": None, "d": None}


@dataclass(frozen=True)
class Found:
    """What one check gives: judges, statements a model grades, and what was left out."""

    judges: tuple[dict[str, Any], ...] = ()
    statements: tuple[str, ...] = ()
    dropped: tuple[str, ...] = field(default=())


def op_name(value: Any) -> str:
    return str(value).strip().lower().replace("-", "_")


def regex_judge(
    path: Path, where: str, pattern: Any, *, negate: bool = False, flags: list[str] | None = None
) -> dict[str, Any]:
    """A regex (or not-regex) judge; a pattern Python cannot compile is bad input here."""
    if not is_text(pattern):
        raise bad(path, where, "must be a regular expression (a non-empty string)")
    config: dict[str, Any] = {"type": "not-regex" if negate else "regex", "pattern": pattern}
    if flags:
        config["flags"] = flags
    try:
        compile_pattern(config)
    except (regex.error, ValueError, OverflowError) as exc:
        raise bad(path, where, f"invalid regular expression {pattern!r}: {exc}") from None
    return config


def js_flags(path: Path, where: str, value: Any) -> tuple[list[str], str]:
    """(our regex flags, the letters with no equivalent) of `flags`: JavaScript's letters
    ("im") or our names (["ignorecase"])."""
    if value is None:
        return [], ""
    if isinstance(value, str):
        names = sorted({f for letter in value if (f := JS_FLAGS.get(letter))})
        return names, "".join(letter for letter in value if letter not in JS_FLAGS)
    if isinstance(value, list) and all(v in JS_FLAGS.values() for v in value):
        return sorted({str(v) for v in value}), ""
    raise bad(path, where, 'must be regex flags: letters such as "im", or a list of names')


def length_pattern(n: int, over: bool) -> str:
    """A pattern found exactly when the trimmed text is at least `n` characters long (or, with
    `over`, longer than `n`: what max_length forbids)."""
    n = n + 1 if over else n
    if n <= 1:
        return r"\S"
    return rf"\S[\s\S]{{{n - 2},}}\S"


def _strings(path: Path, where: str, value: Any) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(is_text(v) for v in values):
        raise bad(path, where, "must be a non-empty string or list of strings")
    return [str(v) for v in values]


def _any(judges: list[dict[str, Any]]) -> dict[str, Any]:
    return judges[0] if len(judges) == 1 else {"type": "any", "judges": judges}


def _file_text(path: Path, where: str, op: str, operand: Any) -> list[dict[str, Any]]:
    """file_contains / file_matches: one {path, needle | contains | value | pattern} or a
    list of them, each a judge of that workspace file."""
    items = operand if isinstance(operand, list) else [operand]
    out = []
    for i, item in enumerate(items):
        spot = f"{where}[{i}]" if isinstance(operand, list) else where
        if not isinstance(item, Mapping) or not is_text(item.get("path")):
            raise bad(path, spot, f"a {op} check needs a `path` (a workspace file)")
        key = next((k for k in ("pattern", "needle", "contains", "value") if k in item), None)
        if key is None:
            raise bad(path, spot, f"a {op} check needs a `needle` (or `pattern`)")
        if op == "file_matches" or key == "pattern":
            out.append({**regex_judge(path, f"{spot}.{key}", item[key]), "file": item["path"]})
        else:
            needles = _strings(path, f"{spot}.{key}", item[key])
            out.append({"type": "contains", "expected": needles, "file": item["path"]})
    return out


def operator(path: Path, where: str, op: str, operand: Any, flags: list[str]) -> Found:
    """The judges (or statements) of one operator applied to its operand."""
    if op in CONTAINS or op in NOT_CONTAINS:
        kind = "contains" if op in CONTAINS else "not-contains"
        return Found(({"type": kind, "expected": _strings(path, where, operand)},))
    if op in ANY_CONTAINS:
        values = _strings(path, where, operand)
        return Found((_any([{"type": "contains", "expected": [v]} for v in values]),))
    if op in REGEX or op in NOT_REGEX or op in ANY_REGEX:
        patterns = _strings(path, where, operand)
        judges = [
            regex_judge(path, where, p, negate=op in NOT_REGEX, flags=flags) for p in patterns
        ]
        return Found((_any(judges),) if op in ANY_REGEX else tuple(judges))
    if op in LENGTH:
        if isinstance(operand, bool) or not isinstance(operand, int) or operand < 0:
            raise bad(path, where, "must be a whole number of characters (0 or more)")
        pattern = length_pattern(operand, op == "max_length")
        return Found((regex_judge(path, where, pattern, negate=op == "max_length"),))
    if op == "equals":
        return Found(({"type": "equals", "expected": _strings(path, where, operand)[0]},))
    if op in FILE_EXISTS:
        return Found(({"type": "file-exists", "paths": _strings(path, where, operand)},))
    if op in FILE_TEXT:
        return Found(tuple(_file_text(path, where, op, operand)))
    if op == "judge":
        return Found(statements=tuple(_strings(path, where, operand)))
    if op in RUNS:
        return Found(
            dropped=(f"{where}: runs a command; no judge here runs an eval set's commands",)
        )
    return Found(dropped=(f"{where}: check {op!r} has no judge here; not carried over",))


def _labelled(found: Found, entry: Mapping[str, Any]) -> Found:
    label = next((entry[k] for k in LABEL_KEYS if is_text(entry.get(k))), None)
    if label is None:
        return found
    judges = tuple({**j, "x-name": str(label)} for j in found.judges)
    return Found(judges, found.statements, found.dropped)


def typed_check(path: Path, where: str, entry: Mapping[str, Any], kind_key: str) -> Found:
    """`{type | kind: OP, value | values | pattern | path ..., name, flags, case_sensitive}`."""
    kind = entry[kind_key]
    if not is_text(kind):
        raise bad(path, f"{where}.{kind_key}", "must be a non-empty string")
    op = op_name(kind)
    if op not in OPERATORS:
        return operator(path, where, op, None, [])
    flags, unknown = js_flags(path, f"{where}.flags", entry.get("flags"))
    if unknown:
        return Found(
            dropped=(f"{where}.flags: {unknown!r} has no equivalent here; not carried over",)
        )
    operand: Any = entry
    key = ""
    if op in FILE_EXISTS:
        key = next((k for k in ("paths", "path", "value", "values") if k in entry), "path")
        operand = entry.get(key)
    elif op not in FILE_TEXT:
        key = next((k for k in VALUE_KEYS if k in entry), "value")
        if key not in entry:
            raise bad(path, where, f"a {kind} check needs a `value` (or `pattern`)")
        operand = entry[key]
    found = operator(path, f"{where}.{key}" if key else where, op, operand, flags)
    if entry.get("case_sensitive") is True:
        found = Found(
            tuple(
                {**j, "case_sensitive": True} if "contains" in j["type"] else j
                for j in found.judges
            ),
            found.statements,
            found.dropped,
        )
    used = {kind_key, key, "flags", "case_sensitive", *LABEL_KEYS, "path", "needle", "pattern"}
    extra = tuple(f"{where}.{k}: no place in a task suite" for k in entry if k not in used)
    found = _labelled(found, entry)
    return Found(found.judges, found.statements, found.dropped + extra)


def check_block(path: Path, where: str, check: Any, entry: Mapping[str, Any]) -> Found:
    """An assertion's `check`: operators as keys (each a judge), a typed check, null (the
    statement alone, graded by a model), or a shell command (not run; the statement stays)."""
    text = next((entry[k] for k in ("text", "description") if is_text(entry.get(k))), None)
    statement = (str(text).strip(),) if text is not None else ()
    if check is None:
        return Found(statements=statement)
    if isinstance(check, str):
        dropped = f"{where}: a shell command; no judge here runs an eval set's commands"
        return Found(statements=statement, dropped=(dropped,))
    if not isinstance(check, Mapping):
        raise bad(path, where, "must be an object of checks, a command, or null")
    kind_key = next((k for k in KIND_KEYS if k in check), None)
    if kind_key is not None:
        found = typed_check(path, where, {**check, **({"text": text} if text else {})}, kind_key)
    else:
        parts = [operator(path, f"{where}.{op}", op_name(op), v, []) for op, v in check.items()]
        found = Found(
            tuple(j for p in parts for j in p.judges),
            tuple(s for p in parts for s in p.statements),
            tuple(d for p in parts for d in p.dropped),
        )
        found = _labelled(found, entry)
    if not found.judges and not found.statements:  # nothing runnable: grade the statement
        return Found(statements=statement, dropped=found.dropped)
    return found


__all__ = [
    "JS_FLAGS",
    "KIND_KEYS",
    "OPERATORS",
    "Found",
    "check_block",
    "js_flags",
    "length_pattern",
    "operator",
    "regex_judge",
    "typed_check",
]
