"""A quick yes for valid documents, so the common case never imports jsonschema (~60 ms of
start-up that `skill-eval validate` and `run` would otherwise pay before doing anything).

`quick_valid` understands the JSON Schema keywords skill-eval's own schemas use and answers
True (surely valid), False (surely invalid) or None (a keyword or value it does not know).
Only True is acted on: anything else goes to jsonschema, which finds and words the problems
(see core/validation.py). So this module may be stricter than JSON Schema, never looser.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

Tri = bool | None

# Keywords that never make a document invalid (annotations, and `format`, which
# Draft202012Validator checks only when given a format checker: schema_problems gives none).
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "errorMessage",
        "format",
        "readOnly",
        "writeOnly",
        "deprecated",
    }
)
_JSON_SCALARS = (str, int, float, bool, type(None))


def quick_valid(instance: Any, schema: Mapping[str, Any] | bool) -> Tri:
    """Whether `instance` matches `schema` (JSON Schema 2020-12), or None when unsure."""
    return _check(instance, schema, schema)


@lru_cache(maxsize=256)
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _all(results: Any) -> Tri:
    """False if any is False, else None if any is None, else True."""
    unsure = False
    for result in results:
        if result is False:
            return False
        if result is None:
            unsure = True
    return None if unsure else True


def _is_type(value: Any, name: str) -> Tri:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return name == "number" or isinstance(value, int) or float(value).is_integer()
    return None


def _same(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema sees it: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(a == b)


def _resolve(ref: Any, root: Any) -> Any:
    """A local `#/...` reference inside the root schema, or None."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _check(value: Any, schema: Any, root: Any) -> Tri:
    if schema is True or schema is False:
        return schema
    if not isinstance(schema, Mapping):
        return None
    if not isinstance(value, _JSON_SCALARS + (dict, list)):
        return None
    results: list[Tri] = []
    for key, arg in schema.items():
        if key in _ANNOTATIONS:
            continue
        checker = _KEYWORDS.get(key)
        if checker is None:
            return None
        result = checker(value, arg, schema, root)
        if result is False:
            return False
        results.append(result)
    return _all(results)


def _type(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    names = [arg] if isinstance(arg, str) else arg
    if not isinstance(names, list):
        return None
    found = [_is_type(value, name) for name in names]
    if True in found:
        return True
    return None if None in found else False


def _properties(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    if not isinstance(value, dict):
        return True
    return _all(_check(value[k], sub, root) for k, sub in arg.items() if k in value)


def _pattern_properties(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    if not isinstance(value, dict):
        return True
    return _all(
        _check(v, sub, root)
        for pattern, sub in arg.items()
        for k, v in value.items()
        if _pattern(pattern).search(k)
    )


def _additional(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    if not isinstance(value, dict):
        return True
    named = schema.get("properties") or {}
    patterns = [_pattern(p) for p in schema.get("patternProperties") or {}]
    extra = [k for k in value if k not in named and not any(p.search(k) for p in patterns)]
    return _all(_check(value[k], arg, root) for k in extra)


def _property_names(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return True if not isinstance(value, dict) else _all(_check(k, arg, root) for k in value)


def _required(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return True if not isinstance(value, dict) else all(k in value for k in arg)


def _items(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    if not isinstance(value, list):
        return True
    if isinstance(arg, list) or "prefixItems" in schema:
        return None
    return _all(_check(item, arg, root) for item in value)


def _unique(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    if not isinstance(value, list) or arg is not True:
        return True
    if all(isinstance(item, str) for item in value):
        return len(set(value)) == len(value)
    return None  # mixed kinds: jsonschema's own equality decides


def _sized(kinds: type | tuple[type, ...], limit: str) -> Any:
    def check(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
        if not isinstance(value, kinds) or isinstance(value, bool):
            return True
        size = len(value) if isinstance(value, str | list) else value
        if limit == "min":
            return bool(size >= arg)
        if limit == "max":
            return bool(size <= arg)
        if limit == "xmin":
            return bool(size > arg)
        return bool(size < arg)

    return check


def _string_pattern(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return True if not isinstance(value, str) else _pattern(arg).search(value) is not None


def _const(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return _same(value, arg)


def _enum(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return any(_same(value, option) for option in arg)


def _ref(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    target = _resolve(arg, root)
    return None if target is None else _check(value, target, root)


def _one_of(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    found = [_check(value, sub, root) for sub in arg]
    return None if None in found else found.count(True) == 1


def _any_of(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    found = [_check(value, sub, root) for sub in arg]
    if True in found:
        return True
    return None if None in found else False


def _all_of(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return _all(_check(value, sub, root) for sub in arg)


def _not(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    found = _check(value, arg, root)
    return None if found is None else not found


def _if(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    """if/then/else: the branch `if` selects must hold (an absent branch holds)."""
    chosen = _check(value, arg, root)
    if chosen is None:
        return None
    branch = schema.get("then" if chosen else "else", True)
    return _check(value, branch, root)


def _branch(value: Any, arg: Any, schema: Any, root: Any) -> Tri:
    return True  # then/else are checked by `if`; without an `if` they mean nothing


_NUMBER = (int, float)
_KEYWORDS: dict[str, Any] = {
    "type": _type,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional,
    "propertyNames": _property_names,
    "required": _required,
    "items": _items,
    "uniqueItems": _unique,
    "minLength": _sized(str, "min"),
    "maxLength": _sized(str, "max"),
    "minItems": _sized(list, "min"),
    "maxItems": _sized(list, "max"),
    "minimum": _sized(_NUMBER, "min"),
    "maximum": _sized(_NUMBER, "max"),
    "exclusiveMinimum": _sized(_NUMBER, "xmin"),
    "exclusiveMaximum": _sized(_NUMBER, "xmax"),
    "pattern": _string_pattern,
    "const": _const,
    "enum": _enum,
    "$ref": _ref,
    "oneOf": _one_of,
    "anyOf": _any_of,
    "allOf": _all_of,
    "not": _not,
    "if": _if,
    "then": _branch,
    "else": _branch,
}

__all__ = ["quick_valid"]
