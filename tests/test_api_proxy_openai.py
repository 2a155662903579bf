"""The jail's API forward for an OpenAI-style agent (OpenCode, Codex): the placeholder bearer
token becomes the real key, only the model endpoints are forwarded (below the upstream's own
path), server-sent events pass as they come, and an attempt's replies are counted (ApiLog).
And the jail's Landlock domain for a whole agent CLI (holder.py --confine): TCP to the
forward only, the holder out of reach. Real sockets, a real upstream on loopback."""

from __future__ import annotations

import http.server
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from skill_eval.executors.agents.chat_dialect import CHAT
from skill_eval.executors.agents.responses_dialect import RESPONSES
from skill_eval.jail import Limits
from skill_eval.jail.api_proxy import FORWARD_PORT, ApiLog, ApiProxy
from skill_eval.jail.bubblewrap import problem as jail_problem
from skill_eval.jail.session import JailedCommand

needs_jail = pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))


@dataclass
class Upstream:
    port: int
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    status: int = 200
    # Set once the client has the first event: only then is the second sent (the client
    # seeing it first is the order of events, not a timing a loaded machine could upset).
    first_seen: threading.Event = field(default_factory=threading.Event)
    waited_for_client: bool = False


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    """An API on loopback: records (method, path, headers); answers `status`, in two SSE
    events, the second once the client has the first (or after a minute)."""
    state = Upstream(0)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the base class's name
            state.seen.append(("POST", self.path, {k.lower(): v for k, v in self.headers.items()}))
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(state.status)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"data: one\n\n")
            self.wfile.flush()
            state.waited_for_client = state.first_seen.wait(60)
            self.wfile.write(b"data: two\n\n")
            self.close_connection = True

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state
    server.shutdown()


def ask(
    proxy: ApiProxy, request: bytes, log: ApiLog | None = None, upstream: Upstream | None = None
) -> list[bytes]:
    """Send one raw request through the proxy; what came back, chunk by chunk. `upstream` is
    told when the first event has arrived (else it sends the second after a minute)."""
    client, server_side = socket.socketpair()
    forward = proxy.observed(log) if log is not None else proxy
    threading.Thread(target=forward.serve, args=(server_side,), daemon=True).start()
    client.sendall(request)
    got = []
    while chunk := client.recv(65536):
        got.append(chunk)
        if upstream is not None and b"data: one" in b"".join(got):
            upstream.first_seen.set()
    client.close()
    return got


def openai(url: str, key: str | None, path: str = "/v1/responses") -> ApiProxy:
    """A proxy speaking the dialect of `path`'s CLI: Chat Completions (OpenCode), else
    Responses (Codex)."""
    dialect = CHAT if "chat" in path else RESPONSES
    return ApiProxy(url, dialect.credentials(key), dialect)


def post(path: str, token: str, method: str = "POST") -> bytes:
    """A request as the CLI of `path` sends it (a body its dialect passes)."""
    chat = '{"model":"m","messages":[{"role":"user","content":"hi"}]}'
    body = chat if "chat" in path else '{"model":"m","input":"hi","store":false}'
    return (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        f"Authorization: Bearer {token}\r\nConnection: close\r\n\r\n{body}"
    ).encode()


@pytest.mark.parametrize(
    ("base", "asked", "forwarded"),
    [
        ("/v1", "/v1/chat/completions", "/v1/chat/completions"),
        ("/v1", "/v1/responses", "/v1/responses"),
        ("/openai/v1", "/v1/responses", "/openai/v1/responses"),
    ],
)
def test_the_placeholder_becomes_the_key_below_the_upstreams_path(
    upstream: Upstream, base: str, asked: str, forwarded: str
) -> None:
    proxy = openai(f"http://127.0.0.1:{upstream.port}{base}", "sk-REAL", asked)
    log = ApiLog()
    reply = b"".join(ask(proxy, post(asked, proxy.placeholder), log, upstream))
    assert reply.startswith(b"HTTP/1.1 200") and b"data: two" in reply
    ((method, path, headers),) = upstream.seen
    assert (method, path) == ("POST", forwarded)
    assert headers["authorization"] == "Bearer sk-REAL"
    assert proxy.placeholder not in str(headers)
    assert log.requests == 1 and log.summary() == {} and log.last_error() is None


def test_without_a_key_the_placeholder_goes_on_for_a_local_server(upstream: Upstream) -> None:
    proxy = openai(f"http://127.0.0.1:{upstream.port}/v1", None, "/v1/chat/completions")
    ask(proxy, post("/v1/chat/completions", proxy.placeholder), upstream=upstream)
    assert upstream.seen[0][2]["authorization"] == f"Bearer {proxy.placeholder}"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/models"),
        ("POST", "/v1/files"),
        ("GET", "/v1/responses"),
        ("POST", "/v1"),
        ("POST", "/v1/chat/completions"),  # the other dialect's: Codex speaks Responses only
        ("POST", "/v1/responses/compact"),
    ],
)
def test_anything_but_the_model_endpoints_is_refused_unforwarded(
    upstream: Upstream, method: str, path: str
) -> None:
    proxy = openai(f"http://127.0.0.1:{upstream.port}/v1", "sk-REAL")
    log = ApiLog()
    reply = b"".join(ask(proxy, post(path, proxy.placeholder, method), log))
    assert reply.startswith(b"HTTP/1.1 403") and b"is not allowed" in reply
    assert upstream.seen == []
    assert log.record() == {"api_refused": 1, "api_refused_first": [f"{method} {path}: 403"]}


def test_events_pass_as_they_come_and_errors_are_counted(upstream: Upstream) -> None:
    upstream.status = 503
    proxy = openai(f"http://127.0.0.1:{upstream.port}/v1", "sk-REAL")
    log = ApiLog()
    chunks = ask(proxy, post("/v1/responses", proxy.placeholder), log, upstream)
    # the first event was not held back for the second: the client had it before it was sent
    assert upstream.waited_for_client and b"data: two" in b"".join(chunks)
    assert log.summary() == {"503": 1} and log.last_error() == 503 and log.failing()


def test_an_unreachable_upstream_is_counted_as_status_0() -> None:
    """Refused before any reply: a 400 naming the URL (no CLI resends it; the executor stops
    the run); refused after one, a 502 (test_closed_port.py)."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proxy = openai(f"http://127.0.0.1:{port}/v1", "sk-REAL")
    log = ApiLog()
    reply = b"".join(ask(proxy, post("/v1/responses", "x"), log))
    assert reply.startswith(b"HTTP/1.1 400") and b"nothing listens at http://127.0.0.1" in reply
    assert log.last_error() == 0 and log.failing() and proxy.unreachable()


# -- a whole CLI in a Landlock domain of its own ------------------------------------------------

PROBE = f"""
import os, signal, socket
def tried(what, act):
    try:
        act()
        print(what, "yes", flush=True)
    except OSError as exc:
        print(what, "no", exc.errno, flush=True)
tried("signal-holder", lambda: os.kill(2, 0))
tried("forward", lambda: socket.create_connection(("127.0.0.1", {FORWARD_PORT}), timeout=5).close())
def other():
    server = socket.create_server(("127.0.0.1", 0))
    server.close()
tried("bind", other)
"""


@needs_jail
@pytest.mark.parametrize("confine", [False, True])
def test_a_confined_cli_reaches_the_forward_and_nothing_of_the_holder(
    tmp_path: Path, confine: bool
) -> None:
    lines: list[bytes] = []
    proxy = openai("http://127.0.0.1:9/v1", None)
    limits = Limits(memory_mb=None, data_mb=2048, disk_mb=64)
    with JailedCommand("bubblewrap", limits, forward=proxy, confine=confine) as jail:
        jail.start((sys.executable, "-I", "-S", "-c", PROBE), {"PATH": "/usr/bin:/bin"})
        ended = jail.run(b"", 120, lambda line: lines.append(line) or True)
    assert ended.code == 0, ended.stderr
    said = {line.split()[0].decode(): line.split()[1].decode() for line in lines}
    assert said["forward"] == "yes"
    if confine:  # the holder out of reach, no TCP server of its own
        assert said == {"signal-holder": "no", "forward": "yes", "bind": "no"}
    else:  # what the agent's own commands could do without it
        assert said == {"signal-holder": "yes", "forward": "yes", "bind": "yes"}
