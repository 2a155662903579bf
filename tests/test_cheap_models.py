"""Cheap checks run at a cheap model: model-graded judges and trigger tasks default to
CHEAP_MODEL (a Haiku-class model), not the candidate's; --judge-model and --trigger-model name
another; the artifact's `usage_by_model` says what each model did and cost; a judgement made
by another model is never reused from the judge cache. The summary, markdown and HTML reports
show each arm's cost, a task's cost in each arm, and the cost against the lift."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.base import CHEAP_MODEL
from skill_eval.judges.llm import DEFAULT_JUDGE_MODEL
from skill_eval.judges.llm_rubric import TOOL_NAME
from skill_eval.report.cost import lift_per_dollar, task_costs
from skill_eval.report.html import render_html
from skill_eval.report.markdown import md_escape, render_markdown
from tests.fakes import fake_claude
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli, write_skill, write_suite

PRICED = "claude-sonnet-4-6"
JUDGED = {"id": "r", "prompt": "Say alpha", "judge": {"type": "llm-rubric", "rubric": "alpha"}}
VERDICT_CODES = (0, 4)  # a pass or a fail: a verdict, whichever (one task proves little)
RULES = [{"tool_choice_name": TOOL_NAME, "tool_input": {"reasoning": "ok", "score": 0.9}}]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeAnthropic(rules=RULES, default="alpha") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake


def judged_run(tmp_path: Path, *more: str) -> dict[str, Any]:
    suite = write_suite(tmp_path / "suite", [JUDGED])
    skill = write_skill(tmp_path / "skill", "Say alpha.")
    code, out, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
        *("--executor", "anthropic", "--model", PRICED, "--state-root", str(tmp_path / "state")),
        *more,
    )
    assert code in VERDICT_CODES, err
    return read_json(out.strip())


def judge_models(server: FakeAnthropic) -> list[str | None]:
    return [r.model for r in server.requests_to("/v1/messages") if TOOL_NAME in r.text]


def test_the_default_judge_model_is_the_cheap_one_and_the_artifact_names_both(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    assert DEFAULT_JUDGE_MODEL == CHEAP_MODEL == "claude-haiku-5-5"
    data = judged_run(tmp_path)
    assert judge_models(server) == [CHEAP_MODEL, CHEAP_MODEL]  # one judgement an arm
    asked = {r.model for r in server.requests_to("/v1/messages") if TOOL_NAME not in r.text}
    assert asked == {PRICED}
    models = data["usage_by_model"]
    assert sorted(models) == [CHEAP_MODEL, PRICED]
    assert models[CHEAP_MODEL]["roles"] == ["judgements"] and models[CHEAP_MODEL]["calls"] == 2
    assert models[PRICED]["roles"] == ["attempts"] and models[PRICED]["calls"] == 2
    assert models[CHEAP_MODEL]["cost_usd"] > 0 and models[PRICED]["cost_usd"] > 0
    # the cheap model's judgements cost what the arms' usage says the judges cost
    judged = sum(data["usage"][arm]["judge_cost_usd"] for arm in ("candidate", "baseline"))
    assert models[CHEAP_MODEL]["cost_usd"] == pytest.approx(judged, abs=1e-6)


def test_judge_model_overrides_the_default(tmp_path: Path, server: FakeAnthropic) -> None:
    data = judged_run(tmp_path, "--judge-model", "claude-haiku-4-5")
    assert judge_models(server) == ["claude-haiku-4-5", "claude-haiku-4-5"]
    assert (
        "claude-haiku-4-5" in data["usage_by_model"] and CHEAP_MODEL not in data["usage_by_model"]
    )


def test_a_judgement_by_another_model_is_not_reused_from_the_judge_cache(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    cache = ("--judge-cache-dir", str(tmp_path / "judge-cache"))
    judged_run(tmp_path, *cache, "--judge-model", PRICED)  # the judge model of old
    assert judge_models(server) == [PRICED, PRICED]
    judged_run(tmp_path, *cache)  # the new default judges afresh
    assert judge_models(server)[2:] == [CHEAP_MODEL, CHEAP_MODEL]
    judged_run(tmp_path, *cache)  # and its own judgements are reused
    assert len(judge_models(server)) == 4


# -- trigger tasks ------------------------------------------------------------------------------

ASKED = '(sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else "fake")'


def model_echoing_claude(bin_dir: Path) -> str:
    """The stand-in `claude` (tests/fakes/fake_claude.py), answering as the model it was
    asked for (`--model`), as the real CLI's stream and result name it."""
    source = Path(fake_claude.__file__).read_text(encoding="utf-8")
    source = source.replace('"model": "fake",', f'"model": {ASKED},')
    source = source.replace(
        '"usage": USAGE,\n            **more,',
        f'"usage": USAGE,\n            "modelUsage": {{{ASKED}: {{}}}},\n            **more,',
    )
    assert source.count(ASKED) == 2
    return fake_claude.install(bin_dir, source)


def trigger_run(tmp_path: Path, *more: str) -> dict[str, Any]:
    tasks = [
        {"id": "q", "query": "make me a pdf", "should_trigger": True},
        {"id": "plain", "prompt": "Say echo", "judge": {"type": "contains", "expected": ["echo"]}},
    ]
    suite = write_suite(tmp_path / "suite", tasks)
    skill = write_skill(tmp_path / "pdfmaker", "Make PDFs.")
    code, out, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
        *("--executor", "claude-cli", "--claude-bin", model_echoing_claude(tmp_path / "bin")),
        *(
            "--model",
            PRICED,
            "--no-jail",
            "--no-baseline",
            "--state-root",
            str(tmp_path / "state"),
            *more,
        ),
    )
    # the query is not scripted to fire: with no baseline that fails the trigger class (1)
    assert code in (*VERDICT_CODES, 1), err
    return read_json(out.strip())


def asked_models(data: dict[str, Any], task_id: str) -> set[str]:
    return {
        m
        for arm in ("candidate_results", "baseline_results")
        for result in data[arm]
        if result["task_id"] == task_id
        for a in result["attempts"]
        for m in a.get("meta", {}).get("models", [])
    }


def test_trigger_tasks_run_at_the_cheap_model_and_ordinary_ones_at_the_run_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    data = trigger_run(tmp_path)
    assert asked_models(data, "q") == {CHEAP_MODEL}
    assert asked_models(data, "plain") == {PRICED}
    assert data["manifest"]["executor"]["trigger_model"] == CHEAP_MODEL
    models = data["usage_by_model"]
    assert models[CHEAP_MODEL]["roles"] == ["trigger attempts"]
    assert models[PRICED]["roles"] == ["attempts"]


def test_trigger_model_overrides_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    data = trigger_run(tmp_path, "--trigger-model", "claude-haiku-4-5")
    assert asked_models(data, "q") == {"claude-haiku-4-5"}
    assert data["manifest"]["executor"]["trigger_model"] == "claude-haiku-4-5"


# -- cost where people look -----------------------------------------------------------------


def priced_artifact(base: float, cand: float, delta: float) -> dict[str, Any]:
    def results(usd: float) -> list[dict[str, Any]]:
        return [{"task_id": t, "attempts": [{"cost_usd": usd}, {"cost_usd": usd}]} for t in "ab"]

    return {
        "evaluation": {"delta": delta},
        "candidate_results": results(cand),
        "baseline_results": results(base),
    }


@pytest.mark.parametrize(
    ("base", "cand", "delta", "want"),
    [
        (
            0.012,
            0.0168,
            0.02,
            "cost +40% ($0.0120 -> $0.0168 a task) for +2.0 points "
            "(417 points per extra dollar a task)",
        ),
        (
            0.02,
            0.01,
            0.0,
            "cost -50% ($0.0200 -> $0.0100 a task) for +0.0 points (cheaper, and no worse)",
        ),
        (0.02, 0.01, -0.1, "cost -50% ($0.0200 -> $0.0100 a task) for -10.0 points"),
        (0.0, 0.0, 0.5, ""),  # nothing cost anything (the mock): no line
    ],
)
def test_lift_per_dollar(base: float, cand: float, delta: float, want: str) -> None:
    assert lift_per_dollar(priced_artifact(base, cand, delta)) == want


def test_summary_markdown_and_html_show_cost_per_arm_and_task_and_the_lift(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    suite = write_suite(tmp_path / "suite", [JUDGED, {**JUDGED, "id": "s"}])
    skill = write_skill(tmp_path / "skill", "Say alpha. " + "Be thorough. " * 200)
    code, out, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
        *("--executor", "anthropic", "--model", PRICED, "--state-root", str(tmp_path / "state")),
    )
    assert code in VERDICT_CODES, err
    data = read_json(out.strip())
    costs = task_costs(data)
    assert set(costs) == {"r", "s"} and costs["r"]["candidate"] > costs["r"]["baseline"] > 0
    r = costs["r"]
    lift = lift_per_dollar(data)
    assert lift.startswith("cost +") and "a task) for +0.0 points (the extra cost bought" in lift
    # the summary: per-arm cost, a per-task cost column, the lift line
    assert "candidate $/try" in err and "baseline $/try" in err and f"${r['candidate']:.4f}" in err
    assert (
        re.search(rf"\ncost vs lift +{re.escape(lift)}\n", err)
        and "candidate $" in err
        and "judges $" in err
    )
    markdown = render_markdown(data)
    assert "| Candidate $/try | Baseline $/try |" in markdown
    assert (
        f"${r['baseline']:.4f}" in markdown and f"Cost against lift: {md_escape(lift)}." in markdown
    )
    html = render_html(data)
    assert f"cost a try candidate ${r['candidate']:.4f}, baseline ${r['baseline']:.4f}" in html
    assert f'<p class="lift-per-dollar">{escape(lift)}</p>' in html
    assert "judges $" in html and " a task" in html
