"""The HTTP request handler every fake model server shares, the `Protocol` seam each API plugs
into, and the record kept of a request.

A request to a protocol's endpoint goes through the same steps whatever the API: record it,
pick a fault (the first that triggers), check the body, pick a rule and fill its templates,
wait the latency, then let the protocol answer (its JSON or stream, its error shape, its broken
replies). Other paths go to the server (`serve_other`), else a 404 in the server's error shape.
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

from tests.fakes.conversation import READERS, Conversation
from tests.fakes.faults import Fault
from tests.fakes.rules import Rule
from tests.fakes.templates import TemplateError

if TYPE_CHECKING:
    from tests.fakes.server import FakeServer

REDACTED_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})


@dataclass
class RecordedRequest:
    """One request as the server saw it, and what it answered.

    `headers` keys are lower-case, with credential values replaced by "<redacted>"; `body` is
    the parsed JSON (None when absent or invalid, then `raw` holds the text); `protocol` the
    API that served it (`messages`, `chat`, `responses`; None: another path); `status` is the
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
    protocol: str | None = None

    @property
    def json(self) -> dict[str, Any]:
        """The body when it is a JSON object, else an empty dict."""
        return self.body if isinstance(self.body, dict) else {}

    @property
    def conversation(self) -> Conversation:
        """The body read as a conversation by its protocol's reader (Messages by default)."""
        return READERS[self.protocol or "messages"](self.json)

    @property
    def stream(self) -> bool:
        """Whether the request asked for streaming."""
        return bool(self.json.get("stream"))

    @property
    def model(self) -> str | None:
        """The requested model."""
        model = self.json.get("model")
        return model if isinstance(model, str) else None

    @property
    def system(self) -> str:
        """The system prompt (system/developer instructions) as one string."""
        return self.conversation.system

    @property
    def messages_text(self) -> str:
        """All message text (tool calls and results included), joined by newlines."""
        return self.conversation.messages_text

    @property
    def text(self) -> str:
        """System prompt and message text together: what requests_matching() searches."""
        return self.system + "\n" + self.messages_text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the record."""
        data = asdict(self)
        data["stream"] = self.stream
        return data


class Protocol:
    """One API served by a fake: its endpoint `path`, how a body reads as a conversation, what
    the real API refuses, its error shape, and its replies. `uses_rules` False: the rules are
    not consulted (count_tokens)."""

    name = "messages"
    path = "/v1/messages"
    uses_rules = True

    def read(self, body: Any) -> Conversation:
        return READERS[self.name](body if isinstance(body, dict) else {})

    def invalid(self, body: Any) -> str | None:
        """Why the real API would answer 400 to `body`, or None."""
        return None

    def error(self, status: int, kind: str, message: str) -> Any:
        """The error body for an HTTP `status` (`kind`: a fault kind, or `invalid`, `not_found`
        ...)."""
        raise NotImplementedError

    def fault_reply(self, fault: Fault) -> tuple[int, Any] | None:
        """(status, error body) for an error fault; None for the socket-level kinds."""
        raise NotImplementedError

    def reply(self, handler: RequestHandler, record: RecordedRequest, rule: Rule | None) -> None:
        """Send the rule's reply (None: the built-in default), as JSON or a stream."""
        raise NotImplementedError

    def broken(self, handler: RequestHandler, record: RecordedRequest, kind: str) -> None:
        """Send a 200 that is cut off (`drop_mid_stream`) or does not parse (`malformed`)."""
        raise NotImplementedError


def _redact(headers: Any) -> dict[str, str]:
    return {
        key.lower(): ("<redacted>" if key.lower() in REDACTED_HEADERS else value)
        for key, value in headers.items()
    }


class RequestHandler(BaseHTTPRequestHandler):
    """Serves one connection for the fake server that owns `self.server`."""

    protocol_version = "HTTP/1.1"
    server_version = "fake-model-api/1.0"
    # Headers and body go out in separate writes; with Nagle on, the second waits for the
    # client's delayed ACK (~40 ms per request).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the stdlib's per-request stderr line (use verbose=True instead)."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._handle()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_POST  # noqa: N815

    # -- plumbing the protocols use ----------------------------------------------------------

    @property
    def fake(self) -> FakeServer:
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

    def start(
        self,
        status: int,
        content_type: str,
        length: int | None,
        extra: dict[str, str] | None = None,
    ) -> None:
        """Send the status line and headers; `length` None: a chunked body follows."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name in self.fake.request_id_headers:
            self.send_header(name, "req_fake_" + uuid.uuid4().hex[:24])
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
        else:
            self.send_header("Content-Length", str(length))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()

    def send_json(
        self,
        record: RecordedRequest,
        status: int,
        payload: Any,
        extra: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        record.status, record.reply = status, payload
        self.start(status, "application/json", len(data), extra)
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_stream(self, record: RecordedRequest, frames: list[bytes], reply: Any) -> None:
        """A 200 `text/event-stream` of these SSE frames, chunked, then the end."""
        record.status, record.reply = 200, reply
        self.start(200, "text/event-stream; charset=utf-8", None, self.limit_headers)
        for frame in frames:
            self.chunk(frame)
        self.chunk(b"")

    def chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def send_broken(
        self,
        kind: str,
        stream: bool,
        frames: list[bytes],
        *,
        keep: int,
        full: Any,
        bad_frame: bytes,
        cut_short: bytes,
    ) -> None:
        """A 200 that breaks. `drop_mid_stream`: the first `keep` frames of the stream (else
        half of the JSON body `full`, though Content-Length promises all), then the socket
        closes. `malformed`: the first frame, then `bad_frame` whose data is not JSON (else
        the JSON body `cut_short`)."""
        if kind == "drop_mid_stream" and stream:
            self.start(200, "text/event-stream; charset=utf-8", None)
            for frame in frames[:keep]:
                self.chunk(frame)
            self.hang_up()
        elif kind == "drop_mid_stream":
            data = json.dumps(full).encode()
            self.start(200, "application/json", len(data))
            self.wfile.write(data[: len(data) // 2])
            self.hang_up()
        elif stream:
            self.start(200, "text/event-stream; charset=utf-8", None)
            self.chunk(frames[0])
            self.chunk(bad_frame)
            self.chunk(b"")
        else:
            self.start(200, "application/json", len(cut_short))
            self.wfile.write(cut_short)

    def hang_up(self) -> None:
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
        self.limit_headers: dict[str, str] | None = None
        try:
            protocol = self.fake.protocol_for(record.method, record.path)
            if protocol is not None:
                record.protocol = protocol.name
                self._serve(protocol, record, number)
            elif not self.fake.serve_other(self, record):
                message = f"Not found: {record.method} {record.path}"
                self.send_json(record, 404, self.fake.not_found_body(message))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            record.replied_at = time.time()
            self.fake._replied(record)

    def _serve(self, protocol: Protocol, record: RecordedRequest, number: int) -> None:
        fake = self.fake
        if fake.bucket is not None and protocol.uses_rules:
            wait, self.limit_headers = fake.bucket.take()
            if wait > 0:
                record.fault = "rate_limit"
                payload = protocol.error(
                    429, "rate_limit", "Number of requests has exceeded your rate limit"
                )
                self.send_json(record, 429, payload, self.limit_headers)
                return
        fault = fake._pick_fault(record.path, number)
        problem = protocol.invalid(record.body)
        if fault is None and problem is not None:
            self.send_json(record, 400, protocol.error(400, "invalid", problem))
            return
        rule: Rule | None = None
        if fault is None and protocol.uses_rules:
            convo = protocol.read(record.body)
            rule = fake._pick_rule(record.path, convo)
            if rule is not None:
                try:
                    rule = rule.reply_for(convo)  # its step for this turn, templates filled
                except TemplateError as error:
                    record.rule = rule.name
                    self.send_json(record, 400, protocol.error(400, "invalid", f"fake: {error}"))
                    return
            record.rule = rule.name if rule is not None else None
            if rule is not None and rule.fault is not None:
                fault = Fault(kind=rule.fault)
        latency = rule.latency if rule is not None and rule.latency is not None else fake.latency
        fake._sleep(latency)
        if fault is None:
            protocol.reply(self, record, rule)
            return
        record.fault = fault.kind
        answer = protocol.fault_reply(fault)
        if answer is not None:
            status, payload = answer
            self.send_json(record, status, payload, _retry_headers(fault))
        elif fault.kind == "drop_before_response":
            self.hang_up()
        else:
            record.status = 200
            protocol.broken(self, record, fault.kind)


def _retry_headers(fault: Fault) -> dict[str, str]:
    """`retry-after` / `retry-after-ms` of an error fault; a 429 always tells a client when to
    retry (0 unless given), as the real APIs do."""
    extra: dict[str, str] = {}
    retry_after = fault.retry_after
    if fault.kind == "rate_limit" and retry_after is None:
        retry_after = 0
    if retry_after is not None:
        extra["retry-after"] = f"{retry_after:g}"
    if fault.retry_after_ms is not None:
        extra["retry-after-ms"] = str(fault.retry_after_ms)
    return extra
