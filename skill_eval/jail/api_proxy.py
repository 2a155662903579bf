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
are replaced, never forwarded. Upstream connections are kept alive and reused across requests
and attempts (one TLS context per proxy): a request costs what the CLI's own would, not a new
TLS handshake and a CA bundle loaded each time.
"""

from __future__ import annotations

import http.client
import secrets
import socket
import ssl
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any
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
MAX_IDLE = 16  # upstream connections kept open between requests
# What a kept-alive connection the upstream has meanwhile closed raises before any reply: the
# request never reached it, so it is sent again once on a new connection.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class ApiProxy:
    """Forwards to `upstream` (a base URL), sending `credentials` (header -> value) in place of
    whatever credential headers the client sent (or the client's own, when `credentials` is
    empty: a subscription login). One per executor; thread-safe."""

    def __init__(self, upstream: str, credentials: Mapping[str, str]) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the API's base URL must be http(s)://host[:port]: {upstream!r}")
        self.upstream = parts
        self.credentials = {k.lower(): v for k, v in credentials.items()}
        self.placeholder = "sk-ant-jail-" + secrets.token_hex(16)
        # Loading the CA bundle costs tens of ms of CPU: once per proxy, not per request.
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def serve(self, connection: socket.socket) -> None:
        """Answer the HTTP requests of one connection from a jail, then close it."""
        try:
            _Handler(connection, "jail", self)  # type: ignore[arg-type]  # not a socketserver
        except OSError:
            pass  # the jail hung up
        finally:
            connection.close()

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
        """Send one request upstream on a kept-alive connection (a new one when none is idle,
        or when the idle one turns out closed); the connection and its response."""
        while True:
            with self._lock:
                reused = self._idle.pop() if self._idle else None
            connection = reused or self.connect()
            try:
                connection.request(method, self.path(path), body=body, headers=headers)
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

    def path(self, request_path: str) -> str:
        base = self.upstream.path.rstrip("/")
        return f"{base}{request_path}" if request_path.startswith("/") else request_path


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ApiProxy  # type: ignore[assignment]  # the base types it as a socketserver

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # the client is the jailed agent: nothing of it goes to the harness's stderr

    def address_string(self) -> str:
        return "jail"

    def _forward(self) -> None:
        proxy = self.server
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
            upstream, response = proxy.send(self.command, self.path, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            self._reply(
                502,
                f'{{"type":"error","error":{{"type":"api_error","message":'
                f'"skill-eval proxy: upstream unreachable ({type(exc).__name__})"}}}}',
            )
            return
        relayed = False
        try:
            self._relay(response)
            response.read()  # nothing is left: this ends the response (or raises: cut short)
            relayed = True
        finally:
            proxy.release(upstream, relayed and not response.will_close)

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


def credentials_from(lookup: Any) -> tuple[dict[str, str], str | None]:
    """(the headers the proxy adds, the variable that carries the placeholder in the jail)
    for the credentials in the environment: an API key (`x-api-key`) or an auth token
    (`Authorization: Bearer`); ({}, None) when there are none (a subscription login)."""
    if key := lookup("ANTHROPIC_API_KEY"):
        return {"x-api-key": key}, "ANTHROPIC_API_KEY"
    if token := lookup("ANTHROPIC_AUTH_TOKEN"):
        return {"authorization": f"Bearer {token}"}, "ANTHROPIC_AUTH_TOKEN"
    return {}, None
