"""`improve` and `review` configure the executor of their evaluations as `run` does:
`--executor-option KEY=VALUE` and the project config file's `[tool.skill-eval.executor.NAME]`
reach it (here: the anthropic executor's base_url, so its requests land on the loopback fake
Messages API), and an option it does not have is refused as `run` refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli
from tests.review_script import VISION, review_skill
from tests.test_improve_cli import _write_inputs

EVAL_MODEL = "claude-eval-model"


def _improve(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    skill, suite = _write_inputs(tmp_path)
    return run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "anthropic",
        "--model",
        EVAL_MODEL,
        "--improver",
        "mock",
        "--iterate",
        "1",
        *extra,
    )


def test_an_executor_option_reaches_improves_evaluations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(default="alpha-term word0") as server:
        code, out, err = _improve(tmp_path, "--executor-option", f"base_url={server.base_url}")
        asked = server.requests_to("/v1/messages")
    assert code in (0, 1), err
    assert read_json(out.strip())["improve"]  # the ranking artifact was written
    # the tasks the version is scored on were asked of the evaluations' model, on the fake
    # server (those set apart to confirm a pick are asked only when a version is picked)
    asked_text = " ".join(str(r.json["messages"]) for r in asked)
    train = [f"Explain {c}-{i}." for c in ("alpha", "delta") for i in range(16)]
    assert sum(t in asked_text for t in train) >= 16
    assert {r.json["model"] for r in asked} == {EVAL_MODEL}


def test_improve_reads_the_executor_table_of_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.chdir(tmp_path)
    with FakeAnthropic(default="alpha-term word0") as server:
        (tmp_path / "skill-eval.toml").write_text(
            f'[executor.anthropic]\nbase_url = "{server.base_url}"\n', encoding="utf-8"
        )
        code, _out, err = _improve(tmp_path)
        asked = server.requests_to("/v1/messages")
    assert code in (0, 1), err
    assert asked and {r.json["model"] for r in asked} == {EVAL_MODEL}


def test_an_option_the_executor_lacks_is_refused_as_run_refuses_it(tmp_path: Path) -> None:
    code, _out, err = _improve(tmp_path, "--executor-option", "no_such_option=1")
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith("Error: --executor-option no_such_option=1:"), err
    assert "'anthropic' executor" in line


def test_an_executor_option_reaches_reviews_qa_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The role models are the built-in scripted ones (--executor mock); the QA runs go to
    the fake API."""
    skill = review_skill(tmp_path)
    vision = tmp_path / "vision.md"
    vision.write_text(VISION + "\n", encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(default="an answer") as server:
        code, _out, err = run_cli(
            "review",
            str(skill),
            "--vision",
            str(vision),
            "--state-root",
            str(tmp_path / "s"),
            "--executor",
            "mock",
            "--qa-executor",
            "anthropic",
            "--model",
            EVAL_MODEL,
            "--executor-option",
            f"base_url={server.base_url}",
        )
        asked = server.requests_to("/v1/messages")
    assert code in (0, 1), err
    assert asked and {r.json["model"] for r in asked} == {EVAL_MODEL}
