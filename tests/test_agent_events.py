"""OpenCode's and Codex's JSON events read into an attempt, from lines shaped as the pinned
versions print them (references/agents.md; the real binaries are run in
test_agent_executors.py): tools under Claude Code's names, the skill's invocation (a Codex
command reading SKILL.md), usage normalised (OpenCode's input leaves the cache out, Codex's
counts it), a stop at the watched skill, and an error that is never an answer."""

from __future__ import annotations

import json
from typing import Any

from skill_eval.executors.agents.codex_events import CodexReader, inner_command, skills_read
from skill_eval.executors.agents.opencode_events import OpenCodeReader
from skill_eval.executors.catalog import skill_invocations
from skill_eval.jail.api_proxy import ApiLog


def lines(*events: dict[str, Any]) -> list[bytes]:
    return [json.dumps(e).encode() for e in events]


def oc_tool(call_id: str, tool: str, status: str = "completed", **fields: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "input": fields}
    state["output" if status == "completed" else "error"] = f"{tool} said"
    return {
        "type": "tool_use",
        "part": {"type": "tool", "tool": tool, "callID": call_id, "state": state},
    }


def oc_finish(**tokens: Any) -> dict[str, Any]:
    return {"type": "step_finish", "part": {"reason": "stop", "tokens": tokens, "cost": 0}}


def test_opencode_tools_read_as_claude_codes() -> None:
    reader = OpenCodeReader()
    for line in lines(
        {"type": "step_start", "part": {}},
        oc_tool("a", "skill", name="csv-report"),
        oc_tool("b", "read", filePath="/workspace/in.csv"),
        oc_tool("c", "write", filePath="/workspace/report.md", content="# R"),
        oc_tool("d", "edit", "error", filePath="/x", oldString="a", newString="b"),
        oc_tool("e", "customthing", someField=1),
        {"type": "text", "part": {"text": "Wrote report.md"}},
        oc_finish(input=600, output=5, reasoning=2, cache={"read": 400, "write": 0}),
    ):
        assert reader.feed(line)
    result = reader.result(0, "", None)
    calls = [(c.name, dict(c.input), c.ok) for c in result.transcript]
    assert calls == [
        ("Skill", {"skill": "csv-report"}, True),
        ("Read", {"file_path": "/workspace/in.csv"}, True),
        ("Write", {"file_path": "/workspace/report.md", "content": "# R"}, True),
        ("Edit", {"file_path": "/x", "old_string": "a", "new_string": "b"}, False),
        ("customthing", {"some_field": 1}, True),
    ]
    assert result.transcript[3].output == "edit said"
    assert result.output == "Wrote report.md" and result.failure is None
    usage = result.usage  # 1000 prompt tokens of which 400 cached; 7 out of which 2 reasoning
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (600, 400, 7)
    assert len(skill_invocations(result.transcript, "csv-report")) == 1


def test_opencode_stops_at_the_watched_skill_and_only_there() -> None:
    reader = OpenCodeReader(stop_at_skill="pdf")
    assert reader.feed(lines(oc_tool("a", "skill", name="pdf-tools"))[0])
    assert reader.feed(lines(oc_tool("b", "read", filePath="/w/docs/pdf/SKILL.md"))[0])
    assert not reader.feed(
        lines(oc_tool("c", "read", filePath="/w/.opencode/skills/pdf/SKILL.md"))[0]
    )
    result = reader.result(None, "", None)
    assert result.failure is None and result.meta["stopped"] == "skill invoked"


def test_an_opencode_api_error_is_an_error_classed_by_its_status() -> None:
    for status, retryable, fatal in ((529, True, False), (429, True, False), (401, False, True)):
        reader = OpenCodeReader()
        error = {"name": "APIError", "data": {"message": "Overloaded", "statusCode": status}}
        reader.feed(lines({"type": "error", "error": error})[0])
        result = reader.result(1, "", None)
        assert (
            result.failure.message
            and f"(HTTP {status})" in result.failure.message
            and not result.output
        )
        assert (result.failure.retry, result.failure.stops_run) == (retryable, fatal)


def test_opencode_without_a_status_takes_the_proxys_last() -> None:
    reader = OpenCodeReader()
    reader.feed(lines({"type": "error", "error": {"name": "UnknownError", "data": {}}})[0])
    log = ApiLog()
    log.saw(200)
    log.saw(503)
    result = reader.result(1, "", log)
    assert "(HTTP 503)" in result.failure.message and result.failure.retry


def test_opencode_dying_without_an_error_event_is_a_retryable_error() -> None:
    reader = OpenCodeReader()
    reader.feed(b"not json")
    result = reader.result(-9, "boom\n", None)
    assert (
        result.failure.retry
        and "exit code -9" in result.failure.message
        and "boom" in result.failure.message
    )
    assert result.meta["unreadable_lines"] == 1


# -- Codex -------------------------------------------------------------------------------------


def cx_command(item_id: str, command: str, done: bool, exit_code: int = 0) -> dict[str, Any]:
    item = {
        "id": item_id,
        "type": "command_execution",
        "command": f"/bin/bash -lc '{command}'",
        "aggregated_output": "out" if done else "",
        "exit_code": exit_code if done else None,
        "status": ("completed" if exit_code == 0 else "failed") if done else "in_progress",
    }
    return {"type": "item.completed" if done else "item.started", "item": item}


def test_codex_commands_patches_and_a_skill_read() -> None:
    reader = CodexReader()
    warning = {"id": "item_0", "type": "error", "message": "Model metadata for `m` not found."}
    patch = {
        "id": "item_3",
        "type": "file_change",
        "status": "completed",
        "changes": [
            {"path": "/workspace/report.md", "kind": "add"},
            {"path": "/w/o", "kind": "update"},
        ],
    }
    usage = {"input_tokens": 1000, "cached_input_tokens": 400, "output_tokens": 7}
    for line in lines(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": warning},
        cx_command("item_1", "cat /workspace/.agents/skills/csv-report/SKILL.md", False),
        cx_command("item_1", "cat /workspace/.agents/skills/csv-report/SKILL.md", True),
        cx_command("item_2", "cat inputs/x.csv", True, exit_code=1),
        {"type": "item.completed", "item": patch},
        {
            "type": "item.completed",
            "item": {"id": "item_4", "type": "agent_message", "text": "Done"},
        },
        {"type": "turn.completed", "usage": usage},
    ):
        assert reader.feed(line)
    result = reader.result(0, "", None)
    calls = [(c.name, dict(c.input), c.ok, c.completed) for c in result.transcript]
    assert calls == [
        ("Skill", {"skill": "csv-report"}, True, True),
        ("Bash", {"command": "cat /workspace/.agents/skills/csv-report/SKILL.md"}, True, True),
        ("Bash", {"command": "cat inputs/x.csv"}, False, True),
        ("Write", {"file_path": "/workspace/report.md"}, True, True),
        ("Edit", {"file_path": "/w/o"}, True, True),
    ]
    assert result.output == "Done" and result.failure is None
    assert result.meta["agent_notes"] == ["Model metadata for `m` not found."]
    u = result.usage  # Codex's 1000 input tokens hold the 400 cached ones
    assert (u.input_tokens, u.cache_read_input_tokens, u.output_tokens) == (600, 400, 7)


def test_codex_stops_before_the_command_that_loads_the_watched_skill() -> None:
    reader = CodexReader(stop_at_skill="pdf-tools")
    assert reader.feed(lines(cx_command("i1", "cat notes/SKILL.md", False))[0])
    assert reader.feed(lines(cx_command("i2", "cat .agents/skills/pdf/SKILL.md", False))[0])
    assert not reader.feed(
        lines(cx_command("i3", "sed -n 1,80p .agents/skills/pdf-tools/SKILL.md", False))[0]
    )
    result = reader.result(None, "", None)
    assert result.failure is None and result.meta["stopped"] == "skill invoked"
    skill = result.transcript[-2]
    assert (skill.name, dict(skill.input), skill.completed) == (
        "Skill",
        {"skill": "pdf-tools"},
        False,
    )


def test_what_counts_as_reading_a_skill() -> None:
    assert inner_command("/bin/bash -lc 'cat a b'") == "cat a b"
    assert inner_command("/usr/bin/zsh -c ls") == "ls"
    assert inner_command("python x.py") == "python x.py"
    assert skills_read("cat /workspace/.agents/skills/a/SKILL.md .agents/skills/b/SKILL.md") == [
        "a",
        "b",
    ]
    assert skills_read("cat .agents/skills/a/reference.md; cat SKILL.md; ls .agents/skills/") == []
    assert skills_read("cat x/.agents/skills/a/SKILL.md.bak") == []


def test_a_failed_codex_turn_is_an_error_with_the_proxys_status() -> None:
    for last, retryable, fatal in ((500, True, False), (429, True, False), (401, False, True)):
        reader = CodexReader()
        reader.feed(lines({"type": "error", "message": "Reconnecting... 1/2"})[0])
        reader.feed(lines({"type": "turn.failed", "error": {"message": "high demand"}})[0])
        log = ApiLog()
        log.saw(last)
        result = reader.result(1, "", log)
        assert (
            result.failure.message
            and f"(HTTP {last})" in result.failure.message
            and not result.output
        )
        assert (result.failure.retry, result.failure.stops_run) == (retryable, fatal)
        assert result.meta["reconnects"] == 1


def test_a_failed_codex_turn_without_a_status_is_still_a_retryable_error() -> None:
    reader = CodexReader()
    reader.feed(lines({"type": "turn.failed", "error": {"message": "stream disconnected"}})[0])
    result = reader.result(1, "", None)
    assert result.failure.message and result.failure.retry and not result.failure.stops_run


def test_codex_without_a_completed_turn_is_no_answer() -> None:
    reader = CodexReader()
    reader.feed(
        lines(
            {"type": "item.completed", "item": {"id": "x", "type": "agent_message", "text": "hi"}}
        )[0]
    )
    result = reader.result(0, "", None)
    assert (
        result.failure.message
        and "without a completed turn" in result.failure.message
        and result.failure.retry
    )
