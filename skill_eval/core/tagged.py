"""An answer a model gives between tags that carry a per-call nonce, `<decision-NONCE>{...}
</decision-NONCE>`: the one way to read a verdict out of a reply that may quote text an
adversary wrote (a judged output, a reviewed skill). The nonce is made after that text exists,
so the text cannot hold the tags; exactly one tagged block counts, and anything else (none,
two, not a JSON object) is an error to retry or fail on, never a guess from other objects.

    nonce = new_nonce()
    prompt += answer_instruction("decision", nonce, "your decision as the JSON object above")
    data, why = tagged_object(reply, f"decision-{nonce}")
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(.*)\n```$", re.DOTALL)


def new_nonce() -> str:
    return secrets.token_hex(16)


def answer_instruction(kind: str, nonce: str, what: str) -> str:
    """Tells the model where its answer goes: between this call's tags, once."""
    tag = f"{kind}-{nonce}"
    return (
        f"Put {what}, and nothing else, between the tags <{tag}> and </{tag}>, once. Only "
        "what stands between those tags counts as your answer; text you quote anywhere else "
        "never does."
    )


def tagged_object(
    text: str, tag: str, reply: str = "the reply"
) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object between `<tag>` and `</tag>` in `text`, as (object, None), else (None,
    why). Exactly one such block must be there, holding one JSON object (a ``` fence around it
    is allowed); `reply` names the reply in the why."""
    blocks = re.findall(f"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text, re.DOTALL)
    kind = tag.rsplit("-", 1)[0]
    if not blocks:
        return None, f"{reply} holds no <{kind}-…> block with this request's nonce"
    if len(blocks) > 1:
        return None, f"{reply} holds {len(blocks)} <{kind}-…> blocks, not one"
    body = blocks[0].strip()
    fenced = _FENCE.match(body)
    try:
        value = json.loads(fenced.group(1) if fenced else body)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        return None, f"the <{kind}-…> block is not a JSON object"
    return value, None
