"""Multi-turn scripts on the fake Anthropic server: steps per turn, tool-result and whole-request
conditions, `{cwd}` templates; driven by the real `anthropic` SDK (the real CLI is in
test_fake_agent_cli.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_server import FakeAnthropic, Fault, Rule
from tests.fakes.conversation import last_tool_results, turn_number, working_directory
from tests.fakes.rules import load_config

MODEL = "claude-test-1"
CWD_LINE = " - Primary working directory: /tmp/attempt-7/work\n - Platform: linux"
TOOLS = [
    {"name": "Write", "description": "Write a file", "input_schema": {"type": "object"}},
    {"name": "Skill", "description": "Invoke a skill", "input_schema": {"type": "object"}},
]


def client(server: FakeAnthropic, max_retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.base_url, api_key="test-key", max_retries=max_retries, timeout=60
    )


def create(sdk: anthropic.Anthropic, messages: list[dict[str, Any]], stream: bool, **kw: Any):
    """One Messages call, streamed (accumulated by the SDK) or not."""
    kwargs = {"model": MODEL, "max_tokens": 512, "messages": messages, **kw}
    if stream:
        with sdk.messages.stream(**kwargs) as events:
            return events.get_final_message()
    return sdk.messages.create(**kwargs)


def answer(message: Any, results: dict[str, str], is_error: bool = False) -> list[dict[str, Any]]:
    """The assistant turn `message` and a user turn with one tool_result per tool_use in it."""
    assistant = {"role": "assistant", "content": [b.model_dump() for b in message.content]}
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": b.id,
            "content": results[b.name],
            "is_error": is_error,
        }
        for b in message.content
        if b.type == "tool_use"
    ]
    return [assistant, {"role": "user", "content": blocks}]


@pytest.mark.parametrize("stream", [False, True])
def test_steps_script_a_tool_loop_turn_by_turn(stream: bool) -> None:
    script = {
        "name": "agent",
        "steps": [
            {
                "text": "Writing two files.",
                "tool_use": [
                    {"name": "Write", "input": {"file_path": "{cwd}/a.md", "content": "A {x}"}},
                    {"name": "Write", "input": {"file_path": "{cwd}/b.md", "content": "B"}},
                ],
            },
            {"text": "Done: {tool_result}"},
        ],
    }
    with FakeAnthropic(rules=[script], default="no more steps") as server:
        sdk = client(server)
        history: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "system", "content": CWD_LINE},
        ]
        first = create(sdk, history, stream, tools=TOOLS)
        assert first.stop_reason == "tool_use"
        assert [b.type for b in first.content] == ["text", "tool_use", "tool_use"]
        uses = first.content[1:]
        assert [u.input["file_path"] for u in uses] == [
            "/tmp/attempt-7/work/a.md",
            "/tmp/attempt-7/work/b.md",
        ]
        assert uses[0].input["content"] == "A {x}"  # other braces pass untouched
        assert uses[0].id != uses[1].id and uses[0].id.startswith("toolu_fake_")
        history += answer(first, {"Write": "File created"})
        second = create(sdk, history, stream, tools=TOOLS)
        assert second.content[0].text == "Done: File created\nFile created"
        assert second.stop_reason == "end_turn"
        history += [{"role": "assistant", "content": "Done"}, {"role": "user", "content": "more"}]
        assert create(sdk, history, stream).content[0].text == "no more steps"
        assert [r.rule for r in server.requests] == ["agent#1", "agent#2", "default"]


def test_tool_result_conditions_name_content_and_error() -> None:
    rules: list[dict[str, Any]] = [
        {"name": "failed", "tool_result": {"name": "Write", "is_error": True}, "text": "retry"},
        {"name": "skill", "tool_result": {"name": "Skill", "contains": "Launching"}, "text": "s"},
        {"name": "any-write", "tool_result": "Write", "text": "w"},
        {"name": "fresh", "tool_result": False, "tool_use": {"name": "Write", "input": {}}},
    ]
    with FakeAnthropic(rules=rules) as server:
        sdk = client(server)
        prompt = [{"role": "user", "content": "go"}]
        first = create(sdk, prompt, False)
        create(sdk, prompt + answer(first, {"Write": "denied"}, is_error=True), False)
        create(sdk, prompt + answer(first, {"Write": "File created"}), False)
        skill = Rule(tool_use={"name": "Skill", "input": {"skill": "demo"}})
        server.set_rules([skill, *rules[:3]])
        called = create(sdk, prompt, False)
        server.set_rules(rules)
        create(sdk, prompt + answer(called, {"Skill": "Launching skill: demo"}), False)
        names = [r.rule for r in server.requests]
        last = server.requests[-1].json
    assert names == ["fresh", "failed", "any-write", "rule0", "skill"]
    (result,) = last_tool_results(last)
    assert (result.name, result.is_error) == ("Skill", False)
    assert result.content == "Launching skill: demo"
    assert turn_number(last) == 2


def test_request_contains_sees_tools_system_and_messages() -> None:
    rules: list[dict[str, Any]] = [
        {"name": "in-tools", "request_contains": "Invoke a skill", "turn": 1, "text": "t"},
        {"name": "in-message", "request_contains": "DEMO-DESC", "text": "m"},
        {"name": "absent", "request_not_contains": "DEMO-DESC", "text": "a"},
    ]
    listing = [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "The following skills are available:\n- demo: DEMO-DESC"},
    ]
    with FakeAnthropic(rules=rules) as server:
        sdk = client(server)
        create(sdk, [{"role": "user", "content": "hi"}], False, tools=TOOLS)
        create(sdk, listing, False)
        create(sdk, [{"role": "user", "content": "hi"}], False, system="no listing here")
        assert [r.rule for r in server.requests] == ["in-tools", "in-message", "absent"]


def test_cwd_template_without_a_stated_cwd_is_a_400_naming_the_rule() -> None:
    rule = {"name": "writer", "tool_use": {"name": "Write", "input": {"file_path": "{cwd}/x"}}}
    with FakeAnthropic(rules=[rule]) as server:
        with pytest.raises(anthropic.BadRequestError, match="rule 'writer' uses \\{cwd\\}"):
            create(client(server), [{"role": "user", "content": "go"}], True)
        assert server.requests[0].rule == "writer"
    assert working_directory({"system": "CWD: /w\nDate: today"}) == "/w"
    assert working_directory({"messages": [{"role": "system", "content": CWD_LINE}]}) == (
        "/tmp/attempt-7/work"
    )


def test_steps_survive_a_529_storm_and_retries_ask_the_same_turn() -> None:
    script = {"name": "s", "steps": [{"tool_use": {"name": "Skill", "input": {"skill": "demo"}}}]}
    faults = [Fault("overloaded", first=2, retry_after_ms=1)]
    with FakeAnthropic(rules=[script], faults=faults) as server:
        message = create(client(server, max_retries=2), [{"role": "user", "content": "q"}], True)
        assert [(r.status, r.rule) for r in server.requests] == [
            (529, None),
            (529, None),
            (200, "s#1"),
        ]
    assert message.content[0].input == {"skill": "demo"}
    with FakeAnthropic(rules=[script], faults=["529"]) as server:
        with pytest.raises(anthropic.OverloadedError):
            create(client(server), [{"role": "user", "content": "q"}], True)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"steps": []}, "steps must be a non-empty list"),
        ({"steps": [{"txt": "x"}]}, r"steps\[0\]: unknown key\(s\) txt"),
        ({"steps": ["a"], "text": "b"}, "either steps or text"),
        ({"tool_result": {"tool": "Write"}}, r"tool_result: unknown key\(s\) tool"),
        ({"tool_result": 3}, "tool_result must be"),
        ({"turn": 0}, "turn must be an integer >= 1"),
        ({"tool_use": []}, "must not be an empty list"),
        ({"tool_use": [{"input": {}}]}, "string 'name'"),
        ({"steps": [{"tool_use": {"name": "W", "input": "x"}}]}, "input must be a mapping"),
    ],
)
def test_bad_script_rules_are_rejected(rule: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FakeAnthropic(rules=[rule])


def test_a_step_can_fail_and_a_default_script_repeats_its_last_step() -> None:
    default = {"steps": ["first", {"fault": "overloaded"}]}
    with FakeAnthropic(default=default) as server:
        sdk = client(server)
        assert create(sdk, [{"role": "user", "content": "q"}], True).content[0].text == "first"
        later = [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "first"},
            {"role": "user", "content": "again"},
        ]
        for extra in (
            [],
            [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}],
        ):
            with pytest.raises(anthropic.OverloadedError):
                create(sdk, later + extra, True)
        assert [(r.rule, r.fault) for r in server.requests] == [
            ("default#1", None),
            ("default#2", "overloaded"),
            ("default#3", "overloaded"),
        ]


def test_a_yaml_rules_file_holds_a_script(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "rules:\n"
        "  - name: agent\n"
        "    request_contains: DEMO-DESC\n"
        "    steps:\n"
        "      - tool_use: {name: Write, input: {file_path: '{cwd}/r.md', content: x}}\n"
        "      - text: done\n"
        "  - {name: denied, tool_result: {name: Write, is_error: true}, text: no}\n",
        encoding="utf-8",
    )
    config = load_config(path)
    with FakeAnthropic(rules=config["rules"]) as server:
        listing = [
            {"role": "user", "content": "go"},
            {"role": "system", "content": CWD_LINE + "\n- demo: DEMO-DESC"},
        ]
        message = create(client(server), listing, True)
        assert server.requests[0].rule == "agent#1"
    assert message.content[0].input == {"file_path": "/tmp/attempt-7/work/r.md", "content": "x"}
