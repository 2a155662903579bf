"""JSON-Schema errors as located problems, in one wording for every schema skill-eval reads
(task suites, judge and executor configs, evaluator frontmatter, ranking and evaluation files).

Each problem names its field (`tasks[2].judge.expected`) and says what the value must be, on
one line. Everything is read from the error's attributes (`validator`, `validator_value`,
`absolute_path`), never parsed back out of jsonschema's English. A schema node may carry an
`errorMessage` (ignored by JSON Schema itself) that replaces the derived wording.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import Problem

if TYPE_CHECKING:
    from jsonschema import ValidationError

# A value path (keys and list indices) -> the 1-based line it starts on (see safeyaml).
LineMap = Mapping[tuple[str | int, ...], int]

_EXPECTED = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "object": "a mapping",
    "array": "a list",
    "boolean": "true or false",
    "null": "null",
}
_SHOWN_VALUE_CHARS = 40
_MESSAGE_CHARS = 200


def field_name(parts: Iterable[str | int], prefix: str = "") -> str:
    """`("tasks", 2, "judge")` -> `tasks[2].judge`, after `prefix` when one is given."""
    out = prefix
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def join_field(prefix: str, suffix: str) -> str:
    """`judge` + `expected` -> `judge.expected`; `judges` + `[0]` -> `judges[0]`."""
    if not suffix or not prefix:
        return prefix or suffix
    return prefix + suffix if suffix.startswith("[") else f"{prefix}.{suffix}"


def closest_name(name: str, choices: Iterable[str]) -> str | None:
    """The choice `name` was most likely a typo of (`contians` -> `contains`), or None."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """` (did you mean 'contains'?)` for a typo of one of `choices`; empty otherwise. Every
    unknown name (judge types, executors, keys, config keys, task ids) is hinted the same way."""
    close = closest_name(name, choices)
    return f" (did you mean {close!r}?)" if close is not None else ""


def kind_of(value: Any) -> str:
    """What a value is, in the words messages use: `a string '3'`, `an integer 1`, `null`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean {'true' if value else 'false'}"
    names = {int: "an integer", float: "a number", str: "a string"}
    for kind, name in names.items():
        if isinstance(value, kind):
            shown = repr(value)
            if len(shown) > _SHOWN_VALUE_CHARS:
                shown = shown[: _SHOWN_VALUE_CHARS - 3] + "..."
            return f"{name} {shown}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def schema_problems(
    instance: Any,
    schema: Mapping[str, Any] | bool,
    *,
    path: str | None = None,
    prefix: str = "",
    lines: LineMap | None = None,
) -> list[Problem]:
    """Every way `instance` does not match `schema`, one Problem per field and message,
    sorted by field. `path` names the file in each problem; `prefix` goes before every field
    (`judge` -> `judge.expected`); `lines`, keyed by paths inside `instance`, gives each
    problem the line of its field or of the nearest enclosing one."""
    from jsonschema import Draft202012Validator  # ~60 ms of import: only once a check runs

    found: dict[tuple[str, str], Problem] = {}
    for err in Draft202012Validator(schema).iter_errors(instance):
        for parts, message in _explain(err):
            where = field_name(parts, prefix)
            line = _line_of(parts, lines) if lines is not None else None
            found.setdefault((where, message), Problem(path or "", message, line=line, field=where))
    return [found[key] for key in sorted(found)]


def _line_of(parts: Sequence[str | int], lines: LineMap) -> int | None:
    at = tuple(parts)
    while at not in lines and at:
        at = at[:-1]
    return lines.get(at)


def _explain(err: ValidationError) -> list[tuple[tuple[str | int, ...], str]]:
    """(value path, message) pairs for one error: a missing key and an unknown key are
    reported at that key, everything else at the value."""
    at = tuple(err.absolute_path)
    kind, expected, value = err.validator, err.validator_value, err.instance
    if kind == "required" and isinstance(value, Mapping) and isinstance(expected, list):
        # `value` in place of `expected`: said once, at `value` (see _unknown_keys)
        aliased = {v for k, v in _aliases(err.schema).items() if k in value}
        return [
            ((*at, str(key)), "is required")
            for key in expected
            if key not in value and key not in aliased
        ]
    if kind == "additionalProperties" and isinstance(value, Mapping):
        return _unknown_keys(at, value, err.schema)
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    custom = schema.get("errorMessage")
    if isinstance(custom, str):
        return [(at, custom)]
    if kind in ("anyOf", "oneOf") and err.context:
        # the branch meant for this kind of value says best what is wrong with it
        from jsonschema.exceptions import best_match

        best = best_match([err])
        if best is not err:
            return _explain(best)
    return [(at, _message(str(kind), expected, value, err.message))]


def _unknown_keys(
    at: tuple[str | int, ...], value: Mapping[str, Any], schema: Any
) -> list[tuple[tuple[str | int, ...], str]]:
    """One problem per key the schema does not allow, with the closest allowed key: the one
    its `didYouMean` names for a key other tools use (promptfoo's `value`), else a typo's."""
    schema = schema if isinstance(schema, Mapping) else {}
    allowed = [str(k) for k in schema.get("properties") or {}]
    patterns = list(schema.get("patternProperties") or {})
    aliases = _aliases(schema)
    out: list[tuple[tuple[str | int, ...], str]] = []
    for key in value:
        if key in allowed or any(re.search(p, str(key)) for p in patterns):
            continue
        alias = aliases.get(key)
        hint = f" (did you mean {alias!r}?)" if alias else did_you_mean(str(key), allowed)
        message = f"unknown key {key!r}{hint}"
        if allowed:
            message += f"; allowed: {', '.join(allowed)}"
        out.append(((*at, str(key)), message))
    return out


def _aliases(schema: Any) -> Mapping[str, str]:
    """A schema's `didYouMean`: {a key other tools use: the key it means here}."""
    found = schema.get("didYouMean") if isinstance(schema, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _message(kind: str, expected: Any, value: Any, fallback: str) -> str:
    """What the value must be, from the failed keyword and its argument."""
    if kind == "type":
        names = [expected] if isinstance(expected, str) else list(expected)
        return f"must be {' or '.join(_EXPECTED.get(n, n) for n in names)}, got {kind_of(value)}"
    if kind in ("minLength", "pattern") and (expected == 1 or expected == r"\S"):
        return "must be a non-empty string"
    if kind == "minItems" and expected == 1:
        return "must be a non-empty list"
    simple = {
        "minLength": f"must be at least {expected} characters long",
        "maxLength": f"must be at most {expected} characters long",
        "minItems": f"must have at least {expected} items",
        "maxItems": f"must have at most {expected} items",
        "minimum": f"must be at least {expected}",
        "maximum": f"must be at most {expected}",
        "exclusiveMinimum": f"must be greater than {expected}",
        "exclusiveMaximum": f"must be less than {expected}",
        "pattern": f"must match the pattern {expected!r}",
        "uniqueItems": "must not repeat an item",
        "const": f"must be {expected!r}",
    }
    if kind in simple:
        return simple[kind]
    if kind == "enum" and isinstance(expected, list):
        return f"must be one of {', '.join(map(repr, expected))}, got {kind_of(value)}"
    # A keyword without a wording of ours: jsonschema's, kept on one line and short.
    line = " ".join(fallback.split())
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 3] + "..."


__all__ = [
    "LineMap",
    "closest_name",
    "did_you_mean",
    "field_name",
    "join_field",
    "kind_of",
    "schema_problems",
]
