"""The `{cwd}`-style templates a scripted reply may use, filled from the request it answers.

`{cwd}` (the working directory the agent states), `{model}` (the requested model),
`{tool_result}` (the newest tool results' text), `{judgement_tag}` (the `judgement-NONCE`
a text judge was asked to answer in) and `{decision_tag}` (the `decision-NONCE` a review's
visionary was asked to answer in). Other braces pass through untouched, so code and JSON in
a scripted text need no escaping. The same for every protocol: they read a `Conversation`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.conversation import Conversation

TEMPLATE_NAMES = ("cwd", "model", "tool_result", "judgement_tag", "decision_tag")
_TEMPLATE = re.compile(r"\{(" + "|".join(TEMPLATE_NAMES) + r")\}")


class TemplateError(ValueError):
    """A reply uses a template the request cannot fill (e.g. `{cwd}` with no stated cwd)."""


def substitute(value: Any, conversation: Conversation, where: str = "reply") -> Any:
    """`value` with its templates filled from the request, in every string of nested lists
    and mappings (keys are left alone)."""
    if isinstance(value, str):
        if not _TEMPLATE.search(value):
            return value
        return _TEMPLATE.sub(lambda m: _variable(m.group(1), conversation, where), value)
    if isinstance(value, list):
        return [substitute(item, conversation, where) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, conversation, where) for key, item in value.items()}
    return value


def _variable(name: str, conversation: Conversation, where: str) -> str:
    if name == "cwd":
        cwd = conversation.working_directory()
        if cwd is None:
            raise TemplateError(
                f"{where} uses {{cwd}} but the request states no working directory "
                "(no 'Primary working directory: ...', 'Working directory: ...' or <cwd> line)"
            )
        return cwd
    if name == "model":
        return conversation.model or ""
    if name in ("judgement_tag", "decision_tag"):  # the tag the answer was asked to sit in
        kind = name.removesuffix("_tag")
        found = re.findall(rf"<({kind}-[0-9a-f]+)>", json.dumps(conversation.body))
        if not found:
            raise TemplateError(f"{where} uses {{{name}}} but the request names none")
        # A judge is told in its system prompt (first); a visionary at the prompt's end (last).
        return str(found[0] if kind == "judgement" else found[-1])
    return "\n".join(result.content for result in conversation.tool_results)
