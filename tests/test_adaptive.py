"""Adaptive concurrency (AIMD): the controller's rules, the gate's limits and pauses, the
rate-limit headers it reads, and the anthropic executor learning from the fake server's
token-bucket 429s through the real SDK."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.engine.progress import Progress
from skill_eval.executors.adaptive import AimdController, Budget, CallGate, rate_limit_budgets
from skill_eval.executors.anthropic_api import AnthropicConfig, AnthropicExecutor
from tests.fakes.anthropic_server import FakeAnthropic


def test_starts_at_the_ceiling_and_halves_on_a_throttle() -> None:
    aimd = AimdController(16)
    assert aimd.limit == 16
    assert aimd.throttled(started=1.0, now=2.0) and aimd.limit == 8
    assert aimd.throttled(started=3.0, now=4.0) and aimd.limit == 4


def test_one_congestion_event_cuts_once() -> None:
    aimd = AimdController(16)
    aimd.throttled(started=1.0, now=5.0)
    # calls that started before the cut were sent at the old level: no second cut
    assert not aimd.throttled(started=2.0, now=5.1) and aimd.limit == 8
    assert aimd.throttled(started=5.2, now=6.0) and aimd.limit == 4 and aimd.cuts == 2


def test_grows_by_one_per_window_of_successes_up_to_the_ceiling() -> None:
    aimd = AimdController(6)
    for now in range(4):
        aimd.throttled(started=float(now), now=float(now) + 0.5)
    assert aimd.limit == 1
    aimd.succeeded()
    assert aimd.limit == 2  # a window of 1 success
    for _ in range(2):
        aimd.succeeded()
    assert aimd.limit == 3  # a window of 2
    for _ in range(100):
        aimd.succeeded()
    assert aimd.limit == 6 and aimd.level == 6.0


def test_holds_when_the_budget_is_low_and_never_goes_below_the_floor() -> None:
    aimd = AimdController(4, minimum=2)
    for now in range(5):
        aimd.throttled(started=float(now), now=float(now) + 0.5)
    assert aimd.limit == 2
    aimd.succeeded(hold=True)
    assert aimd.level == 2.0


def test_rate_limit_headers() -> None:
    headers = {
        "Anthropic-RateLimit-Requests-Limit": "50",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "1970-01-01T00:00:10Z",
        "anthropic-ratelimit-tokens-limit": "x",
        "anthropic-ratelimit-output-tokens-limit": "1000",
        "anthropic-ratelimit-output-tokens-remaining": "900",
    }
    budgets = rate_limit_budgets(headers, now=5.0)
    assert budgets == {"requests": Budget(50, 0, 5.0), "output-tokens": Budget(1000, 900, None)}
    assert budgets["requests"].pace() == pytest.approx(0.1)  # 50 refill over 5 s
    assert budgets["output-tokens"].pace() == 0.0
    assert rate_limit_budgets(None) == {}


def test_the_gate_admits_at_most_the_limit() -> None:
    aimd = AimdController(4)
    aimd.throttled(started=0.0, now=time.monotonic())
    gate = CallGate(aimd)
    running, peak, lock = [0], [0], threading.Lock()

    def one(_: int) -> None:
        with gate.call() as call:
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.1)  # long enough for the second admitted call to overlap, even loaded
            with lock:
                running[0] -= 1
            call.ok(
                {
                    "anthropic-ratelimit-requests-limit": "9",
                    "anthropic-ratelimit-requests-remaining": "0",
                }
            )  # low budget: hold

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(16)))
    assert peak[0] == 2 and gate.limit == 2


def test_a_retry_after_pauses_every_call() -> None:
    gate = CallGate(AimdController(4))
    with gate.call() as call:
        call.failed(429, {"retry-after": "0.3"}, retry_after=0.3)
    assert gate.throttles == 1 and gate.limit == 2
    started = time.monotonic()
    with gate.call() as call:
        call.ok()
    assert time.monotonic() - started >= 0.25


def _request(i: int) -> ExecutionRequest:
    task = Task(id=f"t{i}", prompt=f"task {i}", judge={"type": "contains", "expected": ["x"]})
    return ExecutionRequest(task=task, arm="baseline", attempt=0, skill=None, timeout_seconds=30)


def test_the_executor_learns_from_the_servers_429s() -> None:
    # 8 calls at once against a bucket of 2: the first wave is mostly refused, one cut and
    # one pause of the retry-after (1 s) follow, then the rest go through
    with FakeAnthropic(latency=0.05, rate_limit=(50, 2)) as server:
        executor = AnthropicExecutor(
            AnthropicConfig(base_url=server.base_url, concurrency=8, env={"ANTHROPIC_API_KEY": "k"})
        )
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(executor.run, [_request(i) for i in range(8)]))
        limited = server.bucket.limited if server.bucket else 0
    failed = [r for r in results if r.failure]
    assert limited > 0 and len(failed) == limited  # no retries here: each 429 is a result
    assert all(
        r.failure.retry and r.meta["status"] == 429 and r.failure.retry_after == 1 for r in failed
    )
    gate = executor.gate
    assert gate is not None and gate.throttles == limited
    assert executor.concurrency_level is not None and executor.concurrency_level[0] < 8
    shown = Progress({"baseline": 8}, level=lambda: executor.concurrency_level).summary()
    assert f"concurrency {executor.concurrency_level[0]}/8" in shown


def test_no_gate_without_a_ceiling_or_when_fixed() -> None:
    assert AnthropicExecutor(AnthropicConfig()).gate is None
    fixed = AnthropicExecutor(AnthropicConfig(concurrency=4, adaptive_concurrency=False))
    assert fixed.gate is None and fixed.concurrency_level is None
