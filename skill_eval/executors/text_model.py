"""The text-model seam: how review roles and the improver ask a model for one free-text reply.

`TextModel.complete(TextRequest) -> TextReply` is the third way an executor serves a model,
beside `Executor.run` (attempts) and `Grader.complete` (judgements). Each executor that can
answer in text builds its text model from its own config (`ExecutorSpec.text_model`), next to
its grader: `anthropic` (one Messages API call) and `claude-cli` (one isolated `claude -p`).
`executors.base.create_text_model(name, ...)` resolves one through the executor registry, so a
plugin executor that offers a text model serves review and improve too.

Unlike a grader, a text model raises: a stage with no reply cannot go on, so TextModelError
(an ExecutorError: exit 3) names who asked (`request.label`) and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..core.model import Usage
from ..errors import ExecutorError

DEFAULT_MAX_TOKENS = 16_000  # a review builder's reply holds a whole suite
DEFAULT_TIMEOUT = 600.0


class TextModelError(ExecutorError):
    """A text model that gave no usable reply (no key, no CLI, an API failure, a timeout, no
    scripted reply left)."""


@dataclass(frozen=True)
class TextRequest:
    """One reply to ask for: the system prompt, the user message, the model, the reply's
    length bound, and who asks (a review role, `improver`: named in errors)."""

    system: str
    prompt: str
    model: str
    max_tokens: int = DEFAULT_MAX_TOKENS
    label: str = "model"


@dataclass(frozen=True)
class TextReply:
    """A model's text reply, what it cost (`usage`) and the model that answered."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class TextModel(Protocol):
    def complete(self, request: TextRequest) -> TextReply: ...


@dataclass(frozen=True)
class TextModelSettings:
    """Settings of a text model that are not its executor's: the per-call timeout, and the
    retries of the model's own client (None: that client's default; a reply is not retried
    by a runner)."""

    timeout: float = DEFAULT_TIMEOUT
    sdk_retries: int | None = None


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "TextModel",
    "TextModelError",
    "TextModelSettings",
    "TextReply",
    "TextRequest",
]
