"""What OpenAI's two protocols share in the fakes: the error shape (`{"error": {message, type,
param, code}}`, with 429 and 503/500 for the retryable kinds), the usage estimate, ids, and the
`data:` frame of a server-sent event. Chat Completions (chat_protocol.py) and Responses
(responses_protocol.py) subclass `OpenAIProtocol`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from tests.fakes.conversation import Conversation
from tests.fakes.faults import OPENAI_ERROR_REPLIES, Fault, openai_error_body
from tests.fakes.handler import Protocol
from tests.fakes.reply_plan import ReplyPlan, estimate_tokens

DEFAULT_TEXT = "Hello from the fake OpenAI server."
# The error type and code of each status the handler itself answers (not a fault).
_STATUS_ERRORS = {
    400: ("invalid_request_error", None),
    404: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}
# Why a turn stopped, in Chat Completions' words (a rule's own `stop_reason` passes as it is).
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


def fake_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def now() -> int:
    return int(time.time())


def data_frame(payload: Any, event: str | None = None) -> bytes:
    """One server-sent event: `event: NAME` (Responses) when given, then `data: JSON`."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def input_tokens(convo: Conversation) -> int:
    """The prompt's tokens, estimated over everything the model reads (≥ 1)."""
    return max(1, estimate_tokens(convo.request_text()))


def usage_numbers(plan: ReplyPlan, convo: Conversation) -> dict[str, int]:
    """input, output, cached and reasoning tokens of a reply, with the rule's overrides (any
    of `input_tokens`, `output_tokens`, `cached_tokens`, `reasoning_tokens`)."""
    numbers = {
        "input_tokens": input_tokens(convo),
        "output_tokens": plan.output_tokens,
        "cached_tokens": 0,
        "reasoning_tokens": 0,
    }
    numbers.update({k: int(v) for k, v in plan.usage.items() if k in numbers})
    return numbers


class OpenAIProtocol(Protocol):
    """The error replies of both OpenAI protocols."""

    def error(self, status: int, kind: str, message: str) -> Any:
        if kind in OPENAI_ERROR_REPLIES:
            _status, error_type, code, _text = OPENAI_ERROR_REPLIES[kind]
        else:
            error_type, code = _STATUS_ERRORS[status]
        return openai_error_body(error_type, message, code)

    def fault_reply(self, fault: Fault) -> tuple[int, Any] | None:
        if fault.kind not in OPENAI_ERROR_REPLIES:
            return None
        status, error_type, code, text = OPENAI_ERROR_REPLIES[fault.kind]
        return status, openai_error_body(error_type, fault.message or text, code)

    def check(self, body: Any, field: str, kinds: tuple[type, ...]) -> str | None:
        """Why `body` would get a 400 for `model` or `field`, or None."""
        if not isinstance(body, Mapping):
            return "request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return "you must provide a model parameter"
        value = body.get(field)
        if not isinstance(value, kinds) or not value:
            return f"Missing required parameter: '{field}'."
        return None
