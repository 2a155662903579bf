"""What the OpenAI-style wire formats the agent CLIs speak share, for the jail's forward
(jail/wire.py): the agent reaches `http://127.0.0.1:FORWARD_PORT/v1` with `Authorization:
Bearer <placeholder>`, which becomes the real key (none: the placeholder goes on, for a local
server); the upstream's base URL ends where `/chat/completions` or `/responses` follows
(`https://api.openai.com/v1`), so `/v1` comes off each route. And a reply's usage as both
APIs state it (`prompt_tokens` / `input_tokens` counting the cached ones).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...jail.model_replies import tokens
from ...jail.request_rules import outside
from ...jail.wire import ApiDialect, Refusal, ReplyUsage


class OpenAiDialect(ApiDialect):
    """The base of Chat Completions and Responses as an agent CLI speaks them."""

    strip = "/v1"
    placeholder_prefix = "sk-jail-"
    credential_headers = frozenset({"authorization", "api-key"})

    def credentials(self, key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"} if key else {}


def usage_of(model: Any, usage: Any, input_key: str, output_key: str) -> ReplyUsage | None:
    """A reply's usage from its `usage` object: input without the cached tokens (its
    `*_tokens_details.cached_tokens`), output with the reasoning ones."""
    if not isinstance(usage, Mapping):
        return ReplyUsage(model) if isinstance(model, str) else None
    total = tokens(usage.get(input_key))
    details = usage.get(f"{input_key}_details")
    cached = tokens(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    return ReplyUsage(
        model if isinstance(model, str) else None,
        input_tokens=total - min(cached, total),
        output_tokens=tokens(usage.get(output_key)),
        cache_read_input_tokens=min(cached, total),
    )


def each(items: Any, keys: frozenset[str], where: str) -> Refusal | None:
    """A refusal for the first item of list `items` with a key outside `keys` (or not a
    list, or an item not an object)."""
    if not isinstance(items, list):
        return Refusal(f"{where} is not a list")
    for index, item in enumerate(items):
        problem = outside(item, keys, f"{where}[{index}]")
        if problem is not None:
            return problem
    return None


__all__ = ["OpenAiDialect", "each", "usage_of"]
