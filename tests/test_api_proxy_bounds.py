"""The jail's API proxy is an allow-list with bounds (issue 39): a route Claude Code does not
call in a run (`GET /v1/files`, `DELETE /v1/files/x`, batches, skills, the organisation's
keys) is a 403 recorded in the attempt's ApiLog and never reaches the upstream, with or
without the key; a body over the cap is refused before it is read; a body under it is read
whole (the dialect's allow-list reads it) within the jail's budget of bodies held at once (the
proxy's memory stays bounded however many a jail sends); a silent connection is closed; a jail
holding more connections than its cap has the rest turned away. And the proxy reads the
model's tool calls from the replies it relays (JSON and server-sent events, each dialect).
Real sockets; the upstream a loopback fake that records what reached it.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from skill_eval.executors.agents.chat_dialect import CHAT
from skill_eval.executors.agents.responses_dialect import RESPONSES
from skill_eval.executors.claude.dialect import MESSAGES
from skill_eval.jail.api_body import Held, read_body
from skill_eval.jail.api_log import ApiLog
from skill_eval.jail.api_proxy import MAX_HELD_BYTES, MAX_REQUEST_BYTES, ApiProxy
from skill_eval.jail.pipes import relay_api
from skill_eval.jail.wire import ApiDialect
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI

FORBIDDEN = [
    ("GET", "/v1/files"),
    ("DELETE", "/v1/files/x"),
    ("GET", "/v1/messages/batches"),
    ("POST", "/v1/messages/batches"),
    ("POST", "/v1/skills"),
    ("GET", "/v1/organizations/api_keys"),
    ("GET", "/v1/models"),
    ("GET", "/v1/messages"),
    ("HEAD", "/api/hello"),
    ("POST", "/v1/messages/../files"),
    ("POST", "v1/messages"),
]
MESSAGE = b'{"model":"claude-x","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}'


def messages(url: str, key: str | None = None, **options: Any) -> ApiProxy:
    """A proxy speaking Claude Code's Messages dialect to `url`."""
    return ApiProxy(url, MESSAGES.credentials(key), MESSAGES, **options)


def openai(url: str, key: str | None, dialect: ApiDialect) -> ApiProxy:
    return ApiProxy(url, dialect.credentials(key), dialect)


def sized(size: int) -> bytes:
    """A Messages body of exactly `size` bytes (its text padded)."""
    head, tail = b'{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"', b'"}]}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def exchange(forward: Any, request: bytes, *, shut: bool = True) -> bytes:
    """One raw request through a jail's connection (socketpair) to `forward`; all it read."""
    client, jail_side = socket.socketpair()
    worker = threading.Thread(target=forward.serve, args=(jail_side,), daemon=True)
    worker.start()
    try:
        client.sendall(request)
        if shut:
            client.shutdown(socket.SHUT_WR)
    except OSError:  # the proxy stopped reading (a refused body): its reply is still there
        pass
    client.settimeout(30)
    reply = b""
    while chunk := client.recv(65536):
        reply += chunk
    client.close()
    worker.join(30)
    return reply


def started_exchanges(forward: Any, request: bytes, n: int, replies: list[bytes]) -> list[Any]:
    """`n` exchanges of `request` with `forward` at once, each reply appended to `replies`."""
    threads = [
        threading.Thread(target=lambda: replies.append(exchange(forward, request)))
        for _ in range(n)
    ]
    for thread in threads:
        thread.start()
    return threads


def raw(method: str, path: str, body: bytes = b"", key: str = "sk-ant-jail-x") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nx-api-key: {key}\r\nConnection: close\r\n"
    return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


@pytest.mark.parametrize(("method", "path"), FORBIDDEN)
def test_a_route_the_agent_does_not_need_is_refused_recorded_and_never_sent(
    method: str, path: str
) -> None:
    with FakeAnthropic() as server:
        proxy = messages(server.base_url, "sk-ant-REAL")
        log = ApiLog()
        reply = exchange(proxy.observed(log), raw(method, path, b"{}"))
        assert server.requests == []  # nothing reached the upstream, with the key or without
    assert reply.startswith(b"HTTP/1.1 403")
    if method != "HEAD":
        assert b"is not allowed through the jail's forward" in reply
    assert log.record() == {"api_refused": 1, "api_refused_first": [f"{method} {path}: 403"]}
    assert log.requests == 0


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages?beta=true"])
def test_the_messages_api_is_forwarded_with_the_real_key(path: str) -> None:
    with FakeAnthropic(default="PONG") as server:
        proxy = messages(server.base_url, "sk-ant-REAL")
        log = ApiLog()
        reply = exchange(proxy.observed(log), raw("POST", path, MESSAGE, proxy.placeholder))
        count = exchange(proxy, raw("POST", "/v1/messages/count_tokens", MESSAGE))
        seen = server.requests
    assert reply.startswith(b"HTTP/1.1 200") and b"PONG" in reply
    assert b'"input_tokens"' in count
    assert [(r.method, r.path) for r in seen] == [
        ("POST", "/v1/messages"),
        ("POST", "/v1/messages/count_tokens"),
    ]
    assert log.requests == 1 and log.record() == {}


# -- request bodies: capped, held within the jail's budget --------------------------------------


class Sink:
    """A loopback upstream that reads each body in 64 KiB pieces, keeping only its size; its
    replies wait for `go` (set: at once)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.go = threading.Event()
        self.go.set()
        sizes, go = self.sizes, self.go

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the base class's name
                size = self._chunked() if "Transfer-Encoding" in self.headers else self._sized()
                if size is None:
                    return  # cut short: no whole request came
                sizes.append(size)
                go.wait(120)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def _sized(self) -> int | None:
                left = int(self.headers.get("Content-Length") or 0)
                while left and (piece := self.rfile.read(min(left, 65536))):
                    left -= len(piece)
                return None if left else int(self.headers.get("Content-Length") or 0)

            def _chunked(self) -> int | None:
                size = 0
                while chunk := int(self.rfile.readline().strip() or b"-1", 16):
                    if chunk < 0 or len(self.rfile.read(chunk + 2)) != chunk + 2:
                        return None
                    size += chunk
                self.rfile.readline()
                return size

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def sink() -> Iterator[Sink]:
    upstream = Sink()
    yield upstream
    upstream.server.shutdown()
    upstream.server.server_close()


def test_a_body_over_the_cap_is_refused_unread(sink: Sink) -> None:
    proxy = messages(sink.url, "sk-ant-REAL")
    log = ApiLog()
    head = (
        f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n"
    ).encode()
    reply = exchange(proxy.observed(log), head + b"x" * 1000)
    assert reply.startswith(b"HTTP/1.1 413") and b"is over the request cap" in reply
    assert sink.sizes == [] and log.record()["api_refused_first"] == ["POST /v1/messages: 413"]


def test_a_chunked_body_over_the_cap_is_cut_off_and_never_completes_upstream(sink: Sink) -> None:
    proxy = messages(sink.url)
    piece = b"x" * (1024 * 1024)
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(33)) + b"0\r\n\r\n"
    head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    reply = exchange(proxy, head + body)
    assert reply.startswith(b"HTTP/1.1 413")
    assert sink.sizes == []  # the upstream never read a whole request


@pytest.mark.parametrize("size", [1000, 3 * 1024 * 1024])
def test_a_chunked_body_under_the_cap_goes_on_whole(sink: Sink, size: int) -> None:
    proxy = messages(sink.url)
    data = sized(size)
    pieces = [data[i : i + 1000] for i in range(0, size, 1000)]
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    head = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    reply = exchange(proxy, head + body + b"0\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 200") and sink.sizes == [size]


def test_a_jail_holds_at_most_its_budget_of_bodies_at_once(sink: Sink) -> None:
    """Four 24 MiB bodies at once from one jail: the proxy reads each whole (its allow-list
    reads all of it), but holds at most MAX_HELD_BYTES of them: the two that fit go on (their
    replies wait until all four were answered or sent), the others are turned away with a
    503 before they are read. Before bodies were read whole, they were streamed; before that,
    four bodies of 64 MiB took 982 MiB."""
    proxy = messages(sink.url, "sk-ant-REAL")
    forward = proxy.observed(ApiLog())  # one jail: one budget
    size = 24 * 1024 * 1024
    assert 2 * size <= MAX_HELD_BYTES < 3 * size
    request = raw("POST", "/v1/messages", sized(size))  # made before the measure starts
    replies: list[bytes] = []
    sink.go.clear()  # the first two stay held until the test lets them go
    tracemalloc.start()
    try:
        threads = started_exchanges(forward, request, 4, replies)
        deadline = time.monotonic() + 120
        while len(replies) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the two turned away answer at once; the others wait for `go`
        turned = list(replies)
        sink.go.set()
        for thread in threads:
            thread.join(120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        sink.go.set()
    assert len(turned) == 2 and all(r.startswith(b"HTTP/1.1 503") for r in turned), turned
    assert b"request bodies already" in turned[0]
    assert sink.sizes == [size] * 2 and len(replies) == 4
    # held: two bodies (each read into one buffer of its length, not grown then copied: that
    # took 121 MiB when two reads overlapped); parsed: one at a time, its text decoded twice
    assert peak < 4.5 * size, f"peak {peak / 2**20:.1f} MiB"


def test_a_big_bodys_parsed_form_lives_only_under_its_jails_lock(sink: Sink) -> None:
    """Two 24 MiB bodies at once, each admitted slowly: the second is parsed only once the
    first's parsed form is gone. The lock once covered the parse alone, and a form kept for
    its check beside the next one's parse took the proxy to 120 MiB."""

    def slow_admission(request: Any) -> None:
        time.sleep(1.0)  # the first's check still holds its parsed body when the second is read

    proxy = ApiProxy(sink.url, MESSAGES.credentials("k"), MESSAGES, admit=slow_admission)
    forward = proxy.observed(ApiLog())
    size = 24 * 1024 * 1024
    request = raw("POST", "/v1/messages", sized(size))
    replies: list[bytes] = []
    tracemalloc.start()
    try:
        threads = started_exchanges(forward, request, 2, replies)
        for thread in threads:
            thread.join(120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(replies) == 2 and all(r.startswith(b"HTTP/1.1 200") for r in replies)
    # held: two bodies; parsed and checked: one, its text decoded twice on the way
    assert peak < 4.5 * size, f"peak {peak / 2**20:.1f} MiB"


def _chunked(body: bytes, piece: int = 65536) -> bytes:
    framed = [
        b"%x\r\n%s\r\n" % (len(body[i : i + piece]), body[i : i + piece])
        for i in range(0, len(body), piece)
    ]
    return b"".join(framed) + b"0\r\n\r\n"


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_body_is_read_into_one_buffer_of_its_length(framing: str) -> None:
    """Growing a buffer piece by piece, then copying it out, held each body twice over for
    a moment: two such reads at once took the proxy past its bound. A chunked body grows
    one buffer and is handed on as it is."""
    size = 24 * 1024 * 1024
    ours, theirs = socket.socketpair()
    body = sized(size)
    if framing == "chunked":
        sent, headers = _chunked(body), {"Transfer-Encoding": "chunked"}
    else:
        sent, headers = body, {"Content-Length": str(size)}
    sender = threading.Thread(target=lambda: (theirs.sendall(sent), theirs.close()))
    handler = SimpleNamespace(headers=headers, rfile=ours.makefile("rb"))
    held = Held(MAX_HELD_BYTES)
    tracemalloc.start()
    try:
        sender.start()
        data = read_body(handler, held)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        sender.join(30)
        ours.close()
    assert data == body and held.used == size
    assert peak < 1.2 * size, f"peak {peak / 2**20:.1f} MiB"


def test_a_silent_connection_is_closed(sink: Sink) -> None:
    proxy = messages(sink.url, client_timeout=0.3)
    log = ApiLog()
    started = time.monotonic()
    reply = exchange(
        proxy.observed(log),
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\npartial",
        shut=False,  # the jail keeps the connection open and sends nothing more
    )
    assert (
        reply == b"" and time.monotonic() - started < 60
    )  # closed by the 0.3 s timeout, not left open
    assert sink.sizes == [] and log.requests == 0


# -- connections per jail ----------------------------------------------------------------------


def test_connections_past_the_jails_cap_are_turned_away_and_recorded(sink: Sink) -> None:
    proxy = messages(sink.url, client_timeout=30)
    log = ApiLog()
    channel, holder = socket.socketpair()
    relay = threading.Thread(target=relay_api, args=(channel, proxy.observed(log), 4), daemon=True)
    relay.start()
    clients = []
    for _ in range(6):  # what the holder does with each connection the CLI opens
        client, jail_side = socket.socketpair()
        socket.send_fds(holder, [b"c"], [jail_side.fileno()])
        jail_side.close()
        clients.append(client)
    for client in clients:
        client.settimeout(10)
    turned = [clients[4].recv(4096), clients[5].recv(4096)]
    assert all(r.startswith(b"HTTP/1.1 503") for r in turned)
    assert b"over the jail's 4 open API connections" in turned[0]
    clients[0].sendall(raw("POST", "/v1/messages", b"{}"))  # the first four are served
    assert clients[0].recv(4096).startswith(b"HTTP/1.1 200")
    clients[0].close()
    time.sleep(0.2)  # its slot comes free once its thread ends
    late, jail_side = socket.socketpair()
    socket.send_fds(holder, [b"c"], [jail_side.fileno()])
    jail_side.close()
    late.settimeout(10)
    late.sendall(raw("POST", "/v1/messages", b"{}"))
    assert late.recv(4096).startswith(b"HTTP/1.1 200")
    assert log.refusals == 2
    for client in (*clients, late, holder):
        client.close()
    relay.join(10)


# -- the model's tool calls, read from the replies ---------------------------------------------

TOOL_RULE = {
    "tool_use": [
        {"name": "Write", "input": {"file_path": "/w/a.md", "content": "x" * 300}, "id": "t1"},
        {"name": "Bash", "input": {"command": "ls"}, "id": "t2"},
    ]
}


@pytest.mark.parametrize("stream", [False, True])
def test_the_model_tool_calls_are_read_from_a_messages_reply(stream: bool) -> None:
    body = MESSAGE[:-1] + (b',"stream":true}' if stream else b"}")
    with FakeAnthropic(rules=[TOOL_RULE]) as server:
        proxy = messages(server.base_url)
        log = ApiLog()
        exchange(proxy.observed(log), raw("POST", "/v1/messages", body))
        exchange(proxy.observed(log), raw("POST", "/v1/messages", body))
    assert [(c.id, c.name, c.reply, c.opened) for c in log.sent()] == [
        ("t1", "Write", 1, 0),
        ("t2", "Bash", 1, 0),
        ("t1", "Write", 2, 1),
        ("t2", "Bash", 2, 1),
    ]
    assert log.sent()[0].input == {"file_path": "/w/a.md", "content": "x" * 300}
    assert log.unread_replies == 0


@pytest.mark.parametrize(
    ("path", "stream"),
    [
        ("/v1/chat/completions", False),
        ("/v1/chat/completions", True),
        ("/v1/responses", False),
        ("/v1/responses", True),
    ],
)
def test_the_model_tool_calls_are_read_from_an_openai_reply(path: str, stream: bool) -> None:
    chat = path.endswith("completions")
    said = {"role": "user", "content": "hi"}
    fields = f'"messages":[{_json(said)}]' if chat else '"input":"hi","store":false'
    body = f'{{"model":"m",{fields},"stream":{str(stream).lower()}}}'.encode()
    with FakeOpenAI(rules=[TOOL_RULE]) as server:
        proxy = openai(f"{server.base_url}/v1", "sk-REAL", CHAT if chat else RESPONSES)
        log = ApiLog()
        exchange(proxy.observed(log), raw("POST", path, body))
    calls = log.sent()
    assert [(c.id, c.name) for c in calls] == [("t1", "Write"), ("t2", "Bash")]
    assert calls[1].input == {"command": "ls"} and log.unread_replies == 0


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_is_recorded_before_the_agent_can_read_it(stream: bool) -> None:
    """The check runs as soon as the CLI ends, which may be the moment it read a call (a
    trigger attempt stops at the skill's invocation): the call must be in the record by then."""
    body = MESSAGE[:-1] + (b',"stream":true}' if stream else b"}")
    with FakeAnthropic(rules=[TOOL_RULE]) as server:
        proxy = messages(server.base_url)
        log = ApiLog()
        client, jail_side = socket.socketpair()
        threading.Thread(target=proxy.observed(log).serve, args=(jail_side,), daemon=True).start()
        client.sendall(raw("POST", "/v1/messages", body))
        got, seen_when_read = b"", []
        while chunk := client.recv(65536):
            got += chunk
            after = got[got.index(b'"t2"') :] if b'"t2"' in got else b""
            # the bytes that complete t2: its block's stop event, or the JSON body's end
            if b"content_block_stop" in after if stream else after.rstrip().endswith(b"}"):
                seen_when_read.append([c.id for c in log.sent()])
                break
        client.close()
    assert seen_when_read and seen_when_read[-1] == ["t1", "t2"]
