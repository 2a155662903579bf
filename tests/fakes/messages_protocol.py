"""The Anthropic Messages API as a fake `Protocol`: `/v1/messages` (JSON or SSE) and
`/v1/messages/count_tokens`, Anthropic's error shape, and its broken replies.

Bodies and events come from replies.py; usage from the server's prompt-cache meter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakes.faults import ERROR_REPLIES, Fault, error_body
from tests.fakes.handler import Protocol, RecordedRequest
from tests.fakes.replies import build_message, encode_event, sse_events
from tests.fakes.rules import Rule

if TYPE_CHECKING:
    from tests.fakes.handler import RequestHandler

MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
# The error type of each status the handler itself answers (not a fault).
_STATUS_TYPES = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}


class MessagesProtocol(Protocol):
    """POST /v1/messages."""

    name = "messages"
    path = MESSAGES

    def invalid(self, body: Any) -> str | None:
        if not isinstance(body, dict):
            return "request body must be a JSON object"
        if not isinstance(body.get("model"), str):
            return "model: Field required"
        if self.path == MESSAGES and not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: Field required (at least one message)"
        return None

    def error(self, status: int, kind: str, message: str) -> Any:
        error_type = ERROR_REPLIES[kind][1] if kind in ERROR_REPLIES else _STATUS_TYPES[status]
        return error_body(error_type, message)

    def fault_reply(self, fault: Fault) -> tuple[int, Any] | None:
        if fault.kind not in ERROR_REPLIES:
            return None
        status, error_type, text = ERROR_REPLIES[fault.kind]
        return status, error_body(error_type, fault.message or text)

    def reply(self, handler: RequestHandler, record: RecordedRequest, rule: Rule | None) -> None:
        message = build_message(record.json, rule, handler.fake.usage.measure(record.json))
        if not record.stream:
            handler.send_json(record, 200, message, handler.limit_headers)
            return
        frames = [encode_event(name, data) for name, data in sse_events(message)]
        handler.send_stream(record, frames, message)

    def broken(self, handler: RequestHandler, record: RecordedRequest, kind: str) -> None:
        body = record.json
        message = build_message(body, None, handler.fake.usage.measure(body)) if body else {}
        events = sse_events(message) if record.stream else []
        handler.send_broken(
            kind,
            record.stream,
            [encode_event(name, data) for name, data in events],
            keep=1 + next(i for i, (name, _) in enumerate(events) if name == "content_block_delta")
            if events
            else 0,
            full=message,
            bad_frame=b'event: content_block_delta\ndata: {"type": "content_block_del\n\n',
            cut_short=b'{"id": "msg_fake_malformed", "type": "message", "content": [{"type": "te',
        )


class CountTokensProtocol(MessagesProtocol):
    """POST /v1/messages/count_tokens: the same checks and faults, no rules."""

    path = COUNT_TOKENS
    uses_rules = False

    def reply(self, handler: RequestHandler, record: RecordedRequest, rule: Rule | None) -> None:
        counted = {"input_tokens": handler.fake.usage.input_tokens(record.json)}
        handler.send_json(record, 200, counted, handler.limit_headers)
