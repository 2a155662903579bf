"""The fake OpenAI server (Chat Completions and Responses), driven by the real `openai` SDK and
by raw HTTP where the wire itself is the point ([DONE], event order)."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.conversation import read_chat, read_responses
from tests.fakes.openai_server import FakeOpenAI, Fault

openai = pytest.importorskip("openai", reason="the openai SDK (pip install -e '.[test]')")

REPO = Path(__file__).resolve().parent.parent
MODEL = "gpt-test-1"
READ_TOOL = {
    "type": "function",
    "function": {"name": "read_file", "parameters": {"type": "object"}},
}
RESPONSES_TOOL = {"type": "function", "name": "read_file", "parameters": {"type": "object"}}


def client(server: FakeOpenAI, max_retries: int = 0) -> Any:
    return openai.OpenAI(
        base_url=server.v1_url, api_key="test-key", max_retries=max_retries, timeout=60
    )


def chat(sdk: Any, text: str = "hi", **extra: Any) -> Any:
    return sdk.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": text}], **extra
    )


def raw_post(server: FakeOpenAI, path: str, body: dict[str, Any]) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, text


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    rules = [{"name": "greet", "messages_contain": "hi", "text": "Hello, tester!"}]
    with FakeOpenAI(rules=rules) as server:
        yield server


# -- Chat Completions ----------------------------------------------------------------------------


def test_chat_reply_usage_and_record(fake: FakeOpenAI) -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    reply = client(fake).chat.completions.create(model=MODEL, messages=messages)
    assert reply.choices[0].message.content == "Hello, tester!"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == MODEL and reply.object == "chat.completion"
    assert reply.usage.prompt_tokens >= 1 and reply.usage.completion_tokens >= 1
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    (record,) = fake.requests
    assert (record.protocol, record.rule, record.status) == ("chat", "greet", 200)
    assert record.system == "be brief" and record.messages_text == "hi"
    assert record.headers["authorization"] == "<redacted>"
    assert "test-key" not in json.dumps(record.to_dict())


def test_chat_stream_on_the_wire_ends_with_usage_then_done() -> None:
    with FakeOpenAI(default="x" * 60) as server:
        body = {
            "model": MODEL,
            "messages": [{"role": "user", "content": "go"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        status, text = raw_post(server, "/v1/chat/completions", body)
    assert status == 200
    frames = [f for f in text.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]"
    chunks = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert "".join(p for p in pieces if p) == "x" * 60 and len(pieces) > 3
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 15
    assert all(c["usage"] is None for c in chunks[:-1])


def test_chat_stream_without_include_usage_has_no_usage_chunk(fake: FakeOpenAI) -> None:
    events = list(chat(client(fake), stream=True))
    assert all(getattr(e, "usage", None) is None for e in events)
    assert "".join(e.choices[0].delta.content or "" for e in events) == "Hello, tester!"


@pytest.mark.parametrize("stream", [False, True])
def test_chat_tool_call_then_the_answer_reading_its_result(stream: bool) -> None:
    rules = [
        {
            "name": "agent",
            "has_tools": True,
            "steps": [
                {"tool_use": {"name": "read_file", "input": {"path": "{cwd}/notes.md"}}},
                "The notes say: {tool_result}",
            ],
        }
    ]
    system = {"role": "system", "content": "<env>\n  Working directory: /work/here\n</env>"}
    messages: list[Any] = [system, {"role": "user", "content": "read the notes"}]
    with FakeOpenAI(rules=rules) as server:
        sdk = client(server)

        def ask() -> Any:
            if not stream:
                return sdk.chat.completions.create(
                    model=MODEL, messages=messages, tools=[READ_TOOL]
                )
            with sdk.chat.completions.stream(
                model=MODEL, messages=messages, tools=[READ_TOOL]
            ) as s:
                return s.get_final_completion()

        first = ask()
        (call,) = first.choices[0].message.tool_calls
        assert first.choices[0].finish_reason == "tool_calls"
        assert call.function.name == "read_file"
        assert json.loads(call.function.arguments) == {"path": "/work/here/notes.md"}
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "NOTE-7"},
        ]
        second = ask()
        assert second.choices[0].message.content == "The notes say: NOTE-7"
        assert [r.rule for r in server.requests] == ["agent#1", "agent#2"]
        convo = server.requests[1].conversation
    assert convo.turn == 2 and convo.tool_results[0].name == "read_file"


def test_chat_forced_tool_and_max_tokens() -> None:
    rules = [{"tool_choice_name": "grade", "tool_input": {"passed": True}}]
    tool = {"type": "function", "function": {"name": "grade", "parameters": {"type": "object"}}}
    with FakeOpenAI(rules=rules, default="y" * 400) as server:
        sdk = client(server)
        forced = chat(
            sdk,
            tools=[READ_TOOL, tool],
            tool_choice={"type": "function", "function": {"name": "grade"}},
        )
        cut = chat(sdk, max_completion_tokens=10)
    assert json.loads(forced.choices[0].message.tool_calls[0].function.arguments) == {
        "passed": True
    }
    assert cut.choices[0].finish_reason == "length" and len(cut.choices[0].message.content) == 40


def test_models_list_one_model_and_unknown_paths() -> None:
    with FakeOpenAI(models=["m-one", "m-two"]) as server:
        sdk = client(server)
        assert [m.id for m in sdk.models.list()] == ["m-one", "m-two"]
        assert sdk.models.retrieve("m-two").id == "m-two"
        with pytest.raises(openai.NotFoundError) as caught:
            sdk.models.retrieve("m-three")
        assert caught.value.body["message"] == "Not found: GET /v1/models/m-three"
        assert server.unknown_paths == ["GET /v1/models/m-three"]


def test_invalid_bodies_are_400s(fake: FakeOpenAI) -> None:
    sdk = client(fake)
    with pytest.raises(openai.BadRequestError):
        sdk.chat.completions.create(model=MODEL, messages=[])
    with pytest.raises(openai.BadRequestError):
        sdk.responses.create(model=MODEL, input=[])
    with FakeOpenAI(rules=[{"text": "at {cwd}"}]) as server, pytest.raises(openai.BadRequestError):
        chat(client(server))  # no working directory stated: never a half-filled path


# -- Responses -----------------------------------------------------------------------------------


def test_responses_text_and_usage(fake: FakeOpenAI) -> None:
    response = client(fake).responses.create(model=MODEL, input="hi", instructions="be brief")
    assert response.output_text == "Hello, tester!" and response.status == "completed"
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    (record,) = fake.requests
    assert (record.protocol, record.system, record.messages_text) == ("responses", "be brief", "hi")


def test_responses_stream_events_end_in_response_completed() -> None:
    with FakeOpenAI(default="z" * 50) as server:
        status, text = raw_post(
            server, "/v1/responses", {"model": MODEL, "input": "go", "stream": True}
        )
    assert status == 200
    frames = [f.split("\n") for f in text.split("\n\n") if f]
    names = [f[0].removeprefix("event: ") for f in frames]
    datas = [json.loads(f[1].removeprefix("data: ")) for f in frames]
    assert names[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert names[-1] == "response.completed" and datas[-1]["response"]["usage"]["output_tokens"]
    assert [d["sequence_number"] for d in datas] == list(range(len(datas)))
    assert [d["type"] for d in datas] == names
    deltas = [d["delta"] for d in datas if d["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "z" * 50


def test_responses_function_call_round_trip_and_codex_cwd() -> None:
    rules = [
        {
            "name": "agent",
            "steps": [
                {"tool_use": {"name": "read_file", "input": {"path": "{cwd}/a.md"}}},
                {"text": "read: {tool_result}"},
            ],
        }
    ]
    context = "<environment_context>\n  <cwd>/tmp/codex-here</cwd>\n</environment_context>"
    items: list[Any] = [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "dev"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": context}]},
        {"role": "user", "content": "go"},
    ]
    with FakeOpenAI(rules=rules) as server:
        sdk = client(server)
        with sdk.responses.stream(model=MODEL, input=items, tools=[RESPONSES_TOOL]) as stream:
            first = stream.get_final_response()
        (call,) = first.output
        assert call.type == "function_call" and call.name == "read_file"
        assert json.loads(call.arguments) == {"path": "/tmp/codex-here/a.md"}
        items += [
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "A-TEXT"},
        ]
        second = sdk.responses.create(model=MODEL, input=items, tools=[RESPONSES_TOOL])
        assert second.output_text == "read: A-TEXT"
        assert server.requests[0].system == "dev"


def test_responses_custom_tool_and_incomplete() -> None:
    custom = {"type": "custom", "name": "apply_patch", "description": "patch"}
    rules = [
        {"has_tools": True, "tool_use": {"name": "apply_patch", "input": {"input": "*** Begin"}}}
    ]
    with FakeOpenAI(rules=rules, default="w" * 400) as server:
        sdk = client(server)
        patched = sdk.responses.create(model=MODEL, input="patch it", tools=[custom])
        cut = sdk.responses.create(model=MODEL, input="long", max_output_tokens=16)
    assert patched.output[0].type == "custom_tool_call" and patched.output[0].input == "*** Begin"
    assert cut.status == "incomplete" and cut.incomplete_details.reason == "max_output_tokens"


def test_responses_turns_are_runs_of_model_items() -> None:
    items = [
        {"role": "user", "content": "go"},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "one"},
        {"type": "function_call_output", "call_id": "c2", "output": "two"},
    ]
    convo = read_responses({"model": MODEL, "input": items})
    assert convo.turn == 2
    assert [(r.name, r.content) for r in convo.tool_results] == [("a", "one"), ("b", "two")]
    assert convo.last_user == "one\ntwo"
    plain = read_chat({"messages": [{"role": "user", "content": "q"}]})
    assert (plain.turn, plain.tool_results, plain.last_user) == (1, (), "q")


# -- faults (both protocols) ---------------------------------------------------------------------


def _call(sdk: Any, protocol: str, stream: bool) -> Any:
    if protocol == "chat":
        result = chat(sdk, stream=stream)
    else:
        result = sdk.responses.create(model=MODEL, input="hi", stream=stream)
    return list(result) if stream else result


@pytest.mark.parametrize("protocol", ["chat", "responses"])
@pytest.mark.parametrize(
    ("kind", "expected", "status"),
    [
        ("rate_limit", "RateLimitError", 429),
        ("overloaded", "InternalServerError", 503),
        ("api_error", "InternalServerError", 500),
        ("authentication", "AuthenticationError", 401),
        ("permission", "PermissionDeniedError", 403),
        ("not_found", "NotFoundError", 404),
    ],
)
def test_error_faults_are_openai_errors(
    protocol: str, kind: str, expected: str, status: int
) -> None:
    with FakeOpenAI(faults=[kind]) as server:
        with pytest.raises(getattr(openai, expected)) as caught:
            _call(client(server), protocol, stream=True)
        assert caught.value.status_code == status
        assert set(caught.value.body) >= {"message", "type", "code"}
        (record,) = server.requests
    assert record.fault == kind and record.status == status
    if kind == "rate_limit":
        assert caught.value.response.headers["retry-after"] == "0"


@pytest.mark.parametrize("protocol", ["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("kind", ["drop_before_response", "drop_mid_stream", "malformed"])
def test_broken_replies_fail_in_the_client(protocol: str, stream: bool, kind: str) -> None:
    # Unlike the anthropic SDK, openai wraps a stream cut mid-way as APIConnectionError; a body
    # that is not JSON comes through as json.JSONDecodeError in both modes.
    expected = json.JSONDecodeError if kind == "malformed" else openai.APIConnectionError
    with FakeOpenAI(faults=[kind]) as server:
        with pytest.raises(expected):
            _call(client(server), protocol, stream)
        (record,) = server.requests
    assert record.fault == kind
    assert record.status == (None if kind == "drop_before_response" else 200)


def test_sdk_retries_through_503s_and_faults_count_per_path() -> None:
    faults = [Fault("overloaded", first=2, retry_after_ms=1)]
    with FakeOpenAI(faults=faults, default="done") as server:
        reply = chat(client(server, max_retries=2))
        with pytest.raises(openai.InternalServerError):  # /v1/responses counts its own first 2
            client(server).responses.create(model=MODEL, input="x")
        statuses = [(r.path, r.status) for r in server.requests]
        retries = [r.headers.get("x-stainless-retry-count") for r in server.requests[:3]]
    assert reply.choices[0].message.content == "done"
    chat_path = "/v1/chat/completions"
    assert statuses == [
        (chat_path, 503),
        (chat_path, 503),
        (chat_path, 200),
        ("/v1/responses", 503),
    ]
    assert retries == ["0", "1", "2"]


def test_one_rules_file_scripts_both_protocols(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("- {system_contains: SKILL, text: skilled}\n- {text: plain}\n", "utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--rules", str(rules)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        sdk = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        system = [{"role": "system", "content": "SKILL"}, {"role": "user", "content": "q"}]
        assert (
            sdk.chat.completions.create(model=MODEL, messages=system).choices[0].message.content
            == "skilled"
        )
        assert (
            sdk.responses.create(model=MODEL, input="q", instructions="SKILL").output_text
            == "skilled"
        )
        assert sdk.responses.create(model=MODEL, input="q").output_text == "plain"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "3 requests" in err
