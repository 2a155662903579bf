"""The anthropic executor hands the model the skill's folder (issue 21): SKILL.md, the list of
its other files and the `read_skill_file` tool, answered in a bounded loop, through the real
SDK against the loopback Messages API. A one-file skill sends no tool."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, ExecutionResult, Skill, Task, Usage
from skill_eval.core.work import ToolCall
from skill_eval.engine.cache import baseline_key
from skill_eval.engine.fingerprint import ArmSkill, Inputs
from skill_eval.executors.anthropic_api import AnthropicConfig, AnthropicExecutor
from skill_eval.executors.base import create_executor
from skill_eval.inputs.suite import load_suite
from skill_eval.plan.run_plan import Decision
from skill_eval.skills import load_skill
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import contains_task, write_skill, write_suite

GUIDE = "GUIDE-CONTENT-93b1: indent with tabs"
SECRET = "OUTSIDE-SECRET-2d7e"
READ = "read_skill_file"


def guide_skill(tmp_path: Path) -> Skill:
    root = write_skill(tmp_path / "tabs", "Before answering, read references/guide.md.")
    (root / "references").mkdir()
    (root / "references" / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "outside.txt").write_text(SECRET, encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", root / "references" / "leak.md")
    return load_skill(root)


def reads(*paths: str) -> dict[str, Any]:
    return {"tool_use": [{"name": READ, "input": {"path": p}} for p in paths]}


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    rules = [
        {
            "name": "reader",
            "request_contains": "read references/guide.md",
            "steps": [
                reads("references/guide.md"),
                reads("../outside.txt"),
                {"text": "answer after reading"},
            ],
        }
    ]
    with FakeAnthropic(rules=rules, default="plain answer") as server:
        yield server


def make(fake: FakeAnthropic, **kw: Any) -> AnthropicExecutor:
    executor = create_executor(
        "anthropic",
        AnthropicConfig(base_url=fake.base_url, env={"ANTHROPIC_API_KEY": "sk-test"}, **kw),
    )
    assert isinstance(executor, AnthropicExecutor)
    return executor


def run(executor: AnthropicExecutor, skill: Skill | None) -> ExecutionResult:
    task = Task(id="t1", prompt="Format this", judge={"type": "contains", "expected": ["x"]})
    return executor.run(
        ExecutionRequest(
            task=task,
            arm="candidate" if skill else "baseline",
            attempt=0,
            skill=skill,
            timeout_seconds=60,
        )
    )


def results_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


@pytest.mark.parametrize("mode", ["system", "prepend"])
def test_the_model_reads_the_guide_and_never_what_lies_outside(
    fake: FakeAnthropic, tmp_path: Path, mode: str
) -> None:
    result = run(make(fake, skill_mode=mode), guide_skill(tmp_path))
    assert result.failure is None and result.output == "answer after reading"
    first, second, third = fake.requests_to("/v1/messages")
    assert [t["name"] for t in first.json["tools"]] == [READ]
    prompt = json.dumps(first.json["system"] if mode == "system" else first.json["messages"])
    assert "references/guide.md (" in prompt and "bytes" in prompt
    assert GUIDE not in json.dumps(first.json)  # listed, not sent until read
    [guide] = results_of(second.json)
    assert guide["content"] == GUIDE and not guide.get("is_error")
    [outside] = results_of(third.json)
    assert outside["is_error"] is True and "refused" in outside["content"]
    assert all(SECRET not in json.dumps(r.body) for r in fake.requests)
    assert result.transcript == (
        ToolCall(READ, {"path": "references/guide.md"}, True, GUIDE),
        ToolCall(READ, {"path": "../outside.txt"}, False, outside["content"]),
    )
    assert result.meta["requests"] == 3


def test_absolute_paths_and_links_out_get_errors_in_one_turn(tmp_path: Path) -> None:
    skill = guide_skill(tmp_path)
    rules = [
        {
            "request_contains": "read references/guide.md",
            "steps": [
                reads(str(tmp_path / "outside.txt"), "references/leak.md", "references/guide.md"),
                {"text": "done"},
            ],
        }
    ]
    with FakeAnthropic(rules=rules) as fake:
        result = run(make(fake), skill)
        assert result.output == "done"
        blocks = results_of(fake.requests[1].json)
    assert [bool(b.get("is_error")) for b in blocks] == [True, True, False]
    assert blocks[2]["content"] == GUIDE
    assert all(SECRET not in json.dumps(r.body) for r in fake.requests)
    assert [c.ok for c in result.transcript] == [False, False, True]


def test_usage_and_cost_sum_over_the_loop_and_the_skill_stays_cached(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    result = run(make(fake, model="claude-sonnet-4-6"), guide_skill(tmp_path))
    replies = [Usage.from_dict(r.reply["usage"]) for r in fake.requests]
    assert result.usage == sum(replies, Usage())
    first, second, _ = fake.requests
    assert first.json["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert replies[0].cache_creation_input_tokens > 0
    assert replies[1].cache_read_input_tokens >= replies[0].cache_creation_input_tokens
    single = make(fake, model="claude-sonnet-4-6").prices.cost("claude-sonnet-4-6", replies[0])[0]
    assert result.cost_usd > single > 0


def test_one_file_skills_and_the_baseline_send_no_tool(fake: FakeAnthropic, tmp_path: Path) -> None:
    executor = make(fake)
    alone = load_skill(
        write_skill(tmp_path / "alone", "Before answering, read references/guide.md.")
    )
    for skill in (alone, None):
        result = run(executor, skill)
        assert result.failure is None and result.transcript == ()
    assert fake.count == 2  # one request each: no loop
    assert all("tools" not in r.json for r in fake.requests)
    assert "read_skill_file" not in json.dumps([r.body for r in fake.requests])


def test_the_loop_is_bounded(tmp_path: Path) -> None:
    rules = [
        {
            "request_contains": "read references/guide.md",
            "text": "still reading",
            **reads("references/guide.md"),
        }
    ]
    with FakeAnthropic(rules=rules) as fake:
        result = run(make(fake, max_tool_turns=3), guide_skill(tmp_path))
        bodies = [r.json for r in fake.requests]
    assert len(bodies) == 3
    assert "tool_choice" not in bodies[0] and bodies[2]["tool_choice"] == {"type": "none"}
    assert result.failure is None and result.output == "still reading"
    assert len(result.transcript) == 2  # the last turn's call is never answered
    assert result.meta["stop_reason"] == "tool_use"


def test_unknown_tools_get_an_error_result(tmp_path: Path) -> None:
    rules = [
        {
            "request_contains": "read references/guide.md",
            "steps": [
                {"tool_use": {"name": "Bash", "input": {"command": "cat /etc/passwd"}}},
                {"text": "ok"},
            ],
        }
    ]
    with FakeAnthropic(rules=rules) as fake:
        result = run(make(fake), guide_skill(tmp_path))
        [block] = results_of(fake.requests[1].json)
    assert block["is_error"] is True and "unknown tool 'Bash'" in block["content"]
    assert result.transcript[0].name == "Bash" and not result.transcript[0].ok


def test_describe_names_the_tool(fake: FakeAnthropic) -> None:
    isolation = make(fake).describe()["isolation"]
    assert isolation["tools"] == [READ] and isolation["max_tool_turns"] == 10


def test_a_read_folder_counts_in_the_baseline_cache_key(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    suite = load_suite(write_suite(tmp_path / "s", [contains_task("t1", "alpha")]))
    skill = write_skill(tmp_path / "skill")
    (skill / "helper.md").write_text("v1")

    def key() -> str:
        return baseline_key(
            suite,
            Inputs(
                skills={"baseline": ArmSkill("x", skill)},
                executor=make(fake).describe(),
                skill_mode="system",
                decision=Decision(samples=1),
                judge_backend="mock",
                judge_model="j",
            ),
        )

    before = key()
    (skill / "helper.md").write_text("v2")  # the model could read it: the baseline changed
    assert key() != before


def test_a_fault_mid_loop_is_retryable_and_keeps_what_was_spent(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add_fault("overloaded", nth=2, retry_after=0)
    result = run(make(fake, model="claude-sonnet-4-6"), guide_skill(tmp_path))
    assert result.failure.message and result.failure.retry and result.meta["status"] == 529
    first = Usage.from_dict(fake.requests[0].reply["usage"])
    assert result.usage == first and result.cost_usd > 0
    assert fake.count == 2
