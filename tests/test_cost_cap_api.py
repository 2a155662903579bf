"""The cap acts when it is reached, on an API executor (#49): the `anthropic` executor asks
the run's budget before each request of an attempt and charges each response as it comes,
so a cap crossed by an attempt's second reply stops its third request; the attempt ends
stopped for budget (never retried, never a failure), the run exits 5 with nothing new
started, and `run --resume RUN_DIR --max-cost-usd HIGHER` runs what was stopped and the
rest. Through the real SDK against the loopback Messages API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.budget import BUDGET_STOPPED
from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.engine.spend import Meter
from skill_eval.executors.anthropic_api import AnthropicConfig, AnthropicExecutor
from skill_eval.executors.base import create_executor
from skill_eval.skills import load_skill
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    journal_records,
    read_json,
    replies_cost,
    run_cli,
    write_skill,
    write_suite,
)

MODEL = "claude-sonnet-4-6"  # $15 a million output tokens: 20,000 out is $0.30
BIG = {"output_tokens": 20_000}
READ = {"tool_use": {"name": "read_skill_file", "input": {"path": "references/guide.md"}}}
# The skill's arm reads its guide twice, then answers: three requests, each $0.30 and more.
RULES = [
    {
        "name": "reader",
        "request_contains": "read references/guide.md",
        "steps": [{**READ, "usage": BIG}, {**READ, "usage": BIG}, {"text": "answer", "usage": BIG}],
    }
]


def guide_skill(root: Path) -> Path:
    folder = write_skill(root / "tabs", "Before answering, read references/guide.md.")
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("indent with tabs", encoding="utf-8")
    return folder


def test_a_cap_crossed_inside_an_attempt_stops_its_next_request(tmp_path: Path) -> None:
    with FakeAnthropic(rules=RULES) as fake:
        executor = create_executor(
            "anthropic",
            AnthropicConfig(
                model=MODEL, base_url=fake.base_url, env={"ANTHROPIC_API_KEY": "sk-test"}
            ),
        )
        assert isinstance(executor, AnthropicExecutor)
        meter = Meter(0.5, None, executor.prices)
        executor.use_budget(meter)
        task = Task("t", "Format this", {"type": "contains", "expected": ["x"]})
        skill = load_skill(guide_skill(tmp_path))
        result = executor.run(ExecutionRequest(task, "candidate", 0, skill, 60.0))
        sent, paid = fake.count, replies_cost(fake)
    assert sent == 2  # the second reply crossed $0.50: the third request never went
    assert result.meta["error_type"] == BUDGET_STOPPED and not result.failure.retry
    assert result.failure is not None and "budget is spent" in result.failure.message
    assert result.charged and result.usage.output_tokens == 40_000
    assert result.cost_usd == pytest.approx(paid) and meter.cost_usd == pytest.approx(paid)
    assert paid > 0.6


def run_args(tmp_path: Path, *more: str) -> list[str]:
    tasks = [
        {
            "id": f"t{i}",
            "prompt": f"Format file {i}",
            "judge": {"type": "contains", "expected": ["answer"]},
        }
        for i in range(2)
    ]
    suite = write_suite(tmp_path / "suite", tasks)
    return [
        *("run", "--task-suite", str(suite), "--skill-path", str(guide_skill(tmp_path))),
        *("--executor", "anthropic", "--model", MODEL, "--concurrency", "1"),
        *("--state-root", str(tmp_path / "state"), "--policy", "delta", "-q", *more),
    ]


def test_the_run_stops_there_exits_5_and_resumes_only_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic(rules=RULES, default="answer") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        code, out, err = run_cli(*run_args(tmp_path, "--max-cost-usd", "0.5"))
        first = fake.count
        assert code == 5, err
        assert "budget exhausted, no verdict (not a pass)" in err
        assert "1 stopped mid-way by the cap" in err
        assert first == 2  # the first attempt's third request refused; nothing else started
        run_dir = err.split("are kept in ", 1)[1].split(",", 1)[0]
        (record,) = journal_records(Path(run_dir) / "attempts.jsonl")
        assert record["status"] == "error" and record["meta"]["error_type"] == BUDGET_STOPPED
        assert record["tries"] == 1 and record["cost_usd"] == pytest.approx(replies_cost(fake))
        code, out, err = run_cli("run", "--resume", run_dir, "--max-cost-usd", "50", "-q")
        assert code in (0, 1, 4), err
        assert fake.count == first + 3 + 1 + 3 + 1  # both skilled attempts in full, both plain
    data: dict[str, Any] = read_json(out.strip())
    assert data["usage"]["candidate"]["attempts"] == 2 and data["errors"] == []
