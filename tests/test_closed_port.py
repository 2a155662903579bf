"""Issue 37: a base URL where nothing listens is a set-up error, like a 401, not an outage to
retry: `skill-eval run` stops before any attempt (exit 3, "nothing listens at URL"), and a
connection refused before any request of the run was answered stops the run at its first
attempt. A refusal after a reply is the server going down mid-run: retried as before. Real
executors, real sockets on loopback; the agent CLI's case through the jail's API forward."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.executors.agents.chat_dialect import CHAT
from skill_eval.executors.base import create_executor
from skill_eval.jail.api_proxy import ApiLog, ApiProxy
from tests.agent_runs import needs
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import DEMO_SKILL, contains_task, run_cli, write_suite


def free_port() -> int:
    """A port nothing listens on: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def closed() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # a key: the port is the problem
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield


def request() -> ExecutionRequest:
    return ExecutionRequest(
        task=Task(id="t", prompt="Say hi", judge={"type": "contains", "expected": ["hi"]}),
        skill=None,
        arm="candidate",
        attempt=0,
        timeout_seconds=20,
    )


EXECUTORS = {
    "openai": lambda url: ("--executor", "openai", "--model", "m", "--base-url", url),
    "anthropic": lambda url: ("--executor", "anthropic", "--base-url", url),
}


@pytest.mark.parametrize("executor", sorted(EXECUTORS))
def test_nothing_listening_stops_the_run_before_any_attempt(
    tmp_path: Path, closed: str, clean_env: None, executor: str
) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("a", "x"), contains_task("b", "y")])
    state = tmp_path / "state"
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(DEMO_SKILL),
        "--task-suite",
        str(suite),
        "--state-root",
        str(state),
        *EXECUTORS[executor](closed),
        "-q",
    )
    assert code == 3, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: nothing listens at {closed} "), err
    assert not list(state.rglob("attempts.jsonl"))  # no attempt was made, none retried


@pytest.mark.parametrize("executor", ["openai", "anthropic"])
def test_a_refusal_before_any_reply_is_fatal_and_after_one_an_outage(
    closed: str, executor: str
) -> None:
    """Run-time: the first attempt refused (the server gone after preflight) is fatal, with
    the one line; a refusal once the server has answered in this run is retried."""
    fake = FakeOpenAI if executor == "openai" else FakeAnthropic
    options = {"model": "m"} if executor == "openai" else {"env": {"ANTHROPIC_API_KEY": "k"}}
    first = create_executor(executor, {**options, "base_url": closed}).run(request())
    assert first.failure.stops_run and not first.failure.retry
    assert first.failure is not None and first.failure.message.startswith(
        f"nothing listens at {closed} "
    )
    with fake(default="hi") as server:
        url = server.v1_url if executor == "openai" else server.base_url
        running = create_executor(executor, {**options, "base_url": url})
        assert running.run(request()).failure is None
    later = running.run(request())  # the same port, nobody there any more
    assert later.failure is not None and "nothing listens" not in later.failure.message
    assert later.failure.retry and not later.failure.stops_run


def ask_through(proxy: ApiProxy) -> bytes:
    """One request from a jail's side of the forward; the raw reply."""
    client, server_side = socket.socketpair()
    threading.Thread(target=proxy.observed(ApiLog()).serve, args=(server_side,)).start()
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    client.sendall(f"{head}Connection: close\r\n\r\n{body}".encode())
    got = b""
    while chunk := client.recv(65536):
        got += chunk
    client.close()
    return got


def test_the_forward_says_nothing_listens_until_the_upstream_has_answered(closed: str) -> None:
    """The agent CLIs reach the API through the jail's forward: a refused upstream before any
    reply is a 400 (no CLI retries it) naming the URL, and the proxy reports it; a refusal
    after a reply is a 502 (an outage, which the CLIs retry)."""
    proxy = ApiProxy(f"{closed}/v1", {}, CHAT)
    reply = ask_through(proxy)
    assert reply.startswith(b"HTTP/1.1 400") and f"nothing listens at {closed}".encode() in reply
    assert proxy.unreachable()
    with FakeOpenAI(default="hi") as server:
        running = ApiProxy(server.v1_url, {}, CHAT)
        assert ask_through(running).startswith(b"HTTP/1.1 200")
    assert ask_through(running).startswith(b"HTTP/1.1 502")  # the same port, closed now
    assert not running.unreachable()


@needs("opencode")
def test_opencode_against_a_closed_port_stops_at_once(tmp_path: Path, clean_env: None) -> None:
    """OpenCode took 4.3 minutes against a closed port: preflight stops the run now."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    suite = write_suite(tmp_path / "suite", [contains_task("a", "x")])
    state = tmp_path / "state"
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(DEMO_SKILL),
        "--task-suite",
        str(suite),
        "--state-root",
        str(state),
        "--executor",
        "opencode",
        "--model",
        "fake-model",
        "--executor-option",
        f"base_url={url}",
        "-q",
    )
    assert code == 3, err
    assert err.startswith(f"Error: nothing listens at {url} "), err
    assert not list(state.rglob("attempts.jsonl"))
