"""What a run will cost, before and while it costs it: `run --dry-run` prints the plan and an
estimate and calls no model; --max-cost-usd refuses a run whose estimate is over it before any
request, and stops one that reaches it (exit 5, attempts kept, --resume with a higher cap
finishes it); a second run's estimate comes from the first run's actual cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.executors.claude.binary import bundled_cli
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import REPO, contains_task, read_json, run_cli, write_skill, write_suite

DEMO = REPO / "task_suites" / "demo"
AGENT = REPO / "task_suites" / "demo-agent"
PRICED = "claude-sonnet-4-6"  # $3 / $15 a million tokens in the built-in table
RULES = [{"system_contains": "SKILL-MARK", "text": "alpha beta"}]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeAnthropic(rules=RULES, default="nothing useful") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake


def api_run(tmp_path: Path, tasks: int = 4, *more: str) -> list[str]:
    suite = write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(tasks)])
    skill = write_skill(tmp_path / "skill", "Say alpha. SKILL-MARK")
    return [
        *("run", "--task-suite", str(suite), "--skill-path", str(skill)),
        *("--state-root", str(tmp_path / "state"), "--executor", "anthropic"),
        *("--model", PRICED, "--policy", "delta", "--concurrency", "1", "-q", *more),
    ]


def estimated_usd(text: str) -> float:
    line = next(x for x in text.splitlines() if x.startswith("estimate: ~"))
    return float(line.split("$", 1)[1].split(" ", 1)[0])


def test_dry_run_of_the_demo_against_the_api_makes_no_request(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    state = tmp_path / "state"
    code, out, err = run_cli(
        *("run", "--task-suite", str(DEMO / "task_suite.yaml"), "--samples", "3"),
        *("--skill-path", str(REPO / "fixtures" / "demo-skill-improved")),
        *("--executor", "anthropic", "--model", PRICED, "--state-root", str(state), "--dry-run"),
    )
    assert code == 0, err
    assert "candidate 15, baseline 15 (30 in all)" in out
    assert "model-graded judge calls: 0" in out
    assert estimated_usd(out) > 0 and "basis: prior" in out
    assert server.count == 0
    assert not (state / "runs").exists() and not (state / "evaluations").exists()


def test_dry_run_of_the_agent_demo_and_of_arms(tmp_path: Path) -> None:
    agent = [
        *("run", "--mock", "--task-suite", str(AGENT / "task_suite.yaml")),
        *("--skill-path", str(AGENT / "skill" / "csv-report"), "--skill-mode", "installed"),
        *("--mock-outputs", str(AGENT / "mock_outputs.yaml")),
        *("--state-root", str(tmp_path / "state"), "--dry-run"),
    ]
    code, out, err = run_cli(*agent)
    assert code == 0, err
    assert "plan: attempts to run: candidate" in out and "judge calls" in out
    assert "estimate: ~0 tokens, $0.0000" in out and "mock executor calls no model" in out
    code, out, err = run_cli(
        *("run", "--mock", "--task-suite", str(AGENT / "task_suite.yaml")),
        *("--skill-path", str(AGENT / "skill" / "csv-report")),
        *("--mock-outputs", str(AGENT / "mock_arms.yaml"), "--samples", "2"),
        *("--state-root", str(tmp_path / "state"), "--dry-run"),
        *("--arm", "plain=installed", "--arm", "none=none"),
    )
    assert code == 0, err
    assert "plain " in out and "none " in out and "estimate:" in out
    assert not (tmp_path / "state" / "runs").exists()


def test_a_model_graded_judge_counts_its_calls_and_their_price(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    task = {"id": "r", "prompt": "Say alpha", "judge": {"type": "llm-rubric", "rubric": "alpha"}}
    suite = write_suite(tmp_path / "suite", [task, contains_task("c", "alpha")])
    skill = write_skill(tmp_path / "skill", "Say alpha.")
    code, out, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill), "--samples", "2"),
        *("--executor", "anthropic", "--model", PRICED, "--judge-model", "no-such-price"),
        *("--state-root", str(tmp_path / "state"), "--dry-run"),
    )
    assert code == 0, err
    assert "model-graded judge calls: 4" in out  # 1 graded task x 2 samples x 2 arms
    assert "dollars unknown" in out and "no known price for model 'no-such-price'" in out
    assert server.count == 0


def test_a_cap_below_the_estimate_refuses_the_run_before_any_request(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    code, out, err = run_cli(*api_run(tmp_path), "--max-cost-usd", "0.000001")
    assert code == 5, err
    assert "over --max-cost-usd 1e-06" in err and "Raise the cap (--max-cost-usd" in err
    assert server.count == 0 and out == ""
    assert not (tmp_path / "state" / "runs").exists()
    code, _, err = run_cli(*api_run(tmp_path), "--max-tokens-total", "10")
    assert code == 5 and "over --max-tokens-total 10" in err and server.count == 0


def test_the_cap_comes_from_the_config_file_too(
    tmp_path: Path, server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "skill-eval.toml").write_text("max-cost-usd = 0.000001\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(*api_run(tmp_path))
    assert code == 5 and "over --max-cost-usd 1e-06" in err and server.count == 0


def test_a_cap_reached_mid_run_stops_new_attempts_and_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # replies far longer than the prior: the estimate passes the cap, the spending does not
    rules = [{"system_contains": "SKILL-MARK", "text": "alpha", "usage": {"output_tokens": 20000}}]
    with FakeAnthropic(rules=rules, default="alpha") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(*api_run(tmp_path, 4), "--max-cost-usd", "0.5")
        assert code == 5, err
        assert "budget exhausted, no verdict (not a pass)" in err
        first = fake.count
        assert 2 <= first < 8  # $0.30 a candidate attempt: stopped after the second one
        run_dir = err.split("are kept in ", 1)[1].split(";", 1)[0]
        assert Path(run_dir, "attempts.jsonl").is_file()
        assert not (tmp_path / "state" / "evaluations").exists()  # no verdict written
        code, out, err = run_cli("run", "--resume", run_dir, "--max-cost-usd", "50", "-q")
        assert code in (0, 1, 4), err
        assert fake.count == 8  # only the attempts the cap held back ran
    data = read_json(out.strip())
    assert data["usage"]["candidate"]["attempts"] == 4
    assert data["usage"]["baseline"]["attempts"] == 4


def test_the_second_runs_estimate_is_within_a_fifth_of_the_first_runs_cost(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    code, out, err = run_cli(*api_run(tmp_path, 3, "--samples", "2"))
    assert code in (0, 1, 4), err
    usage = read_json(out.strip())["usage"]
    actual = sum(u["cost_usd"] for u in usage.values())
    assert actual > 0
    code, out, err = run_cli(*api_run(tmp_path, 3, "--samples", "2"), "--dry-run")
    assert code == 0, err
    assert "basis: 1 earlier run(s) of this suite and model" in out
    assert abs(estimated_usd(out) - actual) <= 0.2 * actual


def test_judge_calls_are_priced_into_the_artifact_and_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = {"id": "r", "prompt": "Say alpha", "judge": {"type": "llm-rubric", "rubric": "alpha"}}
    suite = write_suite(tmp_path / "suite", [task])
    skill = write_skill(tmp_path / "skill", "Say alpha.")
    with FakeAnthropic(default="not a judgement") as fake:  # a judge that is paid, unparsed
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(
            *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
            *("--executor", "anthropic", "--model", PRICED, "--judge-executor", "anthropic"),
            *("--judge-model", "claude-haiku-4-5", "--state-root", str(tmp_path / "state")),
        )
    usage = read_json(out.strip())["usage"]
    assert usage["candidate"]["judge_calls"] == 1 and usage["candidate"]["judge_cost_usd"] > 0
    assert usage["candidate"]["judge_tokens"] > 0
    assert "judges $" in err


def test_judge_calls_are_priced_from_the_price_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge model only --price-file knows is priced from it in the artifact's usage and
    usage_by_model (the built-in table has no price for it: $0 before)."""
    task = {"id": "r", "prompt": "Say alpha", "judge": {"type": "llm-rubric", "rubric": "alpha"}}
    suite = write_suite(tmp_path / "suite", [task])
    skill = write_skill(tmp_path / "skill", "Say alpha.")
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  house-judge: {input: 1000, output: 1000}\n", encoding="utf-8")
    with FakeAnthropic(default="not a judgement") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(
            *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
            *("--executor", "anthropic", "--model", PRICED, "--judge-executor", "anthropic"),
            *("--judge-model", "house-judge", "--price-file", str(prices)),
            *("--state-root", str(tmp_path / "state")),
        )
    data = read_json(out.strip())
    judged = data["usage"]["candidate"]
    assert judged["judge_calls"] == 1 and judged["judge_tokens"] > 0
    assert judged["judge_cost_usd"] == pytest.approx(judged["judge_tokens"] / 1000, rel=0.01)
    assert data["usage_by_model"]["house-judge"]["cost_usd"] > 0


TRIGGERS = REPO / "task_suites" / "demo-triggers"


@pytest.mark.skipif(bundled_cli() is None, reason="claude-agent-sdk not installed")
def test_trigger_attempts_are_estimated_at_the_trigger_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trigger task's attempt runs on the executor's trigger model (a cheap one by default),
    not on --model: the estimate prices it there."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    run = [
        *("run", "--task-suite", str(TRIGGERS / "task_suite.yaml")),
        *("--skill-path", str(TRIGGERS / "skill" / "pdf-tools")),
        *("--baseline-skill", str(TRIGGERS / "baseline" / "pdf-tools")),
        *("--executor", "claude-cli", "--model", PRICED, "--dry-run"),
        *("--state-root", str(tmp_path / "state")),
    ]
    code, out, err = run_cli(*run, "--executor-option", "trigger_model=no-such-price")
    assert code == 0, err
    assert "no known price for model 'no-such-price'" in out and "dollars unknown" in out
    code, cheap, err = run_cli(*run)
    code_priced, priced, _ = run_cli(*run, "--executor-option", f"trigger_model={PRICED}")
    assert code == code_priced == 0, err
    assert 0 < estimated_usd(cheap) < estimated_usd(priced) / 10  # $0.1/$0.5 against $3/$15
