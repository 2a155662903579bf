"""The fake Anthropic server, driven by the real `anthropic` SDK and the real `claude` CLI."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Fault, Rule
from tests.fakes.faults import ERROR_REPLIES
from tests.fakes.rules import load_config

REPO = Path(__file__).resolve().parent.parent
MODEL = "claude-test-1"


def ask(text: str = "hi", **extra: Any) -> dict[str, Any]:
    """Keyword arguments for messages.create with one user message."""
    return {
        "model": MODEL,
        "max_tokens": 256,
        "messages": [{"role": "user", "content": text}],
        **extra,
    }


def client(server: FakeAnthropic, max_retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.base_url, api_key="test-key", max_retries=max_retries, timeout=60
    )


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(rules=[{"messages_contain": "hi", "text": "Hello, tester!"}]) as server:
        yield server


# -- replies -------------------------------------------------------------------------------------


def test_non_streaming_reply_and_usage(fake: FakeAnthropic) -> None:
    message = client(fake).messages.create(**ask("hi there"))
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello, tester!"
    assert message.model == MODEL
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens >= 1
    assert message.usage.output_tokens >= 1
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0


def test_default_reply_when_no_rule_matches() -> None:
    with FakeAnthropic(default="nothing matched") as server:
        message = client(server).messages.create(**ask("anything"))
        assert server.requests[0].rule == "default"
    assert message.content[0].text == "nothing matched"


def test_stream_helper_yields_text_and_final_message(fake: FakeAnthropic) -> None:
    with client(fake).messages.stream(**ask("hi")) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == "Hello, tester!"
    assert final.content[0].text == "Hello, tester!"
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens >= 1
    assert fake.requests[0].stream is True


def test_create_stream_true_emits_the_api_event_sequence(fake: FakeAnthropic) -> None:
    events = [e.type for e in client(fake).messages.create(**ask("hi"), stream=True)]
    assert events[0] == "message_start"
    assert events[1] == "content_block_start"
    assert set(events[2:-3]) == {"content_block_delta"}
    assert events[-3:] == ["content_block_stop", "message_delta", "message_stop"]


@pytest.mark.parametrize("stream", [False, True])
def test_forced_tool_call_returns_the_scripted_input(stream: bool) -> None:
    rules = [{"tool_choice_name": "grade", "tool_input": {"passed": True, "score": 0.75}}]
    kwargs = ask(
        "judge this",
        tools=[{"name": "grade", "input_schema": {"type": "object"}}],
        tool_choice={"type": "tool", "name": "grade"},
    )
    with FakeAnthropic(rules=rules) as server:
        sdk = client(server)
        if stream:
            with sdk.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = sdk.messages.create(**kwargs)
    block = message.content[0]
    assert block.type == "tool_use"
    assert block.name == "grade"
    assert block.input == {"passed": True, "score": 0.75}
    assert message.stop_reason == "tool_use"


def test_tool_use_rule_names_its_tool_and_can_follow_text() -> None:
    rule = {"text": "Let me look.", "tool_use": {"name": "Read", "input": {"path": "a.py"}}}
    with FakeAnthropic(rules=[rule]) as server:
        message = client(server).messages.create(**ask())
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[1].name == "Read"
    assert message.content[1].input == {"path": "a.py"}


def test_rules_tell_system_prompt_from_messages() -> None:
    rules = [
        {"name": "skilled", "system_contains": "SKILL", "text": "with skill"},
        {"name": "tool-result", "messages_contain": "RESULT-42", "text": "saw the result"},
        {"name": "plain", "messages_contain": "SKILL", "text": "skill only in the prompt"},
    ]
    tool_result = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "ls"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "RESULT-42"}],
                }
            ],
        },
    ]
    with FakeAnthropic(rules=rules) as server:
        sdk = client(server)
        texts = [
            sdk.messages.create(**ask("x", system="You follow the SKILL.")).content[0].text,
            sdk.messages.create(**ask("mention SKILL here")).content[0].text,
            sdk.messages.create(model=MODEL, max_tokens=64, messages=tool_result).content[0].text,
        ]
        assert [r.rule for r in server.requests] == ["skilled", "plain", "tool-result"]
    assert texts == ["with skill", "skill only in the prompt", "saw the result"]


def test_rule_model_glob_has_tools_times_and_last_message() -> None:
    rules = [
        Rule(name="once", messages_contain="count", times=1, text="first"),
        Rule(name="haiku", model="claude-haiku-*", text="small model"),
        Rule(name="tools", has_tools=True, text="tools offered"),
        Rule(name="last", last_message_contains="newest", text="newest wins"),
    ]
    with FakeAnthropic(rules=rules, default="fallback") as server:
        sdk = client(server)
        assert sdk.messages.create(**ask("count")).content[0].text == "first"
        assert sdk.messages.create(**ask("count")).content[0].text == "fallback"
        haiku = dict(ask(), model="claude-haiku-9")
        assert sdk.messages.create(**haiku).content[0].text == "small model"
        tools = ask(tools=[{"name": "t", "input_schema": {"type": "object"}}])
        assert sdk.messages.create(**tools).content[0].text == "tools offered"
        history = [
            {"role": "user", "content": "newest"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "older? no"},
        ]
        reply = sdk.messages.create(model=MODEL, max_tokens=64, messages=history)
        assert reply.content[0].text == "fallback"


def test_prompt_cache_is_written_then_read() -> None:
    skill = "A long skill. " * 200
    system = [{"type": "text", "text": skill, "cache_control": {"type": "ephemeral"}}]
    with FakeAnthropic() as server:
        sdk = client(server)
        first = sdk.messages.create(**ask("one", system=system)).usage
        second = sdk.messages.create(**ask("two", system=system)).usage
    assert first.cache_creation_input_tokens > 0
    assert first.cache_read_input_tokens == 0
    assert second.cache_creation_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens


def test_count_tokens(fake: FakeAnthropic) -> None:
    counted = client(fake).messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "word " * 100}]
    )
    assert counted.input_tokens >= 100
    assert fake.requests[0].path == "/v1/messages/count_tokens"


def test_max_tokens_truncates_text() -> None:
    with FakeAnthropic(default="x" * 400) as server:
        message = client(server).messages.create(**dict(ask(), max_tokens=10))
    assert message.stop_reason == "max_tokens"
    assert len(message.content[0].text) == 40


# -- the record ----------------------------------------------------------------------------------


def test_record_keeps_request_and_redacts_credentials(fake: FakeAnthropic) -> None:
    client(fake).messages.create(**ask("hi", system="be brief"))
    (record,) = fake.requests
    assert record.method == "POST" and record.path == "/v1/messages"
    assert record.body["messages"][0]["content"] == "hi"
    assert record.system == "be brief"
    assert record.status == 200 and record.fault is None and record.rule == "rule0"
    assert record.reply["content"][0]["text"] == "Hello, tester!"
    assert "test-key" not in json.dumps(record.to_dict())
    credential = record.headers.get("x-api-key") or record.headers.get("authorization")
    assert credential == "<redacted>"
    assert fake.count == 1
    assert fake.requests_matching("be brief") == [record]
    assert fake.requests_matching("absent") == []


def test_unknown_path_gets_anthropic_404_and_is_listed(fake: FakeAnthropic) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        client(fake).models.list()
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "Not found: GET /v1/models"},
    }
    assert fake.unknown_paths == ["GET /v1/models"]


def test_invalid_request_is_a_400(fake: FakeAnthropic) -> None:
    with pytest.raises(anthropic.BadRequestError):
        client(fake).messages.create(model=MODEL, max_tokens=10, messages=[])


# -- faults --------------------------------------------------------------------------------------


def _is_connection_failure(error: BaseException) -> bool:
    # Mid-stream, the SDK lets the transport's RemoteProtocolError through unwrapped.
    return isinstance(error, anthropic.APIConnectionError) or (
        type(error).__name__ == "RemoteProtocolError"
    )


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("rate_limit", anthropic.RateLimitError),
        ("overloaded", anthropic.OverloadedError),
        ("api_error", anthropic.InternalServerError),
        ("drop_before_response", anthropic.APIConnectionError),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_error_faults_surface_as_sdk_exceptions(kind: str, expected: type, stream: bool) -> None:
    with FakeAnthropic(faults=[kind]) as server:
        with pytest.raises(expected) as caught:
            client(server).messages.create(**ask(), stream=stream)
        assert server.requests[0].fault == kind
    if isinstance(caught.value, anthropic.APIStatusError):
        status, error_type, _ = ERROR_REPLIES[kind]
        assert caught.value.status_code == status
        assert caught.value.response.json()["error"]["type"] == error_type


def test_rate_limit_sends_retry_after() -> None:
    with FakeAnthropic(faults=[Fault("rate_limit", retry_after=7)]) as server:
        with pytest.raises(anthropic.RateLimitError) as caught:
            client(server).messages.create(**ask())
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.body["error"]["type"] == "rate_limit_error"


def test_drop_mid_stream_cuts_the_stream_after_the_first_delta() -> None:
    with FakeAnthropic(faults=["drop_mid_stream"]) as server:
        seen: list[str] = []
        with pytest.raises(Exception) as caught:  # noqa: B017 - checked just below
            for event in client(server).messages.create(**ask(), stream=True):
                seen.append(event.type)
        assert _is_connection_failure(caught.value)
        with pytest.raises(anthropic.APIConnectionError):
            client(server).messages.create(**ask())
    assert seen == ["message_start", "content_block_start", "content_block_delta"]


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_body_fails_to_parse(stream: bool) -> None:
    with FakeAnthropic(faults=["malformed"]) as server:
        with pytest.raises(ValueError):
            if stream:
                list(client(server).messages.create(**ask(), stream=True))
            else:
                client(server).messages.create(**ask())
        assert server.requests[0].status == 200


@pytest.mark.parametrize("kind", ["rate_limit", "overloaded", "api_error", "drop_before_response"])
def test_sdk_retries_through_the_first_faults(kind: str) -> None:
    with FakeAnthropic(faults=[Fault(kind, first=2, retry_after_ms=1)]) as server:
        message = client(server, max_retries=2).messages.create(**ask())
        assert [r.fault for r in server.requests] == [kind, kind, None]
        assert [r.headers.get("x-stainless-retry-count") for r in server.requests] == [
            "0",
            "1",
            "2",
        ]
    assert message.content[0].type == "text"


def test_retry_after_zero_then_success() -> None:
    with FakeAnthropic(faults=[Fault("rate_limit", first=1, retry_after=0)]) as server:
        client(server, max_retries=1).messages.create(**ask())
        assert [r.status for r in server.requests] == [429, 200]


def test_nth_fault_counts_per_path() -> None:
    with FakeAnthropic(faults=[Fault("api_error", nth=[2, 3])]) as server:
        sdk = client(server)
        sdk.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "x"}])
        sdk.messages.create(**ask())
        for _ in range(2):
            with pytest.raises(anthropic.InternalServerError):
                sdk.messages.create(**ask())
        sdk.messages.create(**ask())
        assert [r.status for r in server.requests] == [200, 200, 500, 500, 200]


def test_rate_faults_follow_the_seed() -> None:
    def pattern(seed: int) -> list[int | None]:
        with FakeAnthropic(faults=[Fault("overloaded", rate=0.5)], seed=seed) as server:
            sdk = client(server)
            for _ in range(12):
                try:
                    sdk.messages.create(**ask())
                except anthropic.OverloadedError:
                    pass
            return [r.status for r in server.requests]

    first = pattern(3)
    assert first == pattern(3)
    assert 529 in first and 200 in first


def test_rule_can_inject_a_fault_and_faults_can_change_live(fake: FakeAnthropic) -> None:
    fake.add_rule({"messages_contain": "boom", "fault": "529"})
    fake.set_rules([{"messages_contain": "boom", "fault": "529"}, "fine"])
    sdk = client(fake)
    with pytest.raises(anthropic.OverloadedError):
        sdk.messages.create(**ask("boom"))
    assert sdk.messages.create(**ask("calm")).content[0].text == "fine"
    fake.add_fault("api_error", first=99)
    with pytest.raises(anthropic.InternalServerError):
        sdk.messages.create(**ask("calm"))
    fake.clear_faults()
    assert fake.faults == []
    assert sdk.messages.create(**ask("calm")).content[0].text == "fine"


def test_bad_rules_and_faults_are_rejected_with_the_valid_choices() -> None:
    with pytest.raises(ValueError, match="valid keys"):
        FakeAnthropic(rules=[{"sytem_contains": "typo"}])
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault("teapot")
    with pytest.raises(ValueError, match="at most one"):
        Fault("api_error", first=1, rate=0.5)


# -- latency, concurrency, lifecycle --------------------------------------------------------------


def test_latency_does_not_serialise_concurrent_requests() -> None:
    with FakeAnthropic(latency=1.0) as server:
        sdk = client(server)
        with ThreadPoolExecutor(max_workers=16) as pool:
            replies = list(pool.map(lambda i: sdk.messages.create(**ask(f"n{i}")), range(16)))
        spans = [(r.time, r.replied_at or r.time) for r in server.requests]
    assert len(replies) == 16
    # Served one at a time, no request would arrive while another waits out its latency;
    # counted from the server's record, not timed, so a loaded machine cannot fail it.
    most = max(sum(start <= at < end for start, end in spans) for at, _ in spans)
    assert most >= 2, spans


def test_rule_latency_replaces_the_global_latency() -> None:
    # Both ways, with bounds a loaded machine cannot break: a rule's 0 under a global 60 s
    # (answered well before the minute), a rule's 0.4 s under a global 0 (never sooner).
    with FakeAnthropic(rules=[{"messages_contain": "fast", "latency": 0}], latency=60) as server:
        started = time.perf_counter()
        client(server).messages.create(**ask("fast"))
        fast = time.perf_counter() - started
    with FakeAnthropic(rules=[{"messages_contain": "slow", "latency": 0.4}], latency=0) as server:
        started = time.perf_counter()
        client(server).messages.create(**ask("slow"))
        slow = time.perf_counter() - started
    assert fast < 30 and slow >= 0.4, (fast, slow)


def test_stop_is_prompt_and_leaves_no_threads() -> None:
    before = set(threading.enumerate())
    server = FakeAnthropic(latency=600).start()
    idle = http.client.HTTPConnection("127.0.0.1", server.port)
    idle.connect()  # an open keep-alive connection with no request on it
    waiting = threading.Thread(target=lambda: _swallow(client(server).messages.create, **ask()))
    waiting.start()
    deadline = time.monotonic() + 60  # the request waits in the server (polled: load is slower)
    while server.count < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.count == 1
    started = time.perf_counter()
    server.stop()
    waiting.join(60)
    assert time.perf_counter() - started < 60  # prompt: not the 600 s the request would wait
    idle.close()
    assert set(threading.enumerate()) - before == set()


def _swallow(call: Any, **kwargs: Any) -> None:
    try:
        call(**kwargs)
    except anthropic.AnthropicError:
        pass


def test_parallel_servers_get_their_own_ports() -> None:
    with FakeAnthropic() as one, FakeAnthropic() as two:
        assert one.port != two.port
        client(one).messages.create(**ask())
        assert (one.count, two.count) == (1, 0)


# -- rules files and the command line -------------------------------------------------------------


def test_rules_file_yaml_and_json(tmp_path: Path) -> None:
    yaml_file = tmp_path / "rules.yaml"
    yaml_file.write_text(
        "latency: 0.0\n"
        "faults:\n  - {kind: '429', first: 1, retry_after_ms: 1}\n"
        "default: {text: default reply}\n"
        "rules:\n"
        "  - name: judge\n"
        "    match: {tool_choice_name: verdict}\n"
        "    reply: {tool_input: {passed: true}}\n",
        encoding="utf-8",
    )
    json_file = tmp_path / "rules.json"
    json_file.write_text(json.dumps([{"system_contains": "x", "text": "y"}]), encoding="utf-8")
    config = load_config(yaml_file)
    with FakeAnthropic(
        config["rules"], default=config["default"], faults=config["faults"]
    ) as server:
        sdk = client(server, max_retries=1)
        assert sdk.messages.create(**ask()).content[0].text == "default reply"
    assert load_config(json_file)["rules"] == [{"system_contains": "x", "text": "y"}]


def test_command_line_prints_base_url_and_serves(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {messages_contain: ping, text: pong}\n", encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.anthropic_server",
            "--rules",
            str(rules),
            "--record",
            str(record),
            "--fault",
            "api_error:nth=2",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        sdk = anthropic.Anthropic(base_url=base_url, api_key="k", max_retries=0)
        assert sdk.messages.create(**ask("ping")).content[0].text == "pong"
        with pytest.raises(anthropic.InternalServerError):
            sdk.messages.create(**ask("ping"))
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "2 requests" in err
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    assert [(r["status"], r["fault"]) for r in lines] == [(200, None), (500, "api_error")]


# -- the real claude CLI ---------------------------------------------------------------------------


# Read at import: the autouse isolation fixture clears SKILL_EVAL_* before each test runs.
CONFIGURED_CLAUDE_BIN = os.environ.get("SKILL_EVAL_CLAUDE_BIN")


def _claude_bin() -> str | None:
    configured = CONFIGURED_CLAUDE_BIN
    default = REPO / ".tools" / "claude-cli" / "node_modules" / ".bin" / "claude"
    for candidate in (configured, str(default) if default.exists() else None):
        if candidate and shutil.which(candidate):
            return candidate
    return None


def run_claude(
    server: FakeAnthropic,
    tmp_path: Path,
    prompt: str,
    *flags: str,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run `claude -p` offline and isolated against the fake; returns the JSON envelope."""
    binary = _claude_bin()
    if binary is None:
        pytest.skip(
            "claude CLI not installed: run scripts/install_claude_cli.sh "
            "or set SKILL_EVAL_CLAUDE_BIN"
        )
    home, config, work = (tmp_path / n for n in ("home", "config", "work"))
    for folder in (home, config, work):
        folder.mkdir(exist_ok=True)
    isolated = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        **(env or {}),
    }
    proc = subprocess.run(
        [
            binary,
            "-p",
            prompt,
            "--output-format",
            "json",
            "--setting-sources",
            "",
            "--strict-mcp-config",
            "--no-session-persistence",
            *flags,
        ],
        cwd=work,
        env=isolated,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout, f"claude printed nothing; rc={proc.returncode} stderr={proc.stderr}"
    envelope: dict[str, Any] = json.loads(proc.stdout)
    envelope["_returncode"] = proc.returncode
    return envelope


def test_real_claude_cli_returns_the_scripted_reply(tmp_path: Path) -> None:
    rules = [
        {
            "system_contains": "SKILL-MARKER",
            "last_message_contains": "say hi",
            "text": "hi from the fake",
        }
    ]
    with FakeAnthropic(rules=rules) as server:
        envelope = run_claude(
            server,
            tmp_path,
            "say hi",
            "--tools",
            "",
            "--model",
            "claude-sonnet-4-5",
            "--append-system-prompt",
            "SKILL-MARKER",
        )
        requests = server.requests
    assert envelope["_returncode"] == 0
    assert envelope["is_error"] is False
    assert envelope["result"] == "hi from the fake"
    assert envelope["usage"]["output_tokens"] >= 1
    assert envelope["total_cost_usd"] > 0
    assert [(r.method, r.path, r.query, r.stream) for r in requests] == [
        ("POST", "/v1/messages", "beta=true", True)
    ]
    (request,) = requests
    assert request.model == "claude-sonnet-4-5"
    assert request.headers["x-api-key"] == "<redacted>"
    assert "SKILL-MARKER" in request.system
    assert server.unknown_paths == []


def test_real_claude_cli_runs_a_tool_loop(tmp_path: Path) -> None:
    target = tmp_path / "work" / "out.txt"
    rules = [
        {
            "name": "write",
            "messages_contain": "make the file",
            "times": 1,
            "tool_use": {"name": "Write", "input": {"file_path": str(target), "content": "made"}},
        },
        {"name": "done", "last_message_contains": "File created", "text": "file written"},
    ]
    with FakeAnthropic(rules=rules) as server:
        envelope = run_claude(
            server,
            tmp_path,
            "make the file",
            "--tools",
            "Write",
            "--allowedTools",
            "Write",
            "--max-turns",
            "3",
        )
        assert [r.rule for r in server.requests] == ["write", "done"]
    assert envelope["result"] == "file written"
    assert envelope["num_turns"] == 2
    assert target.read_text(encoding="utf-8") == "made"


def test_real_claude_cli_reports_api_errors(tmp_path: Path) -> None:
    with FakeAnthropic(faults=[Fault("overloaded", retry_after_ms=1)]) as server:
        envelope = run_claude(
            server, tmp_path, "say hi", "--tools", "", env={"CLAUDE_CODE_MAX_RETRIES": "1"}
        )
        assert [r.status for r in server.requests] == [529, 529]
    assert envelope["_returncode"] == 1
    assert envelope["is_error"] is True
    assert envelope["api_error_status"] == 529


def test_a_client_that_resets_its_connection_prints_no_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A client killed mid-connection (run_eval's early stop, a jail ended) sends a reset: the
    fake serves on, without a traceback in a benchmark's output."""
    import socket
    import struct

    with FakeAnthropic(default="ok") as fake:
        host, port = fake.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as client:
            client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\n\r\n{")
            time.sleep(0.2)  # the handler is reading the body
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        time.sleep(0.2)  # the reset reaches the handler
        reply = anthropic.Anthropic(base_url=fake.base_url, api_key="k").messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert reply.content[0].text == "ok"  # type: ignore[union-attr]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err, err
