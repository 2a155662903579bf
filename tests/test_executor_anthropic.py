"""The `anthropic` executor through the real SDK against the loopback Messages API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, ExecutionResult, Skill, Task, Usage
from skill_eval.errors import ExecutorError
from skill_eval.executors.anthropic_api import (
    DEFAULT_MODEL,
    MISSING_KEY,
    AnthropicConfig,
    AnthropicExecutor,
    classify_exception,
)
from skill_eval.executors.base import SKILL_BEGIN, SKILL_END, create_executor
from skill_eval.executors.errors_map import parse_retry_after, retryable_message
from skill_eval.executors.pricing import DEFAULT_PRICES, PRICES_AS_OF, load_price_table
from tests.conftest import REPO
from tests.fakes.anthropic_server import FakeAnthropic

SKILL = Skill(name="shout", content="---\nname: shout\n---\nSKILL-MARKER-7f3: answer in CAPS")


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(
        rules=[{"system_contains": "SKILL-MARKER-7f3", "text": "WITH SKILL"}],
        default="plain answer",
    ) as server:
        yield server


def make(fake: FakeAnthropic, **kw: Any) -> AnthropicExecutor:
    kw.setdefault("env", {"ANTHROPIC_API_KEY": "sk-test"})
    executor = create_executor("anthropic", AnthropicConfig(base_url=fake.base_url, **kw))
    assert isinstance(executor, AnthropicExecutor)
    return executor


def run(
    executor: AnthropicExecutor,
    skill: Skill | None = SKILL,
    prompt: str = "Say hello",
    timeout: float = 60.0,
) -> ExecutionResult:
    task = Task(id="t1", prompt=prompt, judge={"type": "contains", "expected": ["x"]})
    arm = "candidate" if skill else "baseline"
    return executor.run(
        ExecutionRequest(task=task, arm=arm, attempt=0, skill=skill, timeout_seconds=timeout)
    )


# -- skill delivery ---------------------------------------------------------------------------


def test_system_mode_sends_skill_as_cached_system_block(fake: FakeAnthropic) -> None:
    result = run(make(fake, skill_mode="system"))
    assert result.failure is None and result.output == "WITH SKILL"
    body = fake.requests_to("/v1/messages")[0].json
    assert body["system"] == [
        {"type": "text", "text": SKILL.content, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [{"role": "user", "content": "Say hello"}]


def test_system_mode_reuses_the_cached_skill_across_attempts(fake: FakeAnthropic) -> None:
    executor = make(fake, skill_mode="system")
    first, second = run(executor), run(executor)
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens > 0


def test_prepend_mode_puts_skill_before_task(fake: FakeAnthropic) -> None:
    result = run(make(fake, skill_mode="prepend"))
    assert result.failure is None
    body = fake.requests_to("/v1/messages")[0].json
    assert "system" not in body
    content = body["messages"][0]["content"]
    assert content.startswith(f"{SKILL_BEGIN}\n{SKILL.content}\n{SKILL_END}\n\nTask: Say hello")


@pytest.mark.parametrize("mode", ["system", "prepend"])
def test_no_skill_request_never_carries_skill(fake: FakeAnthropic, mode: str) -> None:
    executor = make(fake, skill_mode=mode)
    run(executor, skill=SKILL)
    result = run(executor, skill=None)
    assert result.output == "plain answer"
    baseline = fake.requests_to("/v1/messages")[-1]
    assert "SKILL-MARKER-7f3" not in json.dumps(baseline.json)
    assert "system" not in baseline.json
    assert len(fake.requests_matching("SKILL-MARKER-7f3")) == 1


def test_installed_mode_is_refused(fake: FakeAnthropic) -> None:
    executor = make(fake, skill_mode="installed")
    with pytest.raises(ExecutorError, match="installed.*not supported|not supported.*installed"):
        executor.preflight()
    result = run(executor)
    assert result.failure.message and not result.failure.retry and fake.count == 0


def test_model_max_tokens_temperature_reach_request(fake: FakeAnthropic) -> None:
    run(make(fake, model="claude-haiku-4-5", max_tokens=123, temperature=0.2))
    body = fake.requests[0].json
    assert (body["model"], body["max_tokens"], body["temperature"]) == (
        "claude-haiku-4-5",
        123,
        0.2,
    )


def test_model_defaults(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    assert make(fake).model == DEFAULT_MODEL
    monkeypatch.setenv("SKILL_EVAL_MODEL", "claude-opus-4-5")
    assert make(fake).model == "claude-opus-4-5"
    assert make(fake, model="claude-3-5-haiku").model == "claude-3-5-haiku"


# -- preflight and describe -------------------------------------------------------------------


def test_preflight_without_key_names_the_variable(fake: FakeAnthropic) -> None:
    with pytest.raises(ExecutorError) as info:
        make(fake, env={}).preflight()
    assert str(info.value) == MISSING_KEY
    assert str(info.value).startswith("ANTHROPIC_API_KEY is not set")


def test_preflight_reads_key_from_environment(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    executor = make(fake, env={})
    executor.preflight()
    assert run(executor).failure is None


def test_describe(fake: FakeAnthropic) -> None:
    info = make(fake, temperature=0.0).describe()
    assert info["kind"] == "anthropic" and info["version"]
    assert info["model"] == DEFAULT_MODEL and info["max_tokens"] == 4096
    assert info["temperature"] == 0.0 and info["skill_mode"] == "system"
    assert info["isolation"]["prompt_cache"] is True
    assert info["isolation"]["sdk_retries"] == 0


def test_sdk_is_imported_lazily() -> None:
    code = (
        "import sys, skill_eval.executors.builtin, skill_eval.executors.anthropic_api; "
        "sys.exit('anthropic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- faults -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "status", "retry_after"),
    [
        ({"kind": "rate_limit", "retry_after": 7}, 429, 7.0),
        ({"kind": "rate_limit", "retry_after": None, "retry_after_ms": 1500}, 429, 1.5),
        ({"kind": "overloaded"}, 529, None),
        ({"kind": "api_error"}, 500, None),
    ],
)
def test_status_faults_are_retryable(
    fake: FakeAnthropic, fault: dict[str, Any], status: int, retry_after: float | None
) -> None:
    fake.set_faults([fault])
    result = run(make(fake))
    assert result.failure.message and result.failure.retry
    assert result.meta["status"] == status and f"HTTP {status}" in result.failure.message
    assert result.failure.retry_after == retry_after
    assert fake.count == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("kind", ["drop_before_response", "drop_mid_stream", "malformed"])
def test_transport_faults_are_retryable(fake: FakeAnthropic, kind: str) -> None:
    fake.set_faults([kind])
    result = run(make(fake))
    assert result.failure.message and result.failure.retry and result.output == ""
    assert result.meta["error_type"] == ("malformed" if kind == "malformed" else "connection")
    assert fake.count == 1


def test_fault_then_success(fake: FakeAnthropic) -> None:
    fake.set_faults([{"kind": "overloaded", "first": 1}])
    executor = make(fake)
    assert run(executor).failure.retry
    assert run(executor).output == "WITH SKILL"


def test_timeout_is_retryable(fake: FakeAnthropic) -> None:
    fake.set_rules([{"text": "slow", "latency": 3}])
    result = run(make(fake), timeout=0.3)
    assert (
        result.failure.message and result.failure.retry and result.meta["error_type"] == "timeout"
    )


def test_connection_refused_after_a_reply_is_retryable() -> None:
    """The server went down mid-run: an outage (before any reply it is fatal: see
    test_closed_port.py)."""
    with FakeAnthropic() as server:
        executor = create_executor(
            "anthropic", AnthropicConfig(base_url=server.base_url, env={"ANTHROPIC_API_KEY": "k"})
        )
        assert run(executor).failure is None  # type: ignore[arg-type]
    result = run(executor)  # type: ignore[arg-type]
    assert result.failure.message and result.failure.retry and not result.failure.stops_run


def test_not_found_is_not_retryable(fake: FakeAnthropic) -> None:
    executor = create_executor(
        "anthropic",
        AnthropicConfig(base_url=fake.base_url + "/nowhere", env={"ANTHROPIC_API_KEY": "k"}),
    )
    result = run(executor)  # type: ignore[arg-type]
    assert result.failure.message and not result.failure.retry and result.meta["status"] == 404


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (413, False),
        (408, True),
        (429, True),
        (500, True),
        (503, True),
        (529, True),
    ],
)
def test_status_classification(status: int, retryable: bool) -> None:
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    body = {"type": "error", "error": {"type": "some_error", "message": "why"}}
    response = httpx2.Response(status, json=body, request=request, headers={"retry-after": "2"})
    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1")
    exc = client._make_status_error_from_response(response)
    result = classify_exception(exc)
    assert result.failure.retry is retryable and result.meta["status"] == status
    assert "why" in result.failure.message
    # the service's wait is kept for a retry; a reply no retry heals has none to wait for
    assert result.failure.retry_after == (2.0 if retryable else None)


# -- usage and cost ---------------------------------------------------------------------------

USAGE = {
    "input_tokens": 1000,
    "output_tokens": 500,
    "cache_creation_input_tokens": 2000,
    "cache_read_input_tokens": 3000,
}


def test_usage_and_cost_recorded(fake: FakeAnthropic) -> None:
    fake.set_rules([{"text": "ok", "usage": USAGE}])
    result = run(make(fake, model="claude-opus-4-5-20251101"))
    assert result.usage == Usage(**USAGE)
    # 1000 x $5 + 500 x $25 + 2000 x $6.25 + 3000 x $0.50, per million tokens
    assert result.cost_usd == pytest.approx(0.0315)
    assert "price" not in result.meta and result.meta["latency_ms"] >= 0


def test_unknown_model_costs_zero_with_a_note(fake: FakeAnthropic) -> None:
    fake.set_rules([{"text": "ok", "usage": USAGE}])
    result = run(make(fake, model="some-other-model"))
    assert result.cost_usd == 0.0 and "unknown price" in result.meta["price"]
    assert result.usage.input_tokens == 1000


def test_price_file_overrides(fake: FakeAnthropic, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("as_of: '2030-01-01'\nmodels:\n  some-other-model: {input: 1, output: 2}\n")
    fake.set_rules([{"text": "ok", "usage": USAGE}])
    executor = make(fake, model="some-other-model", price_file=prices)
    result = run(executor)
    assert result.cost_usd == pytest.approx((1000 + 1000 + 2000 * 1.25 + 3000 * 0.1) / 1e6)
    assert executor.describe()["prices"] == {"as_of": "2030-01-01", "source": str(prices)}


# -- pricing and retry helpers (pure) -----------------------------------------------------------


def test_price_table_has_a_date_and_ignores_snapshot_dates() -> None:
    assert len(PRICES_AS_OF) == 10 and PRICES_AS_OF[4] == "-"
    table = load_price_table()
    assert table.lookup(DEFAULT_MODEL) is not None
    assert table.lookup("claude-opus-4-5-20251101") == DEFAULT_PRICES["claude-opus-4-5"]
    assert table.lookup("claude-opus-4-20250514") == DEFAULT_PRICES["claude-opus-4"]
    assert table.lookup("claude-3-5-haiku-latest") == DEFAULT_PRICES["claude-3-5-haiku"]
    assert table.lookup("claude-haiku-4-5@20251001") == DEFAULT_PRICES["claude-haiku-4-5"]
    assert table.lookup("claude-opus-5-5[1m]") == DEFAULT_PRICES["claude-opus-5-5"]
    # a newer model is never priced as an older one
    assert table.lookup("claude-sonnet-5-7") is None and table.lookup("claude-sonnet-45") is None
    assert table.lookup("gpt-4") is None


def test_price_file_json_flat_mapping(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps({"m1": {"input": 2, "output": 4, "cache_write": 3, "cache_read": 0.5}})
    )
    table = load_price_table(path)
    assert table.cost("m1", Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)) == (9.5, None)
    assert table.lookup("claude-sonnet-4-5") is not None  # built-ins stay


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "price file not found"),
        ("[1, 2]", "must be a mapping"),
        ("models: {m: {input: -1, output: 1}}", "models.m.input: must be a number"),
        ("models: {m: {input: 1}}", "models.m.output: must be a number"),
        ("models: {m: {input: 1, output: 1, bogus: 1}}", "models.m.bogus: unknown field"),
        ("models: [1]", "models: must be a mapping"),
        ("a: [", "cannot read price file"),
    ],
)
def test_bad_price_files(tmp_path: Path, text: str | None, message: str) -> None:
    path = tmp_path / "prices.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ExecutorError, match=message):
        load_price_table(path)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Thu, 01 Jan 2099 00:00:10 GMT"}, 4070908810.0 - 1000.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-4"}, 0.0),
        ({}, None),
        (None, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str] | None, seconds: float | None) -> None:
    assert parse_retry_after(headers, now=1000.0) == seconds


def test_retryable_message() -> None:
    assert retryable_message("API Error: Request rejected (429) · rate limited")
    assert retryable_message("Overloaded") and retryable_message("Request timed out")
    assert not retryable_message("invalid x-api-key") and not retryable_message(None)


def test_environment_is_left_alone() -> None:
    assert "ANTHROPIC_API_KEY" not in os.environ  # the isolation fixture is in force
