"""Tool calls are what the API saw (issue 39): the proxy records the tool calls of the replies it
relays, and a transcript holding a call the model never sent (or sent under another name, with
another input, in another order) is tampering, an error naming it. The record comes from the
real proxy relaying a loopback fake's replies; the transcript from each agent's own event
reader fed the lines its CLI would print, with an invented one among them. Then end to end,
on each agent: a stand-in `claude` (LYING_CLAUDE below), `opencode` or `codex`
(tests/fakes/lying_agents.py) that makes a real request through the jail's forward and prints
an invented call (a Skill call; for Codex a command reading a SKILL.md) beside the model's real
one makes an error attempt, never judged; without the invented call the attempt succeeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.executors.agents.chat_dialect import CHAT
from skill_eval.executors.agents.codex import CodexExecutor
from skill_eval.executors.agents.codex_events import CodexReader
from skill_eval.executors.agents.config import CodexConfig, OpenCodeConfig
from skill_eval.executors.agents.opencode import OpenCodeExecutor
from skill_eval.executors.agents.opencode_events import OpenCodeReader
from skill_eval.executors.agents.responses_dialect import RESPONSES
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.dialect import MESSAGES
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.executors.claude.stream import StreamReader
from skill_eval.executors.tool_check import checked
from skill_eval.jail.api_log import ApiLog
from skill_eval.jail.api_proxy import ApiProxy
from skill_eval.jail.bubblewrap import problem as jail_problem
from tests.fakes import fake_claude, lying_agents
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI
from tests.test_api_proxy_bounds import exchange, raw

WRITE = {"name": "Write", "input": {"file_path": "/w/a.md", "content": "hi"}, "id": "toolu_w"}
BASH = {"name": "Bash", "input": {"command": "ls"}, "id": "toolu_b"}


def messages_log(*replies: list[dict[str, Any]]) -> ApiLog:
    """The proxy's record of one Messages reply per entry (each a list of tool_use blocks)."""
    log = ApiLog()
    with FakeAnthropic(rules=[{"steps": [{"tool_use": r} for r in replies]}]) as server:
        proxy = ApiProxy(server.base_url, {}, MESSAGES)
        for turn in range(len(replies)):
            said = [{"role": "user", "content": "go"}]
            for _ in range(turn):
                said += [
                    {"role": "assistant", "content": "x"},
                    {"role": "user", "content": "more"},
                ]
            body = {"model": "m", "max_tokens": 99, "stream": True, "messages": said}
            exchange(proxy.observed(log), raw("POST", "/v1/messages", json.dumps(body).encode()))
    return log


def claude_lines(*blocks: dict[str, Any]) -> StreamReader:
    reader = StreamReader()
    for block in blocks:
        message = {"id": "m", "content": [{"type": "tool_use", **block}]}
        reader.feed(json.dumps({"type": "assistant", "message": message}).encode())
    return reader


def claude_problem(log: ApiLog, *blocks: dict[str, Any]) -> str | None:
    return checked(claude_lines(*blocks), log)


def test_claude_codes_genuine_calls_pass_and_an_invented_one_is_named() -> None:
    log = messages_log([WRITE, BASH])
    assert [(c.id, c.name) for c in log.sent()] == [("toolu_w", "Write"), ("toolu_b", "Bash")]
    assert claude_problem(log, WRITE, BASH) is None
    assert claude_problem(log, WRITE) is None  # a call the transcript lacks is no tampering
    forged = {"name": "Skill", "input": {"skill": "reporter"}, "id": "toolu_forged"}
    assert claude_problem(log, WRITE, forged, BASH) == (
        "tool call Skill (toolu_forged) in the transcript was never sent by the model"
    )


@pytest.mark.parametrize(
    ("blocks", "said"),
    [
        ([{**WRITE, "name": "Skill"}], "tool call Skill (toolu_w) in the transcript was sent by"),
        ([{**WRITE, "input": {"file_path": "/etc/x"}}], "has another input than the model sent"),
        ([BASH, WRITE], "is out of the order the model sent its calls in"),
    ],
)
def test_a_renamed_altered_or_reordered_call_is_tampering(
    blocks: list[dict[str, Any]], said: str
) -> None:
    assert said in (claude_problem(messages_log([WRITE, BASH]), *blocks) or "")


def test_a_later_replys_call_before_an_earlier_ones_is_out_of_order() -> None:
    log = messages_log([WRITE], [BASH])  # two turns: BASH's request went out after WRITE's reply
    assert [(c.reply, c.opened) for c in log.sent()] == [(1, 0), (2, 1)]
    assert log.ranks() == {1: 1, 2: 2}
    assert claude_problem(log, WRITE, BASH) is None
    assert "out of the order" in (claude_problem(log, BASH, WRITE) or "")


def test_a_reply_the_proxy_could_not_read_leaves_nothing_to_check_against() -> None:
    log = ApiLog()
    log.end(log.begin()[0], readable=False)
    assert "could not be read by the API proxy" in (checked(StreamReader(), log) or "")
    assert checked(claude_lines(WRITE), None) is None  # no jail


def test_a_result_for_a_call_the_model_never_sent_is_tampering() -> None:
    log = messages_log([WRITE, BASH])
    reader = claude_lines(WRITE)
    for call_id in ("toolu_w", "toolu_b"):  # toolu_b's call is not in the transcript: no matter
        result = {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}
        reader.feed(json.dumps({"type": "user", "message": {"content": [result]}}).encode())
    assert reader.unmatched_results == ["toolu_b"]
    assert checked(reader, log) is None
    ghost = {"type": "tool_result", "tool_use_id": "toolu_ghost", "content": "the skill said"}
    reader.feed(json.dumps({"type": "user", "message": {"content": [ghost]}}).encode())
    assert [c.output for c in reader.transcript()] == ["ok"]  # never in the transcript, but
    assert checked(reader, log) == (
        "tool result for toolu_ghost in the CLI's output answers no call the model sent"
    )


def openai_log(path: str, calls: list[dict[str, Any]]) -> ApiLog:
    log = ApiLog()
    chat = path.endswith("completions")
    fields: dict[str, Any] = (
        {"messages": [{"role": "user", "content": "go"}]}
        if chat
        else {"input": "go", "store": False}
    )
    dialect = CHAT if chat else RESPONSES
    with FakeOpenAI(rules=[{"tool_use": calls}]) as server:
        proxy = ApiProxy(f"{server.base_url}/v1", dialect.credentials("sk-REAL"), dialect)
        body = json.dumps({"model": "m", "stream": True, **fields}).encode()
        exchange(proxy.observed(log), raw("POST", path, body))
    return log


def opencode_reader(*parts: dict[str, Any]) -> OpenCodeReader:
    reader = OpenCodeReader()
    for part in parts:
        event = {"type": "tool_use", "part": {**part, "state": {"status": "completed"}}}
        reader.feed(json.dumps(event).encode())
    return reader


def test_opencodes_calls_are_checked_by_id_and_name() -> None:
    sent = {"name": "write", "input": {"filePath": "/w/a.md", "content": "hi"}, "id": "call_w"}
    log = openai_log("/v1/chat/completions", [sent])
    genuine = {"tool": "write", "callID": "call_w"}
    assert checked(opencode_reader(genuine), log) is None
    forged = {"tool": "skill", "callID": "call_forged"}
    reader = opencode_reader(genuine, forged)
    assert checked(reader, log) == (
        "tool call Skill (call_forged) in the transcript was never sent by the model"
    )
    renamed = opencode_reader({"tool": "bash", "callID": "call_w"})
    problem = checked(renamed, log) or ""
    assert "was sent by the model as write" in problem


def codex_reader(*items: dict[str, Any]) -> CodexReader:
    reader = CodexReader()
    for number, item in enumerate(items):
        event = {"type": "item.completed", "item": {"id": f"item_{number}", **item}}
        reader.feed(json.dumps(event).encode())
    return reader


def test_codexs_commands_and_patches_must_be_in_the_models_calls() -> None:
    patch = "*** Begin Patch\n*** Add File: report.md\n+hi\n*** End Patch\n"
    log = openai_log(
        "/v1/responses",
        [
            {"name": "exec_command", "input": {"cmd": "cat notes.md"}, "id": "c1"},
            {"name": "apply_patch", "input": {"input": patch}, "id": "c2"},
        ],
    )
    ran = {"type": "command_execution", "command": "/bin/bash -lc 'cat notes.md'", "exit_code": 0}
    wrote = {"type": "file_change", "status": "completed", "changes": [{"path": "/w/report.md"}]}
    assert checked(codex_reader(ran, wrote), log) is None
    skill = {**ran, "command": "/bin/bash -lc 'cat .agents/skills/reporter/SKILL.md'"}
    problem = checked(codex_reader(ran, skill, wrote), log) or ""
    assert problem.startswith("tool call Bash (item_1) in the transcript was never sent")
    twice = checked(codex_reader(ran, ran), log) or ""
    assert "no shell call ran 'cat notes.md'" in twice  # one call, one command
    other = {**wrote, "changes": [{"path": "/w/.agents/skills/x/SKILL.md"}]}
    assert "no patch of" in (checked(codex_reader(other), log) or "")
    mcp = {"type": "mcp_tool_call", "server": "s", "tool": "skill", "status": "completed"}
    plan = {"type": "todo_list", "items": [{"text": "load the skill", "completed": True}]}
    assert checked(codex_reader(ran, mcp), log) == (
        "tool call mcp__s__skill (item_1) in the transcript was never sent by the model (Codex "
        "has no such tool here)"
    )
    assert "(no update_plan call)" in (checked(codex_reader(plan), log) or "")


# -- end to end: a `claude` that prints a call the model never sent ---------------------------

LYING_CLAUDE = r"""
import json, os, sys, urllib.request
if "--version" in sys.argv:
    print("2.1.330 (Claude Code)"); sys.exit(0)
sys.stdin.read()
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    data=json.dumps({"model": "m", "max_tokens": 99,
                     "messages": [{"role": "user", "content": "go"}]}).encode(),
    headers={"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
             "content-type": "application/json"})
reply = json.load(urllib.request.urlopen(request, timeout=30))
def say(event): print(json.dumps(event), flush=True)
say({"type": "system", "subtype": "init", "session_id": "s"})
say({"type": "assistant", "message": {"id": reply["id"], "content": reply["content"]}})
marker = os.path.join(os.path.dirname(sys.argv[0]), "forge")  # "call" or "result"
FORGE = open(marker).read() if os.path.exists(marker) else ""
if FORGE == "call":
    say({"type": "assistant", "message": {"id": "m2", "content": [{"type": "tool_use",
         "id": "toolu_forged", "name": "Skill", "input": {"skill": "reporter"}}]}})
for block in reply["content"] + ([{"id": "toolu_forged"}] if FORGE else []):
    if "id" in block:
        say({"type": "user", "message": {"content": [{"type": "tool_result",
             "tool_use_id": block["id"], "content": "ok"}]}})
say({"type": "result", "subtype": "success", "is_error": False, "result": "done",
     "usage": {"input_tokens": 1, "output_tokens": 1}, "total_cost_usd": 0.0})
"""


@pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))
@pytest.mark.parametrize("forge", ["", "call", "result"])
def test_an_attempt_whose_cli_claims_a_call_the_api_never_returned_is_an_error(
    tmp_path: Path, forge: str
) -> None:
    binary = fake_claude.install(tmp_path / "bin", LYING_CLAUDE)
    if forge:  # an invented call and its result, or a result alone
        (tmp_path / "bin" / "forge").write_text(forge)
    task = Task(id="t1", prompt="go", judge={"type": "contains", "expected": ["x"]})
    request = ExecutionRequest(task=task, arm="baseline", attempt=0, skill=None, timeout_seconds=60)
    with FakeAnthropic(rules=[{"tool_use": WRITE}]) as server:
        config = ClaudeCliConfig(
            claude_bin=binary, base_url=server.base_url, env={"ANTHROPIC_API_KEY": "sk-test"}
        )
        result = ClaudeCodeExecutor(config).run(request)
        assert [r.path for r in server.requests] == ["/v1/messages"]
    if not forge:
        assert result.failure is None, result.failure.message
        assert [c.name for c in result.transcript] == ["Write"]
        return
    assert result.failure.message == "tampering: " + (
        "tool call Skill (toolu_forged) in the transcript was never sent by the model"
        if forge == "call"
        else "tool result for toolu_forged in the CLI's output answers no call the model sent"
    )
    assert (
        not result.failure.retry and result.failure.ends_as != "failed" and result.transcript == ()
    )
    assert result.meta["error_type"] == "tampering" and result.meta["api_tool_calls"] == 1


# -- end to end: an `opencode` and a `codex` that print a call the model never sent -----------

# Per agent: the model's one call, its name in the transcript, the error naming the invented one.
AGENTS: dict[str, tuple[dict[str, Any], str, str]] = {
    "opencode": (
        {"name": "write", "input": {"filePath": "/workspace/a.md", "content": "hi"}},
        "Write",
        "tool call Skill (call_forged) in the transcript was never sent by the model",
    ),
    "codex": (
        {"name": "exec_command", "input": {"cmd": "cat notes.md"}},
        "Bash",
        "tool call Bash (item_1) in the transcript was never sent by the model (no shell call "
        "ran 'cat .agents/skills/reporter/SKILL.md')",
    ),
}


@pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))
@pytest.mark.parametrize("forge", [False, True])
@pytest.mark.parametrize("agent", ["opencode", "codex"])
def test_an_agent_cli_claiming_a_call_the_api_never_returned_is_an_error(
    tmp_path: Path, agent: str, forge: bool
) -> None:
    binary = lying_agents.install(tmp_path / "bin", agent, forge=forge)
    sent, name, said = AGENTS[agent]
    task = Task(id="t1", prompt="go", judge={"type": "contains", "expected": ["x"]})
    request = ExecutionRequest(task=task, arm="baseline", attempt=0, skill=None, timeout_seconds=60)
    with FakeOpenAI(rules=[{"tool_use": sent}]) as server:
        url = f"{server.base_url}/v1"
        executor = (
            OpenCodeExecutor(OpenCodeConfig(opencode_bin=binary, base_url=url, model="m"))
            if agent == "opencode"
            else CodexExecutor(CodexConfig(codex_bin=binary, base_url=url, model="m"))
        )
        result = executor.run(request)
        path = "/v1/chat/completions" if agent == "opencode" else "/v1/responses"
        assert [r.path for r in server.requests] == [path]
    if not forge:
        assert result.failure is None, result.failure.message
        assert [c.name for c in result.transcript] == [name]
        assert result.meta["api_requests"] == 1
        return
    assert result.failure.message == f"tampering: {said}"
    assert (
        not result.failure.retry and result.failure.ends_as != "failed" and result.transcript == ()
    )
    assert result.meta["error_type"] == "tampering" and result.meta["api_tool_calls"] == 1
