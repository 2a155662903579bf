"""The meter counts what Claude Code spent, and the cap acts inside an attempt (#49): the
jail's API forward prices each reply it relays and charges it to the run's budget, so an
attempt that times out after priced replies costs what they cost (not $0: it printed no
`result` line), and once the budget is spent the forward refuses the agent's next request:
the attempt ends stopped for budget, the run exits 5, and `run --resume` with a higher cap
runs what was stopped. The real Claude Code CLI (claude-agent-sdk's, or
SKILL_EVAL_CLAUDE_BIN) in its jail against the loopback Messages API; skipped without either."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.budget import BUDGET_STOPPED
from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.core.workspace import AttemptWorkspace
from skill_eval.engine.spend import Meter
from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    jail_missing,
    journal_records,
    read_json,
    replies_cost,
    run_cli,
    write_skill,
    write_suite,
)

CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli()
pytestmark = pytest.mark.skipif(
    CLAUDE is None or jail_missing() is not None,
    reason=str(jail_missing() or "claude-agent-sdk not installed: pip install -e '.[agent]'"),
)
MODEL = "claude-sonnet-4-6"  # $15 a million output tokens: 20,000 out is $0.30
BIG = {"output_tokens": 20_000}


def write(name: str) -> dict[str, Any]:
    return {
        "tool_use": {"name": "Write", "input": {"file_path": f"{{cwd}}/{name}", "content": "x"}}
    }


def test_an_attempt_that_times_out_costs_what_its_replies_cost(tmp_path: Path) -> None:
    """The model writes a file (a reply of 20,000 tokens out), then never answers: the jail
    is killed at the attempt's time, with no `result` line from the CLI."""
    rules = [
        {
            "name": "agent",
            "steps": [{**write("a.md"), "usage": BIG}, {"text": "late", "latency": 600}],
        }
    ]
    with FakeAnthropic(rules=rules) as fake:
        executor = ClaudeCodeExecutor(
            ClaudeCliConfig(
                claude_bin=CLAUDE,
                base_url=fake.base_url,
                model=MODEL,
                claude_max_retries=0,
                env={"ANTHROPIC_API_KEY": "sk-test"},
            )
        )
        meter = Meter(None, 10**9, executor.prices)
        executor.use_budget(meter)
        task = Task(
            "t", "write a.md", {"type": "contains", "expected": ["x"]}, allowed_tools=("Write",)
        )
        workspace = AttemptWorkspace.create(tmp_path)
        # far longer than the first reply takes, however loaded the machine
        result = executor.run(ExecutionRequest(task, "baseline", 0, None, 45.0, workspace.path))
        paid, metered, asked = replies_cost(fake), meter.cost_usd, fake.count
    assert asked == 2 and result.failure is not None and "timed out" in result.failure.message
    assert result.usage.output_tokens == 20_000 and paid > 0.3
    assert result.cost_usd == pytest.approx(paid) and metered == pytest.approx(paid)
    assert result.charged and result.meta["models"] == [MODEL]


def test_the_cap_stops_the_agents_next_request_and_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = {"text": "done", "files": {"a.md": "x", "b.md": "x"}}
    tasks = [
        {
            "id": f"t{i}",
            "prompt": f"write the two files, round {i}",
            "allowed_tools": ["Write"],
            "reference": reference,
            "judge": {"type": "contains", "expected": ["done"]},
        }
        for i in range(2)
    ]
    suite = write_suite(tmp_path / "suite", tasks)
    skill = write_skill(tmp_path / "skill", "Write both files. SKILL-MARK")
    steps = [{**write("a.md"), "usage": BIG}, {**write("b.md"), "usage": BIG}, {"text": "done"}]
    rules = [{"name": "agent", "system_contains": "SKILL-MARK", "steps": steps}]
    with FakeAnthropic(rules=rules, default="done") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        run = [
            *("run", "--task-suite", str(suite), "--skill-path", str(skill)),
            *("--executor", "claude-cli", "--claude-bin", str(CLAUDE), "--model", MODEL),
            *("--concurrency", "1", "--policy", "delta", "-q", "--max-retries", "0"),
            *("--state-root", str(tmp_path / "state")),
        ]
        code, out, err = run_cli(*run, "--max-cost-usd", "0.5")
        first = fake.count
        assert code == 5, err
        assert "budget exhausted, no verdict (not a pass)" in err
        assert first == 2  # its second reply crossed $0.50: its third request was refused
        run_dir = err.split("are kept in ", 1)[1].split(",", 1)[0]
        (record,) = journal_records(Path(run_dir) / "attempts.jsonl")
        assert record["status"] == "error" and record["meta"]["error_type"] == BUDGET_STOPPED
        assert record["cost_usd"] == pytest.approx(replies_cost(fake))
        code, out, err = run_cli("run", "--resume", run_dir, "--max-cost-usd", "50", "-q")
        assert code in (0, 1, 4), err
        assert fake.count == first + 3 + 1 + 3 + 1  # the skilled attempts in full, the plain
    data: dict[str, Any] = read_json(out.strip())
    assert data["manifest"]["model"] == MODEL and data["errors"] == []
    assert data["usage"]["candidate"]["attempts"] == 2
