"""The model API as a jailed agent reaches it: the jail's holder listens on 127.0.0.1:PORT
inside the jail (which has no network) and passes each connection out to the harness, where
this proxy forwards the requests to the real API and adds the real credentials on the way.
The agent only ever holds a placeholder key, so nothing it runs can read the key from its
environment; and the jail reaches the model API and nothing else.

    proxy = ApiProxy("https://api.anthropic.com", {"x-api-key": key})
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{FORWARD_PORT}"
    env["ANTHROPIC_API_KEY"] = proxy.placeholder
    JailedCommand(..., forward=proxy)      # each connection: proxy.serve(connection)

Requests are forwarded as they are (bounded in size), responses streamed back chunk by chunk
(server-sent events arrive as the API sends them). The credential headers the client sends
are replaced, never forwarded. An OpenAI-style proxy (`ApiProxy.openai`) forwards only the
model endpoints (`POST /v1/chat/completions`, `POST /v1/responses`, below the upstream's own
path) and refuses the rest; `observed(log)` counts one attempt's replies (`ApiLog`), so an
attempt that ran out of time while the API was failing is the API's error, not the agent's.
An upstream that refuses the connection before it ever answered is `unreachable()`: nothing
listens there, and the executor stops the run (a refusal after a reply is an outage).
Upstream connections are kept alive and reused across requests and attempts (one TLS context
per proxy): a request costs what the CLI's own would, not a new TLS handshake and a CA
bundle loaded each time.
"""

from __future__ import annotations

import http.client
import json
import secrets
import socket
import ssl
import threading
from collections import Counter
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import urlsplit

FORWARD_PORT = 8790  # where the API is, inside a jail (the holder listens there)
MAX_REQUEST_BYTES = 64 * 1024 * 1024
UPSTREAM_TIMEOUT = 600.0
# Never forwarded: they describe one connection, not the request.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
CREDENTIAL_HEADERS = frozenset({"x-api-key", "authorization"})
# What an OpenAI-style agent reaches (`base URL` + these, the base URL inside the jail ending
# in /v1): Chat Completions (OpenCode) and Responses (Codex).
OPENAI_ROUTES = frozenset({"/v1/chat/completions", "/v1/responses"})
ERRORS_KEPT = 32  # the last statuses an ApiLog keeps, for "was the API failing at the end?"


class Forward(Protocol):
    """What serves the connections a jail passes out (an ApiProxy, or one observed)."""

    def serve(self, connection: socket.socket) -> None: ...


class ApiLog:
    """One attempt's replies from the API as the proxy saw them (thread-safe): how many, by
    status (0: the upstream could not be reached), and the last few in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.statuses: Counter[int] = Counter()
        self.recent: list[int] = []

    def saw(self, status: int) -> None:
        with self._lock:
            self.statuses[status] += 1
            self.recent = [*self.recent[-(ERRORS_KEPT - 1) :], status]

    @property
    def requests(self) -> int:
        with self._lock:
            return sum(self.statuses.values())

    def last_error(self) -> int | None:
        """The status of the last reply when it was an error (0: the upstream could not be
        reached); None when it succeeded or there was none."""
        with self._lock:
            last = self.recent[-1] if self.recent else None
        return last if last is not None and (last == 0 or last >= 400) else None

    def failing(self) -> bool:
        """Whether the API was failing when the attempt ended: its last reply an error a
        retry may heal (408, 429, 5xx, unreachable)."""
        last = self.last_error()
        return last is not None and (last in (0, 408, 429) or last >= 500)

    def summary(self) -> dict[str, int]:
        """{status: count} of the replies that were not 2xx (for an attempt's record)."""
        with self._lock:
            return {str(k): v for k, v in sorted(self.statuses.items()) if not 200 <= k < 300}


MAX_IDLE = 16  # upstream connections kept open between requests
# What a kept-alive connection the upstream has meanwhile closed raises before any reply: the
# request never reached it, so it is sent again once on a new connection.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class ApiProxy:
    """Forwards to `upstream` (a base URL), sending `credentials` (header -> value) in place of
    whatever credential headers the client sent (or the client's own, when `credentials` is
    empty: a subscription login or a local server without a key). `routes`: the only request
    paths forwarded (None: any), with `strip` taken off their front before the upstream's own
    path goes there. One per executor; thread-safe."""

    def __init__(
        self,
        upstream: str,
        credentials: Mapping[str, str],
        *,
        routes: frozenset[str] | None = None,
        strip: str = "",
        placeholder_prefix: str = "sk-ant-jail-",
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the API's base URL must be http(s)://host[:port]: {upstream!r}")
        self.upstream, self.url = parts, upstream
        self._answered = threading.Event()
        self._refused = threading.Event()
        self.credentials = {k.lower(): v for k, v in credentials.items()}
        self.placeholder = placeholder_prefix + secrets.token_hex(16)
        self.routes, self.strip = routes, strip
        # Loading the CA bundle costs tens of ms of CPU: once per proxy, not per request.
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    @classmethod
    def openai(cls, base_url: str, key: str | None) -> ApiProxy:
        """A proxy for an OpenAI-style API at `base_url` (which ends where `/chat/completions`
        follows, e.g. `https://api.openai.com/v1`): the agent inside uses
        `http://127.0.0.1:FORWARD_PORT/v1` and `Authorization: Bearer <placeholder>`, which
        becomes the real key (none: the placeholder goes on, for a local server)."""
        credentials = {"authorization": f"Bearer {key}"} if key else {}
        return cls(
            base_url, credentials, routes=OPENAI_ROUTES, strip="/v1", placeholder_prefix="sk-jail-"
        )

    def observed(self, log: ApiLog) -> Forward:
        """This proxy, counting the replies of one attempt's connections into `log`."""
        return _Observed(self, log)

    def serve(self, connection: socket.socket, log: ApiLog | None = None) -> None:
        """Answer the HTTP requests of one connection from a jail, then close it."""
        try:
            _Handler(connection, "jail", _Served(self, log))  # type: ignore[arg-type]
        except OSError:
            pass  # the jail hung up
        finally:
            connection.close()

    def contacted(self, *, answered: bool, refused: bool = False) -> None:
        """What came of one upstream request: a reply, or a refused connection."""
        if answered:
            self._answered.set()
        elif refused:
            self._refused.set()

    def unreachable(self) -> bool:
        """Whether the upstream refused a connection and has never answered a request."""
        return self._refused.is_set() and not self._answered.is_set()

    def connect(self) -> http.client.HTTPConnection:
        """A new upstream connection (not yet open)."""
        host, port = self.upstream.hostname or "", self.upstream.port
        if self._tls is not None:
            return http.client.HTTPSConnection(
                host, port, timeout=UPSTREAM_TIMEOUT, context=self._tls
            )
        return http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT)

    def send(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str]
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request upstream (`path`: the upstream's, from `path()`) on a kept-alive
        connection (a new one when none is idle, or when the idle one turns out closed); the
        connection and its response."""
        while True:
            with self._lock:
                reused = self._idle.pop() if self._idle else None
            connection = reused or self.connect()
            try:
                connection.request(method, path, body=body, headers=headers)
                return connection, connection.getresponse()
            except STALE:
                connection.close()
                if reused is None:
                    raise
            except BaseException:
                connection.close()
                raise

    def release(self, connection: http.client.HTTPConnection, reusable: bool) -> None:
        """Give back a connection whose response was read to its end (`reusable`), else close
        it: a half-read response must never reach the next request."""
        if reusable:
            with self._lock:
                if len(self._idle) < MAX_IDLE:
                    self._idle.append(connection)
                    return
        connection.close()

    def path(self, request_path: str) -> str | None:
        """The upstream path of a request path; None when it is not forwarded."""
        if self.routes is not None and request_path.split("?", 1)[0] not in self.routes:
            return None
        if not request_path.startswith("/"):
            return None if self.routes is not None else request_path
        base = self.upstream.path.rstrip("/")
        return f"{base}{request_path.removeprefix(self.strip)}"


def _nobody(url: str) -> str:
    message = f"skill-eval proxy: nothing listens at {url} (connection refused)"
    # OpenAI's error shape with a type no client retries (OpenCode resends an `api_error`)
    return json.dumps({"error": {"type": "invalid_request_error", "message": message}})


class _Observed:
    def __init__(self, proxy: ApiProxy, log: ApiLog) -> None:
        self.proxy, self.log = proxy, log

    def serve(self, connection: socket.socket) -> None:
        self.proxy.serve(connection, self.log)


class _Served:
    """What one connection's handler reads: the proxy and the attempt's log."""

    def __init__(self, proxy: ApiProxy, log: ApiLog | None) -> None:
        self.proxy, self.log = proxy, log

    def saw(self, status: int) -> None:
        if self.log is not None:
            self.log.saw(status)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Served  # type: ignore[assignment]  # the base types it as a socketserver

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # the client is the jailed agent: nothing of it goes to the harness's stderr

    def address_string(self) -> str:
        return "jail"

    def _forward(self) -> None:
        proxy = self.server.proxy
        path = proxy.path(self.path)
        if path is None or (proxy.routes is not None and self.command != "POST"):
            self._refuse()
            return
        body = self._body()
        if body is None:
            return
        # The client's credential headers are replaced by ours; with none of ours (a
        # subscription login, whose token the CLI holds and sends itself) they pass.
        dropped = HOP_BY_HOP | CREDENTIAL_HEADERS if proxy.credentials else HOP_BY_HOP
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        headers.update(proxy.credentials)
        headers["Host"] = proxy.upstream.netloc
        try:
            upstream, response = proxy.send(self.command, path, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            self.server.saw(0)
            proxy.contacted(answered=False, refused=isinstance(exc, ConnectionRefusedError))
            if proxy.unreachable():  # a 4xx, which no CLI retries: nothing listens there
                self._reply(400, _nobody(proxy.url))
                return
            self._reply(
                502,
                f'{{"type":"error","error":{{"type":"api_error","message":'
                f'"skill-eval proxy: upstream unreachable ({type(exc).__name__})"}}}}',
            )
            return
        proxy.contacted(answered=True)
        self.server.saw(response.status)
        relayed = False
        try:
            self._relay(response)
            response.read()  # nothing is left: this ends the response (or raises: cut short)
            relayed = True
        finally:
            proxy.release(upstream, relayed and not response.will_close)

    def _refuse(self) -> None:
        """A path the proxy does not forward (an OpenAI-style proxy serves the model
        endpoints only): 404, the connection closed (its body, if any, is never read)."""
        self.close_connection = True
        message = f"skill-eval proxy: {self.command} {self.path.split('?', 1)[0]} is not forwarded"
        error = {"message": message[:300], "type": "invalid_request_error"}
        self._reply(404, json.dumps({"error": error}))

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

    def _body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._chunked_body()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self._reply(
                413,
                '{"type":"error","error":{"type":"request_too_large",'
                '"message":"skill-eval proxy: request too large"}}',
            )
            return None
        return self.rfile.read(length) if length else b""

    def _chunked_body(self) -> bytes | None:
        body = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return bytes(body)
            if len(body) + size > MAX_REQUEST_BYTES:
                self._reply(413, '{"type":"error","error":{"type":"request_too_large"}}')
                self.close_connection = True
                return None
            body += self.rfile.read(size)
            self.rfile.readline()

    def _relay(self, response: http.client.HTTPResponse) -> None:
        self.send_response_only(response.status, response.reason)
        length = response.getheader("Content-Length")
        for key, value in response.getheaders():
            if key.lower() not in HOP_BY_HOP:
                self.send_header(key, value)
        chunked = length is None and self.command != "HEAD"
        self.send_header("Transfer-Encoding", "chunked") if chunked else self.send_header(
            "Content-Length", length or "0"
        )
        self.end_headers()
        while chunk := response.read1(65536):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            self.wfile.flush()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _reply(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
