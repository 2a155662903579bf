"""The jail's API proxy keeps its upstream connections alive (issue 29): a request from a jail
costs what the CLI's own request would, not a new connection (a TLS handshake and a CA bundle
loaded, with the real API) each time; a connection the upstream closed, or whose response the
jail did not read to its end, is never used again. Real sockets against a loopback upstream;
the jail's side is a socket pair handed to `serve`, as relay_api does."""

from __future__ import annotations

import http.server
import itertools
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from skill_eval.executors.claude.dialect import MESSAGES
from skill_eval.jail.api_proxy import ApiProxy


@dataclass
class Upstream:
    """A loopback API: answers each POST with `echo:BODY` (or 1 MB for a body naming the
    model `big`), counting connections; `close_after` closes each connection after that
    reply."""

    # one entry per connection: (client address, handler id), the id telling apart two
    # connections that came from the same reused ephemeral port
    connections: set[tuple[tuple[str, int], int]] = field(default_factory=set)
    close_after: bool = False
    port: int = 0


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    state = Upstream()
    counted = itertools.count()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:  # one handler per connection
            super().setup()
            self.number = next(counted)

        def do_POST(self) -> None:  # noqa: N802 - the base class's name
            state.connections.add((self.client_address, self.number))
            body = self.rfile.read(int(self.headers["Content-Length"]))
            reply = b"x" * 1_000_000 if body == said(b"big") else b"echo:" + body
            self.send_response(200)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            self.close_connection = state.close_after

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state
    server.shutdown()
    server.server_close()


def said(model: bytes) -> bytes:
    """A Messages body the forward passes, told apart by its model."""
    return b'{"model":"%s","max_tokens":1,"messages":[]}' % model


def ask(proxy: ApiProxy, model: bytes, *, read_all: bool = True) -> bytes:
    """One request from a jail's connection (closed after it); the reply as the jail read it."""
    body = said(model)
    client, jail_side = socket.socketpair()
    worker = threading.Thread(target=proxy.serve, args=(jail_side,), daemon=True)
    worker.start()
    client.sendall(
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    reply = client.recv(4096) if not read_all else b""
    while read_all and (chunk := client.recv(65536)):
        reply += chunk
    client.close()  # a jail that read part of a reply has ended
    worker.join(10)
    return reply


def test_requests_from_many_jails_share_one_upstream_connection(upstream: Upstream) -> None:
    proxy = ApiProxy(f"http://127.0.0.1:{upstream.port}", {"x-api-key": "REAL"}, MESSAGES)
    replies = [ask(proxy, b"r%d" % i) for i in range(5)]
    assert [r.rsplit(b"\r\n\r\n", 1)[1] for r in replies] == [
        b"echo:" + said(b"r%d" % i) for i in range(5)
    ]
    assert len(upstream.connections) == 1


def test_a_connection_the_upstream_closed_is_replaced_not_reused(upstream: Upstream) -> None:
    upstream.close_after = True  # it says so (Connection: close) ...
    proxy = ApiProxy(f"http://127.0.0.1:{upstream.port}", {}, MESSAGES)
    assert ask(proxy, b"a").endswith(said(b"a")) and ask(proxy, b"b").endswith(said(b"b"))
    assert len(upstream.connections) == 2
    upstream.close_after = False
    ask(proxy, b"c")
    for idle in list(proxy._idle):  # ... or not: it goes away while idle
        assert idle.sock is not None
        idle.sock.shutdown(socket.SHUT_RDWR)
    assert ask(proxy, b"d").endswith(said(b"d"))  # sent again on a new connection
    assert len(upstream.connections) == 4


def test_a_reply_the_jail_stopped_reading_never_reaches_the_next_request(
    upstream: Upstream,
) -> None:
    proxy = ApiProxy(f"http://127.0.0.1:{upstream.port}", {}, MESSAGES)
    ask(proxy, b"big", read_all=False)  # the jail hung up after a few KB of a 1 MB reply
    assert ask(proxy, b"next").endswith(b"\r\n\r\necho:" + said(b"next"))
    assert len(upstream.connections) == 2  # the half-read connection was closed


def test_a_jail_cannot_smuggle_a_reply_onto_another_jails_request(upstream: Upstream) -> None:
    """The attack on a shared upstream connection: a jail sends a body whose framing lies
    (Transfer-Encoding beside a Content-Length, a second request hidden after the first), so
    that a kept-alive connection would carry an extra reply for the next jail to read. The
    proxy frames each request itself: the hidden one is only ever the sender's own."""
    proxy = ApiProxy(f"http://127.0.0.1:{upstream.port}", {}, MESSAGES)
    forged = said(b"forged")
    hidden = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(forged)
    hidden += forged
    attacker, jail_side = socket.socketpair()
    worker = threading.Thread(target=proxy.serve, args=(jail_side,), daemon=True)
    worker.start()
    first = said(b"first")
    attacker.sendall(
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(first), first) + hidden
    )
    attacker.shutdown(socket.SHUT_WR)
    seen = b""
    while chunk := attacker.recv(65536):
        seen += chunk
    attacker.close()
    worker.join(10)
    assert b"echo:" + first in seen and b"echo:" + forged in seen  # both to their sender
    for model in (b"one", b"two"):  # every later jail reads its own reply, on the shared link
        assert ask(proxy, model).endswith(b"\r\n\r\necho:" + said(model))
    assert len(upstream.connections) == 1
