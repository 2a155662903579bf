"""The pieces a dialect's request allow-list is made of (wire.py `ApiDialect.check`): fields
outside a set, a value outside a set, a header's comma-separated values outside a set. Each
returns a `Refusal` (tampering) or None.

    refused = outside(body, TOP_LEVEL, "the body") or one_of(body.get("store"), ...) \
        or header_values(request.headers, "anthropic-beta", BETAS)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .wire import Refusal


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


def header_values(headers: Mapping[str, str], name: str, allowed: frozenset[str]) -> Refusal | None:
    """A refusal naming the first comma-separated value of header `name` not in `allowed`
    (no header: nothing to refuse)."""
    for value in headers.get(name, "").split(","):
        value = value.strip()
        if value and value not in allowed:
            return Refusal(f"the {name} header names {value[:80]!r}, which the jail never forwards")
    return None


__all__ = ["header_values", "one_of", "outside"]
