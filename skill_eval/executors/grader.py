"""The grader seam: how a model-graded judge asks a model for one JSON object.

`Grader.complete(GradeRequest) -> Reply` never raises. Each executor that can grade builds
its grader from its own config (`ExecutorSpec.grader`), next to its executor: `anthropic`
(SDK, forced tool call), `claude-cli` (the CLI, isolated like an attempt) and `mock` (a fixed,
well-formed answer; it records what it was asked). A judgement given as text counts only
inside `<judgement-NONCE>` tags with the request's own nonce (`answer_format`,
`extract_judgement`): an object the judge quotes from the judged output is never its verdict.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..core.model import Usage
from ..core.tagged import tagged_object

if TYPE_CHECKING:
    from .batches import BatchLog

DEFAULT_TIMEOUT = 120.0
SDK_MAX_RETRIES = 4


@dataclass(frozen=True)
class GradeRequest:
    """One judgement to make: the system prompt, the user message, the JSON Schema of the
    object wanted, the tool name the model is asked to call with it, the model, and the nonce
    of the tags a text answer must sit in (left out of `to_dict`: recordings stay stable)."""

    system: str
    prompt: str
    schema: Mapping[str, Any]
    tool_name: str
    model: str
    max_tokens: int = 1024
    temperature: float = 0.0
    # Fresh per request, after the judged output exists: the output cannot contain it.
    nonce: str = field(default_factory=lambda: secrets.token_hex(16))

    def required(self) -> list[str]:
        required = self.schema.get("required")
        return [str(k) for k in required] if isinstance(required, list) else []

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "prompt": self.prompt,
            "schema": dict(self.schema),
            "tool_name": self.tool_name,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }


@dataclass(frozen=True)
class Reply:
    """A model's structured reply. `data` is the JSON object it gave (not validated against the
    schema: callers check the fields they need); `error` is set when there is no usable reply,
    and `transient` then says whether asking again may help (timeouts, 429, 5xx, dropped
    connections, a reply with no JSON) or not (no key, no CLI, 401/403/404, a bad backend).
    `scripted`: no model gave it (the mock grader's fixed answer), which a verdict built from
    it says wherever it is shown."""

    data: dict[str, Any] | None
    raw_text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    error: str | None = None
    transient: bool = True
    batch: bool = False  # answered from a Message Batch (billed at the batch discount)
    scripted: bool = False


class Grader(Protocol):
    # The registry name of the executor it grades for (`anthropic`, `claude-cli`, `mock`):
    # a judge context rebuilt in another process (judges.base.JudgeSettings) finds it by it.
    name: str

    def complete(self, request: GradeRequest) -> Reply: ...


# Judges wrap the judged output in tags named by a fresh random token (secrets.token_hex:
# 32 hex digits in llm-rubric, 16 in rubric) each time they build a prompt: the same
# judgement asked twice differs only there. (A long hex run in an output is masked alike.)
_TOKEN = re.compile(r"[0-9a-f]{16,}")


def grade_key(request: GradeRequest) -> str:
    """A judgement's custom_id: the same judgement (its random tokens aside) gets the same id,
    in the recording pass and when the judge asks again."""
    text = _TOKEN.sub("*", json.dumps(request.to_dict(), sort_keys=True, default=str))
    return "j" + hashlib.sha256(text.encode()).hexdigest()[:40]


@runtime_checkable
class BatchGrading(Protocol):
    """A grader that can answer recorded judgements from one batch."""

    name: str

    def complete(self, request: GradeRequest) -> Reply: ...

    def batched(self, requests: Mapping[str, GradeRequest], log: BatchLog) -> Grader:
        """A grader answering `requests` (by `grade_key`) from a batch sent now, and any
        other request as this one does."""
        ...


@dataclass(frozen=True)
class GraderSettings:
    """Settings of a grader that are not its executor's: the per-call timeout, the SDK's own
    retries (a judgement is not retried by the runner), and where the mock grader records
    the requests it receives (one JSON line each; None: kept in memory only)."""

    timeout: float = DEFAULT_TIMEOUT
    sdk_retries: int = SDK_MAX_RETRIES
    record: Path | None = None


def answer_format(request: GradeRequest) -> str:
    """What a text-only judge is told about the form of its answer: the JSON object, matching
    the schema, between this request's tags."""
    tag = f"judgement-{request.nonce}"
    return (
        f"Give your judgement as the JSON object you would pass to {request.tool_name}, "
        "matching this JSON Schema:\n"
        f"{json.dumps(dict(request.schema), sort_keys=True)}\n"
        f"Put that object, and nothing else, between the tags <{tag}> and </{tag}>, once. "
        "Only what stands between those tags counts as your judgement."
    )


def extract_judgement(text: str, nonce: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object between `<judgement-NONCE>` tags in a reply, as (object, None), else
    (None, why): core.tagged's one reading of a tagged answer."""
    return tagged_object(text, f"judgement-{nonce}", reply="judge reply")


def extract_json_object(text: str, required: Sequence[str] = ()) -> dict[str, Any] | None:
    """Not for judgements (see `extract_judgement`): the JSON object a reply text gives, the
    whole text when it is one, else the last object in it (fenced or in prose) that has every
    `required` key, else the last object at all. None when the text holds no object."""
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
