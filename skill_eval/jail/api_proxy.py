"""The model API as a jailed agent reaches it: the jail's holder listens on 127.0.0.1:PORT
inside the jail (which has no network) and passes each connection out to the harness, where
this proxy forwards the requests to the real API and adds the real credentials on the way.
The agent only ever holds a placeholder key, so nothing it runs can read the key from its
environment; and the jail reaches the model API and nothing else.

    dialect = MessagesDialect()           # the executor's: its routes, allow-list, replies
    proxy = ApiProxy("https://api.example.com", dialect.credentials(key), dialect)
    env["BASE_URL"] = f"http://127.0.0.1:{FORWARD_PORT}"
    env["API_KEY"] = proxy.placeholder
    JailedCommand(..., forward=proxy.observed(log))   # each connection: serve(connection)

An allow-list with bounds (api_relay.py serves each connection): only the dialect's routes
are forwarded (POST, below the upstream's own path), anything else is a 403 recorded in the
attempt's `ApiLog` and never reaches the upstream; a request body is read whole before
anything goes upstream, at most MAX_REQUEST_BYTES (the Messages API's own limit, 32 MB:
nothing the API would take is refused), a jail holding at most MAX_HELD_BYTES of bodies at
once; the body and headers are checked against the dialect's allow-list (wire.py: a refusal
is a 4xx and a `tampering` record) and then the run's own `admit` hook; only the dialect's
headers pass, the credential headers the client sends replaced by ours; a jail's connection
that sends nothing for CLIENT_TIMEOUT seconds is closed; and a jail holds at most
MAX_CONNECTIONS at once (pipes.relay_api turns the rest away with a 503). Each reply is
relayed chunk by chunk (server-sent events as the API sends them) and read on the way for
the model's tool calls and its usage (model_replies.py, by the dialect's reader): the calls
an attempt's transcript is checked against, the usage the `on_usage` hook hears.
Upstream connections are kept alive and reused across requests and attempts (one TLS context
per proxy): a request costs what the CLI's own would, not a new TLS handshake each time.
"""

from __future__ import annotations

import http.client
import json
import secrets
import select
import socket
import ssl
import threading
from collections.abc import Mapping
from typing import Protocol
from urllib.parse import urlsplit

from .api_log import ApiLog
from .api_relay import MAX_HELD_BYTES, MAX_REQUEST_BYTES, Held, relay
from .wire import Admission, ApiDialect, UsageHook

FORWARD_PORT = 8790  # where the API is, inside a jail (the holder listens there)
UPSTREAM_TIMEOUT = 600.0
CLIENT_TIMEOUT = 60.0  # a jail's connection silent this long (mid-request, or idle) is closed
MAX_CONNECTIONS = 32  # open connections per jail (a CLI keeps a few; subagents add some)
MAX_IDLE = 16  # upstream connections kept open between requests


class Forward(Protocol):
    """What serves the connections a jail passes out (an ApiProxy, or one observed)."""

    def serve(self, connection: socket.socket) -> None: ...

    def turn_away(self, connection: socket.socket, why: str) -> None: ...


class ApiProxy:
    """Forwards to `upstream` (a base URL), sending `credentials` (header -> value) in place of
    whatever credential headers the client sent (or the client's own, when `credentials` is
    empty: a subscription login or a local server without a key). `dialect`: the wire format
    (wire.py: its routes, allow-list, headers and how its replies read); `client_timeout`: how
    long a jail's connection may stay silent; `admit`: asked of each request the dialect
    passed (a Refusal stops it); `on_usage`: told each reply's usage. One per executor;
    thread-safe."""

    def __init__(
        self,
        upstream: str,
        credentials: Mapping[str, str],
        dialect: ApiDialect,
        *,
        client_timeout: float = CLIENT_TIMEOUT,
        admit: Admission | None = None,
        on_usage: UsageHook | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the API's base URL must be http(s)://host[:port]: {upstream!r}")
        self.upstream, self.url = parts, upstream
        self._answered = threading.Event()
        self._refused = threading.Event()
        self.credentials = {k.lower(): v for k, v in credentials.items()}
        self.dialect = dialect
        self.placeholder = dialect.placeholder_prefix + secrets.token_hex(16)
        self.client_timeout = client_timeout
        self.admit, self.on_usage = admit, on_usage
        # Loading the CA bundle costs tens of ms of CPU: once per proxy, not per request.
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def observed(self, log: ApiLog) -> Forward:
        """This proxy, recording one attempt's connections into `log`."""
        return _Observed(self, log)

    def serve(
        self, connection: socket.socket, log: ApiLog | None = None, held: Held | None = None
    ) -> None:
        """Answer the HTTP requests of one connection from a jail, then close it: the
        forward's one entry point, whatever carried the connection out of the jail. `held`:
        the jail's budget of request bodies held at once (one of its own when None)."""
        relay(self, connection, log, held or Held(MAX_HELD_BYTES))

    def turn_away(self, connection: socket.socket, why: str, log: ApiLog | None = None) -> None:
        """Refuse a connection unread (the jail is at its cap): a 503 if it fits at once."""
        if log is not None:
            log.refuse(why)
        body = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": why}})
        try:
            connection.setblocking(False)
            connection.send(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body.encode())
            )
        except OSError:
            pass
        finally:
            connection.close()

    def contacted(self, *, answered: bool, refused: bool = False) -> None:
        """What came of one upstream request: a reply, or a refused connection."""
        if answered:
            self._answered.set()
        elif refused:
            self._refused.set()

    def unreachable(self) -> bool:
        """Whether the upstream refused a connection and has never answered a request: nothing
        listens there, and the executor stops the run (a refusal after a reply is an
        outage)."""
        return self._refused.is_set() and not self._answered.is_set()

    def connect(self) -> http.client.HTTPConnection:
        """A new upstream connection (not yet open)."""
        host, port = self.upstream.hostname or "", self.upstream.port
        if self._tls is not None:
            return http.client.HTTPSConnection(
                host, port, timeout=UPSTREAM_TIMEOUT, context=self._tls
            )
        return http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT)

    def checkout(self) -> tuple[http.client.HTTPConnection, bool]:
        """An upstream connection for one request: an idle one the upstream has not closed,
        else a new one; and whether it was reused (a reused one may yet turn out closed)."""
        while True:
            with self._lock:
                idle = self._idle.pop() if self._idle else None
            if idle is None:
                return self.connect(), False
            if _alive(idle):
                return idle, True
            idle.close()

    def release(self, connection: http.client.HTTPConnection, reusable: bool) -> None:
        """Give back a connection whose response was read to its end (`reusable`), else close
        it: a half-read response must never reach the next request."""
        if reusable:
            with self._lock:
                if len(self._idle) < MAX_IDLE:
                    self._idle.append(connection)
                    return
        connection.close()

    def path(self, method: str, request_path: str) -> str | None:
        """The upstream path of a request; None when it is not forwarded."""
        if method != "POST" or request_path.split("?", 1)[0] not in self.dialect.routes:
            return None
        base = self.upstream.path.rstrip("/")
        return f"{base}{request_path.removeprefix(self.dialect.strip)}"


def _alive(connection: http.client.HTTPConnection) -> bool:
    """Whether an idle connection is still open: nothing to read on it (a closed one reads
    as its end), so a request sent on it is not lost to a close the upstream already made."""
    sock = connection.sock
    if sock is None:
        return True  # not yet connected: it connects on use
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


class _Observed:
    """The proxy as one jail sees it: its log, and its own budget of held bodies (a jail
    cannot hold memory another jail's requests need)."""

    def __init__(self, proxy: ApiProxy, log: ApiLog) -> None:
        self.proxy, self.log = proxy, log
        self.held = Held(MAX_HELD_BYTES)

    def serve(self, connection: socket.socket) -> None:
        self.proxy.serve(connection, self.log, self.held)

    def turn_away(self, connection: socket.socket, why: str) -> None:
        self.proxy.turn_away(connection, why, self.log)


__all__ = [
    "CLIENT_TIMEOUT",
    "FORWARD_PORT",
    "MAX_CONNECTIONS",
    "MAX_HELD_BYTES",
    "MAX_REQUEST_BYTES",
    "ApiLog",
    "ApiProxy",
    "Forward",
]
