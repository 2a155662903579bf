"""One jail connection served by the API proxy (api_proxy.py): each request checked against
the proxy's routes (anything else a 403, recorded, never sent upstream), its body read whole
(api_body.py: capped, and held within the jail's budget), checked against the dialect's
allow-list and the run's admission hook (wire.py: a refusal is a 4xx, recorded, never sent
upstream), sent with the dialect's headers only and our credentials (sent again once when a
kept-alive connection the upstream closed loses it), the reply relayed chunk by chunk and read
on the way for the model's tool calls and usage (model_replies.py). A connection silent for
the proxy's `client_timeout` seconds is closed. The proxy frames every request itself:
whatever framing the jail's bytes claim, one request upstream is one read here.
"""

from __future__ import annotations

import http.client
import json
import socket
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from .api_body import (
    MAX_HELD_BYTES,
    MAX_REQUEST_BYTES,
    BadFraming,
    ClientGone,
    Held,
    OverHeld,
    TooLarge,
    one_big_at_a_time,
    parsed,
    read_body,
)
from .api_log import ApiLog
from .model_replies import ReplyTap
from .wire import ApiRequest, Refusal

if TYPE_CHECKING:
    from .api_proxy import ApiProxy

PIECE = 65536
# Never forwarded: they describe one connection, not the request (and the reply comes back
# unencoded, so that the proxy can read it).
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
        "accept-encoding",
        "expect",
    }
)
# What a kept-alive connection the upstream has meanwhile closed raises before any reply: the
# request never reached it, so it is sent again once on a new connection.
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


def relay(proxy: ApiProxy, connection: socket.socket, log: ApiLog | None, held: Held) -> None:
    """Answer the HTTP requests of one connection from a jail, then close it; `held`: the
    jail's budget of request bodies held at once."""
    try:
        connection.settimeout(proxy.client_timeout)
        _Handler(connection, "jail", _Served(proxy, log, held))  # type: ignore[arg-type]
    except OSError:
        pass  # the jail hung up, or was silent too long
    finally:
        connection.close()


class _Served:
    """What one connection's handler reads: the proxy, the attempt's log, the jail's budget."""

    def __init__(self, proxy: ApiProxy, log: ApiLog | None, held: Held) -> None:
        self.proxy, self.log, self.held = proxy, log, held


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Served  # type: ignore[assignment]  # the base types it as a socketserver

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # the client is the jailed agent: nothing of it goes to the harness's stderr

    def address_string(self) -> str:
        return "jail"

    def _forward(self) -> None:
        proxy, held = self.server.proxy, self.server.held
        path = proxy.path(self.command, self.path)
        if path is None:
            self._refuse(403, "permission_error", "is not allowed through the jail's forward")
            return
        try:
            data = read_body(self, held)
        except TooLarge:
            self._refuse(413, "request_too_large", "is over the request cap")
            return
        except OverHeld as exc:
            self._refuse(503, "overloaded_error", f"waits: {exc}")
            return
        except BadFraming as exc:
            self._refuse(400, "invalid_request_error", f"has a bad body ({exc})")
            return
        except ClientGone:
            self.close_connection = True
            return
        try:
            refusal = self._checked(data)
            if refusal is not None:
                self._refuse(refusal.status, refusal.kind, refusal.reason, refusal.tampering)
                return
            self._pass(path, data)
        finally:
            held.give(len(data))

    def _checked(self, data: bytes | bytearray) -> Refusal | None:
        """Why the request is not forwarded (the dialect's allow-list, then the run's own
        admission), or None. A big body's parsed form lives only under its jail's lock."""
        with one_big_at_a_time(data, self.server.held):
            return self._check(data)

    def _check(self, data: bytes | bytearray) -> Refusal | None:
        proxy = self.server.proxy
        body = parsed(data)
        if isinstance(body, Refusal):
            return body
        path, _, query = self.path.partition("?")
        request = ApiRequest(self.command, path, query, _lowered(self), body)
        if query not in proxy.dialect.queries:
            return Refusal(f"the query {query[:80]!r} is not one the agent's CLI sends")
        try:
            refusal = proxy.dialect.check(request)
        except Exception as exc:  # a body the check did not foresee is not one to forward
            return Refusal(f"the body could not be checked ({type(exc).__name__})")
        if refusal is None and proxy.admit is not None:
            refusal = proxy.admit(request)
        return refusal

    def _pass(self, path: str, data: bytes | bytearray) -> None:
        """Send the request upstream with the dialect's headers and our credentials, and
        relay the reply."""
        proxy, log = self.server.proxy, self.server.log
        dialect = proxy.dialect
        # The client's credential headers are replaced by ours; with none of ours (a
        # subscription login, whose token the CLI holds and sends itself) they pass.
        dropped = HOP_BY_HOP | dialect.credential_headers if proxy.credentials else HOP_BY_HOP
        headers = {
            k: v for k, v in _lowered(self).items() if k in dialect.headers and k not in dropped
        }
        headers.update(proxy.credentials)
        headers["Host"] = proxy.upstream.netloc
        reply = log.begin() if log is not None else (0, 0)  # before: what had ended by now
        try:
            upstream, response = _send(proxy, self.command, path, headers, data)
        except (OSError, http.client.HTTPException) as exc:
            if log is not None:
                log.saw(0)
            self.close_connection = True
            proxy.contacted(answered=False, refused=isinstance(exc, ConnectionRefusedError))
            if proxy.unreachable():  # a 4xx, which no CLI retries: nothing listens there
                nobody = f"nothing listens at {proxy.url} (connection refused)"
                self._reply(400, _error("invalid_request_error", nobody))
                return
            self._reply(502, _error("api_error", f"upstream unreachable ({type(exc).__name__})"))
            return
        proxy.contacted(answered=True)
        if log is not None:
            log.saw(response.status)
        relayed = False
        try:
            self._relay(response, _Tapped(proxy, log, response, reply))
            response.read()  # nothing is left: this ends the response (or raises: cut short)
            relayed = True
        except (OSError, http.client.HTTPException):  # the upstream cut its reply short
            self.close_connection = True  # and so the agent's: its CLI retries or fails
        finally:
            proxy.release(upstream, relayed and not response.will_close)

    def _refuse(self, status: int, kind: str, why: str, tampering: bool = False) -> None:
        """A request not forwarded: recorded (as tampering when its dialect refused it),
        answered, the connection closed (a body not read is left unread)."""
        self.close_connection = True
        said = f"{self.command} {self.path.split('?', 1)[0]}"[:200]
        log = self.server.log
        if log is not None:
            log.tamper(f"{said}: {status} ({why})") if tampering else log.refuse(
                f"{said}: {status}"
            )
        self._reply(status, _error(kind, f"{said} {why}"))

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _forward

    def _relay(self, response: http.client.HTTPResponse, tap: _Tapped) -> None:
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
        try:
            while chunk := response.read1(PIECE):
                tap.feed(chunk)  # a call it completes is recorded before the agent has it
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                self.wfile.flush()
        finally:
            tap.finish()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _reply(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response_only(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


class _Tapped:
    """One reply's tool calls and usage, read as it is relayed into the attempt's log and
    the proxy's usage hook (a 2xx reply someone listens for; nothing otherwise)."""

    def __init__(
        self,
        proxy: ApiProxy,
        log: ApiLog | None,
        response: http.client.HTTPResponse,
        reply: tuple[int, int],
    ) -> None:
        ok = 200 <= response.status < 300
        self.log = log if ok else None
        self.on_usage = proxy.on_usage if ok else None
        length = response.getheader("Content-Length")
        known = int(length) if length and length.isdigit() else None
        content_type = response.getheader("Content-Type") or ""
        self.tap = ReplyTap(proxy.dialect.replies(), content_type, known)
        self.reading = self.log is not None or self.on_usage is not None
        self.reply, self.opened = reply

    def feed(self, chunk: bytes) -> None:
        if self.reading:
            self.tap.feed(chunk)
            if (calls := self.tap.take()) and self.log is not None:
                self.log.called(self.reply, self.opened, calls)

    def finish(self) -> None:
        if not self.reading:
            return
        readable = self.tap.finish()
        usage = self.tap.usage()
        if self.log is not None:
            self.log.called(self.reply, self.opened, self.tap.take())
            self.log.end(self.reply, readable)
            if usage is not None:
                self.log.replied(usage)
        if usage is not None and self.on_usage is not None:
            self.on_usage(usage)


def _lowered(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    """The request's headers by lower-cased name, a header sent twice as one (", ")."""
    headers: dict[str, str] = {}
    for key, value in handler.headers.items():
        name = key.lower()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _error(kind: str, message: str) -> str:
    """An error body both API families' clients read (`error.type`, `error.message`)."""
    error = {"type": kind, "message": f"skill-eval proxy: {message}"[:300]}
    return json.dumps({"type": "error", "error": error})


def _send(
    proxy: ApiProxy, method: str, path: str, headers: dict[str, str], data: bytes | bytearray
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """Send one request upstream, whole; the connection and its response. Sent again on a
    new connection when a kept-alive one turns out closed before any reply."""
    while True:
        connection, reused = proxy.checkout()
        try:
            connection.request(method, path, body=data, headers=headers)
            return connection, connection.getresponse()
        except STALE:
            connection.close()
            if not reused:
                raise
        except BaseException:
            connection.close()
            raise


__all__ = ["MAX_HELD_BYTES", "MAX_REQUEST_BYTES", "Held", "relay"]
