"""One jail connection served by the API proxy (api_proxy.py): each request checked against
the proxy's routes (anything else a 403, recorded, never sent upstream), its body streamed to
the upstream as it is read (at most MAX_REQUEST_BYTES, else a 413; only the first RESEND_BYTES
held, so that a request on a kept-alive connection the upstream closed can go again), the
reply relayed chunk by chunk and read on the way for the model's tool calls (model_replies).
A connection silent for the proxy's `client_timeout` seconds is closed. The proxy frames every
request itself: whatever framing the jail's bytes claim, one request upstream is one read here.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from ..errors import OutputRejected
from .api_log import ApiLog
from .model_replies import ReplyTap

if TYPE_CHECKING:
    from .api_proxy import ApiProxy

MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API's own cap on a request (32 MB)
RESEND_BYTES = 1024 * 1024  # a body this small is held whole, and sent again if need be
PIECE = 65536
CREDENTIAL_HEADERS = frozenset({"x-api-key", "authorization"})
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


class TooLarge(OutputRejected):
    """The request's body is over MAX_REQUEST_BYTES."""

    def __init__(self, message: str = "the request's body is over the cap") -> None:
        super().__init__(message)


class BadFraming(OutputRejected):
    """The request's body framing cannot be read (a bad Content-Length or chunk size)."""


class ClientGone(OutputRejected):
    """The jail's side failed while its body was read: it hung up, or went silent."""


def relay(proxy: ApiProxy, connection: socket.socket, log: ApiLog | None) -> None:
    """Answer the HTTP requests of one connection from a jail, then close it."""
    try:
        connection.settimeout(proxy.client_timeout)
        _Handler(connection, "jail", _Served(proxy, log))  # type: ignore[arg-type]
    except OSError:
        pass  # the jail hung up, or was silent too long
    finally:
        connection.close()


class _Served:
    """What one connection's handler reads: the proxy and the attempt's log."""

    def __init__(self, proxy: ApiProxy, log: ApiLog | None) -> None:
        self.proxy, self.log = proxy, log


class _Body:
    """A request's body as it is read: pieces of at most PIECE bytes, MAX_REQUEST_BYTES in
    all (TooLarge past it); `length` None for a chunked body."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self.rfile = handler.rfile
        self.chunked = "chunked" in handler.headers.get("Transfer-Encoding", "").lower()
        self.length: int | None = None
        if not self.chunked:
            try:
                self.length = int(handler.headers.get("Content-Length") or 0)
            except ValueError:
                raise BadFraming("Content-Length is not a number") from None
            if self.length < 0:
                raise BadFraming("Content-Length is negative")
            if self.length > MAX_REQUEST_BYTES:
                raise TooLarge

    def pieces(self) -> Iterator[bytes]:
        try:
            yield from self._pieces()
        except OSError as exc:
            raise ClientGone(type(exc).__name__) from None

    def _pieces(self) -> Iterator[bytes]:
        if self.length is not None:
            left = self.length
            while left:
                piece = self.rfile.read(min(left, PIECE))
                if not piece:
                    raise ConnectionResetError("the body was cut short")
                left -= len(piece)
                yield piece
            return
        total = 0
        while True:
            line = self.rfile.readline(1026)
            try:
                size = int(line.split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise BadFraming("a chunk size is not a number") from None
            if size == 0:
                for _ in range(64):  # the trailer, if any, up to its empty line
                    if self.rfile.readline(1026) in (b"\r\n", b"\n", b""):
                        return
                raise BadFraming("the trailer does not end")
            total += size
            if size < 0 or total > MAX_REQUEST_BYTES:
                raise TooLarge
            while size:
                piece = self.rfile.read(min(size, PIECE))
                if not piece:
                    raise ConnectionResetError("the body was cut short")
                size -= len(piece)
                yield piece
            self.rfile.readline(1026)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Served  # type: ignore[assignment]  # the base types it as a socketserver

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # the client is the jailed agent: nothing of it goes to the harness's stderr

    def address_string(self) -> str:
        return "jail"

    def _forward(self) -> None:
        proxy, log = self.server.proxy, self.server.log
        path = proxy.path(self.command, self.path)
        if path is None:
            self._refuse(403, "permission_error", "is not allowed through the jail's forward")
            return
        try:
            body = _Body(self)
        except TooLarge:
            self._refuse(413, "request_too_large", "is over the request cap")
            return
        except BadFraming as exc:
            self._refuse(400, "invalid_request_error", f"has a bad body ({exc})")
            return
        # The client's credential headers are replaced by ours; with none of ours (a
        # subscription login, whose token the CLI holds and sends itself) they pass.
        dropped = HOP_BY_HOP | CREDENTIAL_HEADERS if proxy.credentials else HOP_BY_HOP
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        headers.update(proxy.credentials)
        headers["Host"] = proxy.upstream.netloc
        reply = log.begin() if log is not None else (0, 0)  # before: what had ended by now
        try:
            upstream, response = _send(proxy, self.command, path, headers, body)
        except TooLarge:
            self._refuse(413, "request_too_large", "is over the request cap")
            return
        except BadFraming as exc:
            self._refuse(400, "invalid_request_error", f"has a bad body ({exc})")
            return
        except ClientGone:
            self.close_connection = True
            return
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

    def _refuse(self, status: int, kind: str, why: str) -> None:
        """A request not forwarded: recorded, answered, the connection closed (its body, if
        any, is not read)."""
        self.close_connection = True
        said = f"{self.command} {self.path.split('?', 1)[0]}"[:200]
        if self.server.log is not None:
            self.server.log.refuse(f"{said}: {status}")
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
    """One reply's tool calls, read as it is relayed into the attempt's log (a 2xx reply of
    an attempt with a log; nothing otherwise)."""

    def __init__(
        self,
        proxy: ApiProxy,
        log: ApiLog | None,
        response: http.client.HTTPResponse,
        reply: tuple[int, int],
    ) -> None:
        self.log = log if 200 <= response.status < 300 else None
        length = response.getheader("Content-Length")
        known = int(length) if length and length.isdigit() else None
        self.tap = ReplyTap(proxy.dialect, response.getheader("Content-Type") or "", known)
        self.reply, self.opened = reply

    def feed(self, chunk: bytes) -> None:
        if self.log is not None:
            self.tap.feed(chunk)
            if calls := self.tap.take():
                self.log.called(self.reply, self.opened, calls)

    def finish(self) -> None:
        if self.log is not None:
            readable = self.tap.finish()
            self.log.called(self.reply, self.opened, self.tap.take())
            self.log.end(self.reply, readable)


def _error(kind: str, message: str) -> str:
    """An error body both API families' clients read (`error.type`, `error.message`)."""
    error = {"type": kind, "message": f"skill-eval proxy: {message}"[:300]}
    return json.dumps({"type": "error", "error": error})


def _send(
    proxy: ApiProxy, method: str, path: str, headers: dict[str, str], body: _Body
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """Send one request upstream as its body is read; the connection and its response. A body
    of at most RESEND_BYTES is held whole and sent again on a new connection when a kept-alive
    one turns out closed; a longer one goes on as it comes (the connection was checked open
    just before, so such a loss needs the upstream to close it in that instant)."""
    pieces = body.pieces()
    first = bytearray()
    for piece in pieces:
        first += piece
        if len(first) >= RESEND_BYTES:
            break
    else:
        return _send_whole(proxy, method, path, headers, bytes(first))
    connection, _ = proxy.checkout()
    try:
        connection.putrequest(method, path, skip_host=True)
        for key, value in headers.items():
            connection.putheader(key, value)
        if body.length is not None:
            connection.putheader("Content-Length", str(body.length))
        else:
            connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        frame = (lambda p: b"%x\r\n%s\r\n" % (len(p), p)) if body.chunked else bytes
        connection.send(frame(bytes(first)))
        for piece in pieces:
            connection.send(frame(piece))
        if body.chunked:
            connection.send(b"0\r\n\r\n")
        return connection, connection.getresponse()
    except BaseException:
        connection.close()
        raise


def _send_whole(
    proxy: ApiProxy, method: str, path: str, headers: dict[str, str], data: bytes
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
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
