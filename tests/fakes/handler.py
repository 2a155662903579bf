"""The HTTP request handler of the fake Anthropic server, and the record it keeps of a request.

Routes /v1/messages (JSON or SSE) and /v1/messages/count_tokens, answers any other path with
Anthropic's 404 error, and carries out injected faults at the socket level.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tests.fakes.batches import BATCHES
from tests.fakes.conversation import TemplateError, message_texts, system_text
from tests.fakes.faults import ERROR_REPLIES, Fault, error_body
from tests.fakes.replies import build_message, encode_event, sse_events
from tests.fakes.rules import Rule

if TYPE_CHECKING:
    from tests.fakes.anthropic_server import FakeAnthropic

REDACTED_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})
MESSAGES = "/v1/messages"
COUNT_TOKENS = "/v1/messages/count_tokens"
HELLO = (
    "/api/hello"  # the claude CLI's connectivity probe (HEAD), unless nonessential traffic is off
)


@dataclass
class RecordedRequest:
    """One request as the server saw it, and what it answered.

    `headers` keys are lower-case, with credential values replaced by "<redacted>"; `body` is
    the parsed JSON (None when absent or invalid, then `raw` holds the text); `status` is the
    HTTP status sent (None when the connection was dropped before any response); `fault` is
    the injected fault kind; `rule` names the rule that answered; `reply` is the JSON sent.
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    raw: str
    time: float
    index: int = -1
    status: int | None = None
    fault: str | None = None
    rule: str | None = None
    reply: Any = None
    replied_at: float | None = None

    @property
    def json(self) -> dict[str, Any]:
        """The body when it is a JSON object, else an empty dict."""
        return self.body if isinstance(self.body, dict) else {}

    @property
    def stream(self) -> bool:
        """Whether the request asked for SSE streaming."""
        return bool(self.json.get("stream"))

    @property
    def model(self) -> str | None:
        """The requested model."""
        model = self.json.get("model")
        return model if isinstance(model, str) else None

    @property
    def system(self) -> str:
        """The system prompt as one string."""
        return system_text(self.json)

    @property
    def messages_text(self) -> str:
        """All message text (tool results included), joined by newlines."""
        return "\n".join(message_texts(self.json))

    @property
    def text(self) -> str:
        """System prompt and message text together: what requests_matching() searches."""
        return self.system + "\n" + self.messages_text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the record."""
        data = asdict(self)
        data["stream"] = self.stream
        return data


def _redact(headers: Any) -> dict[str, str]:
    return {
        key.lower(): ("<redacted>" if key.lower() in REDACTED_HEADERS else value)
        for key, value in headers.items()
    }


def _invalid(path: str, body: Any) -> str | None:
    """Why a Messages (or count_tokens) body would be rejected by the real API, or None."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    if path == MESSAGES and not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: Field required (at least one message)"
    return None


class RequestHandler(BaseHTTPRequestHandler):
    """Serves one connection for the FakeAnthropic that owns `self.server`."""

    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1.0"
    # Headers and body go out in separate writes; with Nagle on, the second waits for the
    # client's delayed ACK (~40 ms per request).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the stdlib's per-request stderr line (use verbose=True instead)."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._handle()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_POST  # noqa: N815

    # -- plumbing ----------------------------------------------------------------------------

    @property
    def fake(self) -> FakeAnthropic:
        return self.server.fake  # type: ignore[attr-defined, no-any-return]

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _start(
        self,
        status: int,
        content_type: str,
        length: int | None,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("request-id", "req_fake_" + uuid.uuid4().hex[:24])
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
        else:
            self.send_header("Content-Length", str(length))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()

    def _send_json(
        self,
        record: RecordedRequest,
        status: int,
        payload: Any,
        extra: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        record.status, record.reply = status, payload
        self._start(status, "application/json", len(data), extra)
        if self.command != "HEAD":
            self.wfile.write(data)

    def _send_error(
        self,
        record: RecordedRequest,
        status: int,
        error_type: str,
        message: str,
        extra: dict[str, str] | None = None,
    ) -> None:
        self._send_json(record, status, error_body(error_type, message), extra)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _hang_up(self) -> None:
        """Close the socket now, whatever was or was not sent."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- dispatch ----------------------------------------------------------------------------

    def _handle(self) -> None:
        url = urlsplit(self.path)
        raw = self._read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = RecordedRequest(
            method=self.command,
            path=url.path,
            query=url.query,
            headers=_redact(self.headers),
            body=body,
            raw=raw.decode("utf-8", "replace") if body is None else "",
            time=time.time(),
        )
        number = self.fake._admit(record)
        try:
            self._dispatch(record, number)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            record.replied_at = time.time()
            self.fake._replied(record)

    def _dispatch(self, record: RecordedRequest, number: int) -> None:
        fake = self.fake
        path, post = record.path, record.method == "POST"
        if path == HELLO and record.method in ("GET", "HEAD"):
            self._send_json(record, 200, {})
            return
        if path == BATCHES or path.startswith(BATCHES + "/"):
            self._batches(record)
            return
        if not (post and path in (MESSAGES, COUNT_TOKENS)):
            self._send_error(record, 404, "not_found_error", f"Not found: {record.method} {path}")
            return
        limit_headers: dict[str, str] = {}
        if fake.bucket is not None and path == MESSAGES:
            wait, limit_headers = fake.bucket.take()
            if wait > 0:
                record.fault = "rate_limit"
                self._send_error(
                    record,
                    429,
                    "rate_limit_error",
                    "Number of requests has exceeded your rate limit",
                    limit_headers,
                )
                return
        self._limit_headers = limit_headers
        fault = fake._pick_fault(path, number)
        problem = _invalid(path, record.body)
        if fault is None and problem is not None:
            self._send_error(record, 400, "invalid_request_error", problem)
            return
        rule: Rule | None = None
        if fault is None and path == MESSAGES:
            rule = fake._pick_rule(path, record.body)
            if rule is not None:
                try:
                    rule = rule.reply_for(record.body)  # its step for this turn, templates filled
                except TemplateError as error:
                    record.rule = rule.name
                    self._send_error(record, 400, "invalid_request_error", f"fake: {error}")
                    return
            record.rule = rule.name if rule is not None else None
            if rule is not None and rule.fault is not None:
                fault = Fault(kind=rule.fault)
        latency = rule.latency if rule is not None and rule.latency is not None else fake.latency
        fake._sleep(latency)
        if fault is not None:
            record.fault = fault.kind
            self._fault(record, fault)
        elif path == COUNT_TOKENS:
            self._send_json(record, 200, {"input_tokens": fake.usage.input_tokens(record.body)})
        else:
            self._reply(record, rule)

    def _batches(self, record: RecordedRequest) -> None:
        """The Message Batches endpoints (batches.py); results go out as JSON lines."""
        status, payload = self.fake.batches.answer(record.method, record.path, record.body)
        if not isinstance(payload, str):
            self._send_json(record, status, payload)
            return
        data = payload.encode()
        record.status, record.reply = status, payload
        self._start(status, "application/binary", len(data))
        self.wfile.write(data)

    def _reply(self, record: RecordedRequest, rule: Rule | None) -> None:
        message = build_message(record.body, rule, self.fake.usage.measure(record.body))
        extra = getattr(self, "_limit_headers", None) or None
        if not record.stream:
            self._send_json(record, 200, message, extra)
            return
        record.status, record.reply = 200, message
        self._start(200, "text/event-stream; charset=utf-8", None, extra)
        for name, data in sse_events(message):
            self._chunk(encode_event(name, data))
        self._chunk(b"")

    def _fault(self, record: RecordedRequest, fault: Fault) -> None:
        kind = fault.kind
        if kind in ERROR_REPLIES:
            status, error_type, text = ERROR_REPLIES[kind]
            extra: dict[str, str] = {}
            retry_after = fault.retry_after
            if kind == "rate_limit" and retry_after is None:
                retry_after = 0  # the real API always tells a rate-limited client when to retry
            if retry_after is not None:
                extra["retry-after"] = f"{retry_after:g}"
            if fault.retry_after_ms is not None:
                extra["retry-after-ms"] = str(fault.retry_after_ms)
            self._send_error(record, status, error_type, fault.message or text, extra)
        elif kind == "drop_before_response":
            self._hang_up()
        else:
            self._broken_reply(record, kind)

    def _broken_reply(self, record: RecordedRequest, kind: str) -> None:
        """A 200 that is cut off (drop_mid_stream) or does not parse (malformed)."""
        body = record.json
        message = build_message(body, None, self.fake.usage.measure(body)) if body else {}
        events = sse_events(message) if record.stream else []
        record.status = 200
        if kind == "drop_mid_stream" and record.stream:
            cut = next(i for i, (name, _) in enumerate(events) if name == "content_block_delta")
            self._start(200, "text/event-stream; charset=utf-8", None)
            for name, data in events[: cut + 1]:
                self._chunk(encode_event(name, data))
            self._hang_up()
        elif kind == "drop_mid_stream":
            full = json.dumps(message).encode()
            self._start(200, "application/json", len(full))
            self.wfile.write(full[: len(full) // 2])
            self._hang_up()
        elif record.stream:  # malformed, streaming: one event whose data is not JSON
            self._start(200, "text/event-stream; charset=utf-8", None)
            self._chunk(encode_event(*events[0]))
            self._chunk(b'event: content_block_delta\ndata: {"type": "content_block_del\n\n')
            self._chunk(b"")
        else:  # malformed: a 200 whose JSON body is cut short
            cut_short = b'{"id": "msg_fake_malformed", "type": "message", "content": [{"type": "te'
            self._start(200, "application/json", len(cut_short))
            self.wfile.write(cut_short)
