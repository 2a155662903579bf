"""The `openai` executor (OpenAI-compatible Chat Completions) against the loopback fake OpenAI
server: the skill in the system message, the skill folder's files read through
`read_skill_file` in a multi-turn loop, usage and cost, errors classed as the other executors
do (never a failure), the key rule, its grader and text model, and a whole `skill-eval run`
of the demo suite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, Skill, Task, Usage
from skill_eval.core.work import ToolCall
from skill_eval.errors import ExecutorError
from skill_eval.executors.base import create_executor, create_grader, create_text_model
from skill_eval.executors.grader import GradeRequest, GraderSettings
from skill_eval.executors.openai_api import OpenAIConfig, OpenAIExecutor, build_body
from skill_eval.executors.text_model import TextModelError, TextModelSettings, TextRequest
from skill_eval.skills import load_skill
from skill_eval.skills.files import skill_folder
from tests.fakes.openai_server import FakeOpenAI, Fault
from tests.fakes.rules import load_config
from tests.helpers import REPO, contains_task, read_json, run_cli, write_skill, write_suite

MODEL = "local-model"
GUIDE = "GUIDE-51f0: always say alpha"
READ = "read_skill_file"


def guided_skill(tmp_path: Path) -> Skill:
    root = write_skill(tmp_path / "guided", "Before answering, read references/guide.md.")
    (root / "references").mkdir()
    (root / "references" / "guide.md").write_text(GUIDE, encoding="utf-8")
    return load_skill(root)


def request(skill: Skill | None, prompt: str = "What do you say?") -> ExecutionRequest:
    return ExecutionRequest(
        task=Task(id="t", prompt=prompt, judge={"type": "contains", "expected": ["x"]}),
        skill=skill,
        arm="candidate",
        attempt=0,
        timeout_seconds=60,
    )


def make(server: FakeOpenAI, **options: Any) -> OpenAIExecutor:
    values = {"model": MODEL, "base_url": server.v1_url, **options}
    executor = create_executor("openai", values)
    assert isinstance(executor, OpenAIExecutor)
    executor.preflight()
    return executor


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    rules = [
        {
            "name": "reader",
            "request_contains": "read references/guide.md",
            "steps": [
                {
                    "text": "Reading.",
                    "tool_use": {"name": READ, "input": {"path": "references/guide.md"}},
                },
                {"tool_use": {"name": READ, "input": {"path": "../outside.txt"}}},
                "alpha, as the guide says: {tool_result}",
            ],
        },
        {"name": "skilled", "system_contains": "SKILL-MARK", "text": "with the skill"},
    ]
    with FakeOpenAI(rules=rules, default="plain answer") as server:
        yield server


def test_the_first_body_by_skill_mode(tmp_path: Path) -> None:
    skill = guided_skill(tmp_path)
    folder_config = OpenAIConfig(model=MODEL, max_tokens=99, temperature=0.2)
    system = build_body(folder_config, MODEL, request(skill), skill_folder(skill))
    assert system["messages"][0]["role"] == "system"
    assert system["messages"][0]["content"].startswith(skill.content)
    assert "references/guide.md" in system["messages"][0]["content"]
    assert system["tools"][0]["function"]["name"] == READ
    assert (system["max_tokens"], system["temperature"]) == (99, 0.2)
    prepend = OpenAIConfig(
        model=MODEL, skill_mode="prepend", max_tokens_field="max_completion_tokens"
    )
    body = build_body(prepend, MODEL, request(skill), None)
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert skill.content in body["messages"][0]["content"] and "tools" not in body
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body
    none = build_body(OpenAIConfig(model=MODEL), MODEL, request(None), None)
    assert none["messages"] == [{"role": "user", "content": "What do you say?"}]


def test_skill_in_the_system_message_and_usage(fake: FakeOpenAI, tmp_path: Path) -> None:
    skill = load_skill(write_skill(tmp_path / "marked", "SKILL-MARK: be terse."))
    result = make(fake).run(request(skill))
    assert result.failure is None and result.output == "with the skill"
    (record,) = fake.requests
    assert record.path == "/v1/chat/completions" and "SKILL-MARK" in record.system
    assert "tools" not in record.json  # a one-file skill sends no tool
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.cost_usd == 0.0 and "unknown price" in result.meta["price"]
    assert result.meta["model"] == MODEL and result.meta["stop_reason"] == "stop"


def test_the_model_reads_the_skill_folder_over_several_turns(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "outside.txt").write_text("OUTSIDE", encoding="utf-8")
    result = make(fake).run(request(guided_skill(tmp_path)))
    assert result.failure is None
    assert result.output.startswith("alpha, as the guide says: refused:")
    assert result.transcript == (
        ToolCall(name=READ, input={"path": "references/guide.md"}, ok=True, output=GUIDE),
        ToolCall(
            name=READ,
            input={"path": "../outside.txt"},
            ok=False,
            output=result.transcript[1].output,
        ),
    )
    assert "OUTSIDE" not in result.output + json.dumps([c.output for c in result.transcript])
    second, third = fake.requests[1].json, fake.requests[2].json
    assistant, answer = second["messages"][-2:]
    assert assistant["role"] == "assistant" and assistant["content"] == "Reading."
    assert assistant["tool_calls"][0]["function"]["name"] == READ
    assert answer == {
        "role": "tool",
        "tool_call_id": assistant["tool_calls"][0]["id"],
        "content": GUIDE,
    }
    assert third["messages"][-1]["content"].startswith("refused:")
    assert result.meta["requests"] == 3
    per_request = [r.reply["usage"]["prompt_tokens"] for r in fake.requests]
    assert result.usage.input_tokens == sum(per_request)


def test_the_last_tool_turn_offers_no_more_calls(fake: FakeOpenAI, tmp_path: Path) -> None:
    result = make(fake, max_tool_turns=2).run(request(guided_skill(tmp_path)))
    assert [r.json.get("tool_choice") for r in fake.requests] == [None, "none"]
    assert result.failure is None and len(result.transcript) == 1


def test_cached_tokens_and_a_price_file(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "models:\n  local-model: {input: 1, output: 2, cache_write: 1, cache_read: 0.5}\n"
    )
    rules = [
        {"text": "ok", "usage": {"input_tokens": 1000, "cached_tokens": 400, "output_tokens": 10}}
    ]
    with FakeOpenAI(rules=rules) as server:
        result = make(server, price_file=str(prices)).run(request(None))
    assert result.usage == Usage(input_tokens=600, output_tokens=10, cache_read_input_tokens=400)
    assert result.cost_usd == pytest.approx((600 * 1 + 10 * 2 + 400 * 0.5) / 1e6)


@pytest.mark.parametrize(
    ("fault", "retryable", "fatal", "status"),
    [
        (Fault("rate_limit", retry_after=7), True, False, 429),
        (Fault("overloaded"), True, False, 503),
        (Fault("api_error"), True, False, 500),
        (Fault("authentication"), False, True, 401),
        (Fault("permission"), False, True, 403),
        (Fault("not_found"), False, True, 404),
        (Fault("drop_before_response"), True, False, None),
        (Fault("drop_mid_stream"), True, False, None),
        (Fault("malformed"), True, False, None),
    ],
)
def test_errors_are_classed_never_failures(
    fault: Fault, retryable: bool, fatal: bool, status: int | None
) -> None:
    with FakeOpenAI(faults=[fault]) as server:
        result = make(server).run(request(None))
    assert result.failure is not None and result.output == ""
    assert (result.failure.retry, result.failure.stops_run, result.meta.get("status")) == (
        retryable,
        fatal,
        status,
    )
    if fault.kind == "rate_limit":
        assert result.failure.retry_after == 7 and "rate_limit_exceeded" in result.failure.message


def test_a_slow_server_is_a_retryable_timeout() -> None:
    with FakeOpenAI(latency=3) as server:
        executor = make(server)
        result = executor.run(replace(request(None), timeout_seconds=0.5))
    assert (
        result.failure is not None
        and result.failure.retry
        and result.meta["error_type"] == "timeout"
    )


def test_key_rules_and_preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = create_executor("openai", {"model": MODEL, "base_url": "https://example.invalid/v1"})
    with pytest.raises(ExecutorError, match="OPENAI_API_KEY is not set"):
        remote.preflight()
    with pytest.raises(ExecutorError, match="needs a model"):
        create_executor("openai", {"base_url": "http://127.0.0.1:9/v1"}).preflight()
    with pytest.raises(ExecutorError, match="not supported"):
        create_executor("openai", {"model": MODEL, "skill_mode": "installed"}).preflight()
    with FakeOpenAI(default="ok") as server:
        make(server).run(request(None))  # localhost: no key needed, none sent
        monkeypatch.setenv("LOCAL_KEY", "secret-1")
        make(server, api_key_env="LOCAL_KEY").run(request(None))
        headers = [r.headers.get("authorization") for r in server.requests]
    assert headers == [None, "<redacted>"]


def test_grader_forced_call_text_fallback_and_errors() -> None:
    schema = {
        "type": "object",
        "properties": {"passed": {"type": "boolean"}},
        "required": ["passed"],
    }
    rules = [
        {
            "name": "forced",
            "tool_choice_name": "verdict",
            "system_contains": "TOOL",
            "tool_input": {"passed": True},
        },
        {"name": "tagged", "text": 'Sure. <{judgement_tag}>{"passed": false}</{judgement_tag}>'},
    ]
    settings = GraderSettings(timeout=60, sdk_retries=2)
    with FakeOpenAI(rules=rules, faults=[Fault("overloaded", first=1, retry_after_ms=1)]) as server:
        grader = create_grader("openai", {"base_url": server.v1_url}, settings)
        asked = GradeRequest(
            system="TOOL judge", prompt="p", schema=schema, tool_name="verdict", model=MODEL
        )
        forced = grader.complete(asked)
        tagged = grader.complete(
            GradeRequest(
                system="plain", prompt="p", schema=schema, tool_name="verdict", model=MODEL
            )
        )
        assert [r.status for r in server.requests] == [503, 200, 200]  # retried itself
        server.set_faults(["authentication"])
        denied = grader.complete(asked)
    assert (forced.data, forced.error) == ({"passed": True}, None)
    assert (tagged.data, tagged.error) == ({"passed": False}, None)
    assert denied.data is None and denied.transient is False and "401" in (denied.error or "")


def test_text_model_replies_and_raises() -> None:
    with FakeOpenAI(default="a reply") as server:
        model = create_text_model(
            "openai", {"base_url": server.v1_url}, TextModelSettings(timeout=60)
        )
        reply = model.complete(TextRequest(system="s", prompt="p", model=MODEL, label="reviewer"))
        server.set_faults(["not_found"])
        with pytest.raises(TextModelError, match="reviewer: model call failed: HTTP 404"):
            model.complete(TextRequest(system="s", prompt="p", model=MODEL, label="reviewer"))
    assert reply.text == "a reply" and reply.usage.output_tokens > 0 and reply.model == MODEL


def test_skill_eval_run_of_the_demo_suite(tmp_path: Path) -> None:
    config = load_config(REPO / "task_suites" / "demo" / "fake_anthropic_rules.yaml")
    with FakeOpenAI(rules=config["rules"], default=config["default"]) as server:
        code, out, err = run_cli(
            "run",
            "--skill-path",
            str(REPO / "fixtures" / "demo-skill-improved"),
            "--task-suite",
            str(REPO / "task_suites" / "demo" / "task_suite.yaml"),
            "--executor",
            "openai",
            "--executor-option",
            f"base_url={server.v1_url}",
            "--model",
            MODEL,
            "--state-root",
            str(tmp_path / "st"),
            "-q",
        )
        requests = server.requests
    assert code == 0, err  # 3 of 5 improved, none worse: the exact test rules out 10 points
    evaluation = read_json(Path(out.strip()))["evaluation"]
    assert (evaluation["execution_pass_rate"], evaluation["baseline_pass_rate"]) == (1.0, 0.4)
    assert len(requests) == 10 and all(r.protocol == "chat" for r in requests)
    skilled = [r for r in requests if "# Release notes" in r.system]
    assert len(skilled) == 5 and all(r.rule.startswith("candidate-") for r in skilled)


def test_a_run_with_a_folder_skill_answers_its_reads(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t0", "alpha")])
    skill = write_skill(tmp_path / "guided", "Before answering, read references/guide.md.")
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text(GUIDE, encoding="utf-8")
    rules = [
        {
            "name": "reader",
            "request_contains": "read references/guide.md",
            "steps": [
                {"tool_use": {"name": READ, "input": {"path": "references/guide.md"}}},
                "alpha: {tool_result}",
            ],
        }
    ]
    with FakeOpenAI(rules=rules, default="no idea") as server:
        code, out, err = run_cli(
            *("run", "--standalone", "--task-suite", str(suite), "--skill-path", str(skill)),
            *("--executor", "openai", "--base-url", server.v1_url),  # the shorthand flag
            *("--model", MODEL, "--state-root", str(tmp_path / "st"), "-q", "--policy", "delta"),
        )
        count = server.count
    assert code == 0, err
    data = read_json(Path(out.strip()))
    (attempt,) = data["candidate_results"][0]["attempts"]
    assert attempt["transcript"] == [
        {"name": READ, "input": {"path": "references/guide.md"}, "ok": True, "output": GUIDE}
    ]
    assert data["evaluation"]["execution_pass_rate"] == 1.0 and count == 2 + 1
    assert not [w for w in data["warnings"] if "SKILL.md alone" in w]
