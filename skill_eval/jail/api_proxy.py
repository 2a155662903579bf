"""The model API as a jailed agent reaches it: the jail's holder listens on 127.0.0.1:PORT
inside the jail (which has no network) and passes each connection out to the harness, where
this proxy forwards the requests to the real API and adds the real credentials on the way.
The agent only ever holds a placeholder key, so nothing it runs can read the key from its
environment; and the jail reaches the model API and nothing else.

    proxy = ApiProxy("https://api.anthropic.com", {"x-api-key": key})
    env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{FORWARD_PORT}"
    env["ANTHROPIC_API_KEY"] = proxy.placeholder
    JailedCommand(..., forward=proxy.observed(log))   # each connection: serve(connection)

An allow-list with bounds (api_relay.py serves each connection): only the routes the agent
needs are forwarded (`POST /v1/messages` and `/v1/messages/count_tokens` for Claude Code;
`POST /v1/chat/completions` and `/v1/responses`, below the upstream's own path, for
OpenCode and Codex), anything else is a 403 recorded in the attempt's `ApiLog` and never
reaches the upstream; a request body is streamed, at most MAX_REQUEST_BYTES (the Messages
API's own limit, 32 MB: nothing the API would take is refused); a jail's connection that
sends nothing for CLIENT_TIMEOUT seconds is closed; and a jail holds at most
MAX_CONNECTIONS at once (pipes.relay_api turns the rest away with a 503). The credential
headers the client sends are replaced, never forwarded. Each reply is relayed chunk by chunk
(server-sent events as the API sends them) and read on the way for the model's tool calls
(model_replies.py), which the attempt's transcript is checked against.
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
from .api_relay import MAX_REQUEST_BYTES, relay
from .model_replies import Dialect

FORWARD_PORT = 8790  # where the API is, inside a jail (the holder listens there)
UPSTREAM_TIMEOUT = 600.0
CLIENT_TIMEOUT = 60.0  # a jail's connection silent this long (mid-request, or idle) is closed
MAX_CONNECTIONS = 32  # open connections per jail (a CLI keeps a few; subagents add some)
# What Claude Code 2.1.330 calls in a run (nonessential traffic off, as the executor sets it):
# the Messages API, and token counting, which the CLI may ask for as its context grows.
ANTHROPIC_ROUTES = frozenset({"/v1/messages", "/v1/messages/count_tokens"})
# What an OpenAI-style agent reaches (`base URL` + these, the base URL inside the jail ending
# in /v1): Chat Completions (OpenCode) and Responses (Codex).
OPENAI_ROUTES = frozenset({"/v1/chat/completions", "/v1/responses"})
MAX_IDLE = 16  # upstream connections kept open between requests


class Forward(Protocol):
    """What serves the connections a jail passes out (an ApiProxy, or one observed)."""

    def serve(self, connection: socket.socket) -> None: ...

    def turn_away(self, connection: socket.socket, why: str) -> None: ...


class ApiProxy:
    """Forwards to `upstream` (a base URL), sending `credentials` (header -> value) in place of
    whatever credential headers the client sent (or the client's own, when `credentials` is
    empty: a subscription login or a local server without a key). `routes`: the only request
    paths forwarded (POST only), with `strip` taken off their front before the upstream's own
    path goes there; `dialect`: how its replies read (model_replies); `client_timeout`: how
    long a jail's connection may stay silent. One per executor; thread-safe."""

    def __init__(
        self,
        upstream: str,
        credentials: Mapping[str, str],
        *,
        routes: frozenset[str] = ANTHROPIC_ROUTES,
        strip: str = "",
        placeholder_prefix: str = "sk-ant-jail-",
        dialect: Dialect = "anthropic",
        client_timeout: float = CLIENT_TIMEOUT,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the API's base URL must be http(s)://host[:port]: {upstream!r}")
        self.upstream, self.url = parts, upstream
        self._answered = threading.Event()
        self._refused = threading.Event()
        self.credentials = {k.lower(): v for k, v in credentials.items()}
        self.placeholder = placeholder_prefix + secrets.token_hex(16)
        self.routes, self.strip, self.dialect = routes, strip, dialect
        self.client_timeout = client_timeout
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
            base_url,
            credentials,
            routes=OPENAI_ROUTES,
            strip="/v1",
            placeholder_prefix="sk-jail-",
            dialect="openai",
        )

    def observed(self, log: ApiLog) -> Forward:
        """This proxy, recording one attempt's connections into `log`."""
        return _Observed(self, log)

    def serve(self, connection: socket.socket, log: ApiLog | None = None) -> None:
        """Answer the HTTP requests of one connection from a jail, then close it."""
        relay(self, connection, log)

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
        if method != "POST" or request_path.split("?", 1)[0] not in self.routes:
            return None
        base = self.upstream.path.rstrip("/")
        return f"{base}{request_path.removeprefix(self.strip)}"


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
    def __init__(self, proxy: ApiProxy, log: ApiLog) -> None:
        self.proxy, self.log = proxy, log

    def serve(self, connection: socket.socket) -> None:
        self.proxy.serve(connection, self.log)

    def turn_away(self, connection: socket.socket, why: str) -> None:
        self.proxy.turn_away(connection, why, self.log)


__all__ = [
    "ANTHROPIC_ROUTES",
    "CLIENT_TIMEOUT",
    "FORWARD_PORT",
    "MAX_CONNECTIONS",
    "MAX_REQUEST_BYTES",
    "OPENAI_ROUTES",
    "ApiLog",
    "ApiProxy",
    "Forward",
]
