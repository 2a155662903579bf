"""The pinned OpenCode and Codex CLIs (scripts/install_agents.sh) against the fake OpenAI
server, offline and isolated (tests/agent_clis.py): a text task answered, the request each
version sends pinned against its recording in tests/data/agents/ (tool names and shapes), a
skill invocation as each shows it in its JSON events, and an API error storm read as an error
(exit 1 and an error event), never as an answer. What round 2's executors build on."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.agents.codex import CodexExecutor
from skill_eval.executors.agents.opencode import OpenCodeExecutor
from tests.agent_clis import (
    MODEL,
    PINS,
    agent_bin,
    bundled_rg,
    codex_run,
    missing_reason,
    normalised,
    opencode_run,
    record,
    recorded,
    run_agent,
)
from tests.fakes.openai_server import FakeOpenAI, Fault
from tests.helpers import REPO

pytestmark = pytest.mark.slow
needs_opencode = pytest.mark.skipif(
    agent_bin("opencode") is None, reason=missing_reason("opencode")
)
needs_codex = pytest.mark.skipif(agent_bin("codex") is None, reason=missing_reason("codex"))
RECORD = os.environ.get("SKILL_EVAL_RECORD_AGENTS") == "1"
SKILL = "notes-skill"
DESCRIPTION = "NOTES-DESC-41 Use when asked to summarise meeting notes."
BODY = "NOTES-BODY-7: always end with the word OLIVE."


def install_skill(work: Path, where: str) -> Path:
    folder = work / where / SKILL
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {SKILL}\ndescription: {DESCRIPTION}\n---\n# Notes\n{BODY}\n", encoding="utf-8"
    )
    return folder


def chat_shape(body: dict[str, Any]) -> dict[str, Any]:
    """What a Chat Completions request pins: its tool names, each tool's parameter names."""
    functions = [t["function"] for t in body.get("tools") or []]
    return {f["name"]: sorted(f["parameters"].get("properties") or {}) for f in functions}


def responses_shape(body: dict[str, Any]) -> dict[str, Any]:
    """What a Responses request pins: each tool's type and name (a namespace's own tools by
    name), each function's parameter names."""
    shape: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        name = tool.get("name") or tool["type"]
        if tool["type"] == "namespace":
            shape[name] = sorted(t["name"] for t in tool["tools"])
        else:
            shape[name] = [
                tool["type"],
                *sorted((tool.get("parameters") or {}).get("properties") or {}),
            ]
    return shape


def check_recording(
    agent: str, command: list[str], request: Any, tools: dict[str, Any], places: tuple[Any, ...]
) -> None:
    """The live request's tools against the recording of this version (rewritten first when
    SKILL_EVAL_RECORD_AGENTS=1); the whole body is kept, normalised, for readers."""
    work, home, url = places
    replacements = {str(work): "{cwd}", str(home): "{home}", url: "{base_url}"}
    live = {
        "agent": agent,
        "version": PINS[agent],
        "command": normalised(command[:-1], replacements),
        "path": request.path,
        "stream": request.stream,
        "user_agent": request.headers.get("user-agent"),
        "tools": tools,
        "body": normalised(request.json, replacements),
    }
    if RECORD:
        record(agent, live)
    pinned = recorded(agent)
    assert live["tools"] == pinned["tools"], (
        f"{agent} {PINS[agent]} sends other tools than recorded"
    )
    assert live["path"] == pinned["path"] and live["stream"] == pinned["stream"]


# -- OpenCode ----------------------------------------------------------------------------------


@needs_opencode
def test_opencode_answers_a_text_task_and_sends_the_recorded_request(tmp_path: Path) -> None:
    work = tmp_path / "work"
    install_skill(work, ".opencode/skills")
    with FakeOpenAI(default="PONG-opencode") as server:
        command, env = opencode_run(server, tmp_path / "home", "Say PONG")
        run = run_agent(command, env, work)
        requests, url = server.requests, server.v1_url
    assert run.code == 0, run.stderr
    assert [e["part"]["text"] for e in run.of_type("text")] == ["PONG-opencode"]
    finish = run.of_type("step_finish")[-1]["part"]
    assert finish["reason"] == "stop" and finish["tokens"]["output"] > 0
    (request,) = requests  # --title: no title-generation request; no model list, no other path
    assert (request.path, request.model, request.stream) == ("/v1/chat/completions", MODEL, True)
    assert request.headers["authorization"] == "<redacted>"  # Bearer dummy-key
    assert DESCRIPTION in request.system and BODY not in request.system  # listed, not loaded
    assert request.conversation.working_directory() == str(work)
    places = (work, tmp_path / "home", url)
    check_recording("opencode", command, request, chat_shape(request.json), places)


@needs_opencode
@pytest.mark.skipif(bundled_rg() is None, reason="no ripgrep: run scripts/install_agents.sh")
def test_opencode_shows_a_skill_invocation_as_its_skill_tool(tmp_path: Path) -> None:
    work = tmp_path / "work"
    install_skill(work, ".agents/skills")
    rules = [
        {
            "name": "agent",
            "request_contains": "NOTES-DESC-41",
            "has_tools": True,
            "steps": [{"tool_use": {"name": "skill", "input": {"name": SKILL}}}, "{tool_result}"],
        }
    ]
    with FakeOpenAI(rules=rules, default="no skill") as server:
        command, env = opencode_run(server, tmp_path / "home", "Summarise these notes")
        run = run_agent(command, env, work)
        second = server.requests[-1].conversation
    assert run.code == 0, run.stderr
    (use,) = run.of_type("tool_use")
    assert use["part"]["tool"] == "skill" and use["part"]["state"]["input"] == {"name": SKILL}
    assert use["part"]["state"]["status"] == "completed" and BODY in use["part"]["state"]["output"]
    assert second.tool_results[0].name == "skill" and BODY in second.tool_results[0].content
    assert BODY in run.of_type("text")[-1]["part"]["text"]


@needs_opencode
def test_opencode_reads_a_429_storm_as_an_error(tmp_path: Path) -> None:
    with FakeOpenAI(faults=[Fault("rate_limit", retry_after=0)]) as server:
        command, env = opencode_run(server, tmp_path / "home", "Say PONG")
        run = run_agent(command, env, tmp_path)
        count = server.count
    assert run.code == 1 and not run.of_type("text")
    (error,) = run.of_type("error")
    assert error["error"]["name"] == "APIError" and error["error"]["data"]["statusCode"] == 429
    assert count == 6  # its own retries (it honours retry-after), then the error


# -- Codex -------------------------------------------------------------------------------------


@needs_codex
def test_codex_answers_a_text_task_and_sends_the_recorded_request(tmp_path: Path) -> None:
    work = tmp_path / "work"
    install_skill(work, ".agents/skills")
    with FakeOpenAI(default="PONG-codex") as server:
        command, env = codex_run(server, tmp_path / "home", "Say PONG")
        run = run_agent(command, env, work)
        requests, url = server.requests, server.v1_url
    assert run.code == 0, run.stderr
    messages = [
        e["item"] for e in run.of_type("item.completed") if e["item"]["type"] == "agent_message"
    ]
    assert [m["text"] for m in messages] == ["PONG-codex"]
    usage = run.of_type("turn.completed")[0]["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    (request,) = requests
    assert (request.path, request.model, request.stream) == ("/v1/responses", MODEL, True)
    assert request.headers["authorization"] == "<redacted>"  # Bearer $FAKE_OPENAI_KEY
    assert DESCRIPTION in request.text and "skill-installer" not in request.text
    assert request.conversation.working_directory() == str(work)
    places = (work, tmp_path / "home", url)
    check_recording("codex", command, request, responses_shape(request.json), places)


@needs_codex
def test_codex_shows_a_skill_invocation_as_a_command_reading_skill_md(tmp_path: Path) -> None:
    work = tmp_path / "work"
    install_skill(work, ".agents/skills")
    read = {"cmd": f"cat {{cwd}}/.agents/skills/{SKILL}/SKILL.md"}
    rules = [
        {
            "name": "agent",
            "request_contains": "NOTES-DESC-41",
            "steps": [{"tool_use": {"name": "exec_command", "input": read}}, "{tool_result}"],
        }
    ]
    with FakeOpenAI(rules=rules, default="no skill") as server:
        command, env = codex_run(server, tmp_path / "home", "Summarise these notes")
        run = run_agent(command, env, work)
        second = server.requests[-1].conversation
    assert run.code == 0, run.stderr
    done = [
        e["item"] for e in run.of_type("item.completed") if e["item"]["type"] == "command_execution"
    ]
    (command_item,) = done
    assert f".agents/skills/{SKILL}/SKILL.md" in command_item["command"]
    assert command_item["exit_code"] == 0 and BODY in command_item["aggregated_output"]
    assert second.tool_results[0].name == "exec_command" and BODY in second.tool_results[0].content


@needs_codex
def test_codex_reads_a_500_storm_as_a_failed_turn(tmp_path: Path) -> None:
    with FakeOpenAI(faults=["api_error"]) as server:
        command, env = codex_run(server, tmp_path / "home", "Say PONG", retries=False)
        run = run_agent(command, env, tmp_path)
        count = server.count
    assert run.code == 1 and count == 1
    assert not [e for e in run.of_type("item.completed") if e["item"]["type"] == "agent_message"]
    (failed,) = run.of_type("turn.failed")
    assert failed["error"]["message"]  # its text is Codex's own ("high demand"), not the body's


def test_each_agent_executor_declares_the_pin_the_install_script_installs() -> None:
    """The package and version an executor names when its CLI is missing are what
    scripts/install_agents.sh installs (and what these tests were recorded against)."""
    script = (REPO / "scripts" / "install_agents.sh").read_text(encoding="utf-8")
    pinned = dict(re.findall(r'^([A-Z]+)_VERSION="\$\{[A-Z]+_VERSION:-([0-9.]+)\}"$', script, re.M))
    assert OpenCodeExecutor.package == f"opencode-ai@{pinned['OPENCODE']}"
    assert CodexExecutor.package == f"@openai/codex@{pinned['CODEX']}"
    assert '"opencode-ai@$OPENCODE_VERSION" "@openai/codex@$CODEX_VERSION"' in script
