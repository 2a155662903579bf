"""The pieces a dialect's request allow-list is made of (wire.py `ApiDialect.check`): fields
outside a set, a key anywhere in a body, a header's comma-separated values outside a set,
every object of a body walked with its path. Each returns a `Refusal` (tampering) or None.

    refused = outside(body, TOP_LEVEL, "the body") or anywhere(body, {"file_id"}) \
        or header_values(request.headers, "anthropic-beta", BETAS)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .wire import Refusal

MAX_DEPTH = 64  # deeper than any body a CLI sends: refused, never walked further


def outside(value: Any, allowed: frozenset[str], where: str) -> Refusal | None:
    """A refusal naming the first key of `value` (an object) not in `allowed`; one for
    `value` itself when it is not an object."""
    if not isinstance(value, Mapping):
        return Refusal(f"{where} is not an object")
    extra = sorted(str(k) for k in value if k not in allowed)
    if extra:
        return Refusal(f"{where} holds {extra[0][:80]!r}, which the agent's CLI never sends")
    return None


def one_of(value: Any, allowed: frozenset[str], where: str) -> Refusal | None:
    """A refusal when `value` is not one of `allowed` (a string)."""
    if isinstance(value, str) and value in allowed:
        return None
    return Refusal(f"{where} is {str(value)[:80]!r}, which the agent's CLI never sends")


class TooDeep(ValueError):
    """A body nested deeper than MAX_DEPTH."""


def anywhere(
    value: Any, keys: frozenset[str], skip: frozenset[str] = frozenset()
) -> Refusal | None:
    """A refusal naming the first object that holds one of `keys`, at any depth (a file
    reference by id, say), the objects under a key of `skip` aside (a tool's input schema,
    whose property names are the tool's own)."""
    try:
        for path, found in objects(value, skip):
            hit = next((k for k in found if k in keys), None)
            if hit is not None:
                return Refusal(f"{path or 'the body'} holds {hit!r}, which the jail never forwards")
    except TooDeep as exc:
        return Refusal(f"the body is nested deeper than {MAX_DEPTH} levels (at {str(exc)[:80]})")
    return None


def objects(
    value: Any, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every object in `value` with its path (`messages[2].content[0]`), those under a key
    of `skip` aside; raises TooDeep past MAX_DEPTH (walked with a stack: no recursion)."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TooDeep(path)
        if isinstance(item, Mapping):
            yield path, item
            for key, inner in item.items():
                if key not in skip and isinstance(inner, Mapping | list):
                    stack.append((f"{path}.{key}" if path else str(key), inner, depth + 1))
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, Mapping | list):
                    stack.append((f"{path}[{index}]", inner, depth + 1))


def header_values(headers: Mapping[str, str], name: str, allowed: frozenset[str]) -> Refusal | None:
    """A refusal naming the first comma-separated value of header `name` not in `allowed`
    (no header: nothing to refuse)."""
    for value in headers.get(name, "").split(","):
        value = value.strip()
        if value and value not in allowed:
            return Refusal(f"the {name} header names {value[:80]!r}, which the jail never forwards")
    return None


__all__ = ["MAX_DEPTH", "TooDeep", "anywhere", "header_values", "objects", "one_of", "outside"]
