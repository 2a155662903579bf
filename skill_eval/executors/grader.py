"""The grader seam: how a model-graded judge asks a model for one JSON object.

`Grader.complete(GradeRequest) -> Reply` never raises. Each executor that can grade builds
its grader from its own config (`ExecutorSpec.grader`), next to its executor: `anthropic`
(SDK, forced tool call), `claude-cli` (the CLI, isolated like an attempt, JSON pulled out of
the reply text) and `mock` (a fixed, well-formed answer; it records what it was asked).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..model import Usage

DEFAULT_TIMEOUT = 120.0
SDK_MAX_RETRIES = 4


@dataclass(frozen=True)
class GradeRequest:
    """One judgement to make: the system prompt, the user message, the JSON Schema of the
    object wanted, the tool name the model is asked to call with it, and the model."""

    system: str
    prompt: str
    schema: Mapping[str, Any]
    tool_name: str
    model: str
    max_tokens: int = 1024
    temperature: float = 0.0

    def required(self) -> list[str]:
        required = self.schema.get("required")
        return [str(k) for k in required] if isinstance(required, list) else []

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "prompt": self.prompt, "schema": dict(self.schema),
                "tool_name": self.tool_name, "model": self.model,
                "max_tokens": self.max_tokens, "temperature": self.temperature}


@dataclass(frozen=True)
class Reply:
    """A model's structured reply. `data` is the JSON object it gave (not validated against the
    schema: callers check the fields they need); `error` is set when there is no usable reply,
    and `transient` then says whether asking again may help (timeouts, 429, 5xx, dropped
    connections, a reply with no JSON) or not (no key, no CLI, 401/403/404, a bad backend)."""

    data: dict[str, Any] | None
    raw_text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    error: str | None = None
    transient: bool = True


class Grader(Protocol):
    name: str

    def complete(self, request: GradeRequest) -> Reply: ...


@dataclass(frozen=True)
class GraderSettings:
    """Settings of a grader that are not its executor's: the per-call timeout, the SDK's own
    retries (a judgement is not retried by the runner), and where the mock grader records
    the requests it receives (one JSON line each; None: kept in memory only)."""

    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = SDK_MAX_RETRIES
    record: Path | None = None


def extract_json_object(text: str, required: Sequence[str] = ()) -> dict[str, Any] | None:
    """The JSON object a model's reply text gives: the whole text when it is one; otherwise the
    last object in it, fenced or in prose, that has every `required` key (else the last object
    at all). Last, because a judge that quotes the judged output (`the output says {"score":
    1.0}`) gives its own verdict after the quote. None when the text holds no object."""
    try:
        value = json.loads(text.strip())
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return value
    objects = _objects_in(text)
    complete = [o for o in objects if all(key in o for key in required)]
    candidates = complete or objects
    return candidates[-1] if candidates else None


def _objects_in(text: str) -> list[dict[str, Any]]:
    """Every outermost JSON object in `text`, in order (an object inside another is part of
    it, not a candidate of its own)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    at = text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        at = text.find("{", end)
    return found
