"""Issue 47: a verdict the mock executor made says so. A `--mock` run's summary line, its
artifact (`evaluation.mocked`), its markdown, HTML and JUnit reports say `[mock]` beside the
verdict; a run whose attempts and judgements went to a model (the anthropic executor against
the loopback stand-in) says nothing of the kind; a real executor judged by the mock grader
(`--judge-executor mock`) is a mock verdict too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skill_eval.engine import artifact as artifact_mod
from skill_eval.report.html import render_html
from skill_eval.report.render import render_junit, render_markdown, render_table
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import contains_task, read_json, run_cli, write_skill, write_suite


def run(tmp_path: Path, *flags: str, tasks: list[dict[str, Any]] | None = None) -> tuple:
    suite = write_suite(tmp_path / "suite", tasks or [contains_task("t1", "alpha")])
    skill = write_skill(tmp_path / "skill", "Say alpha.")
    code, out, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill)),
        *("--state-root", str(tmp_path / "state"), "--policy", "delta", "-q", *flags),
    )
    assert out.strip(), err
    return code, read_json(out.strip()), err


def reports(data: dict[str, Any]) -> dict[str, str]:
    return {
        "table": render_table(data),
        "markdown": render_markdown(data),
        "junit": render_junit(data),
        "html": render_html(data),
    }


def test_a_mock_run_says_mock_beside_its_verdict_everywhere(tmp_path: Path) -> None:
    _, data, err = run(tmp_path, "--mock")
    artifact_mod.validate(data)  # the schema knows the field
    assert list(data["evaluation"])[:5] == [
        "execution_pass_rate",
        "baseline_pass_rate",
        "delta",
        "verdict",
        "mocked",
    ]
    assert data["evaluation"]["mocked"] is True
    verdict = data["evaluation"]["verdict"].upper()
    assert re.search(rf"^verdict +{verdict} \[mock\]", err, re.M)  # the terminal summary
    shown = reports(data)
    assert re.search(rf"^verdict +{verdict} \[mock\]", shown["table"], re.M)
    assert shown["markdown"].startswith(f"## skill-eval: {verdict} [mock]")
    assert '<property name="mocked" value="true" />' in shown["junit"]
    assert f"verdict {verdict.lower()} [mock]" in shown["junit"]
    assert f'id="verdict">{verdict} [mock]<' in shown["html"]


@pytest.mark.parametrize("judged_by_mock", [False, True])
def test_a_run_a_model_answered_is_not_marked_unless_the_mock_graded_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judged_by_mock: bool
) -> None:
    graded = {"id": "g", "prompt": "p", "judge": {"type": "llm-rubric", "rubric": "says alpha"}}
    with FakeAnthropic(rules=[{"text": "alpha"}], default="alpha") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        flags = ["--executor", "anthropic", "--model", "m", "--judge-executor"]
        flags.append("mock" if judged_by_mock else "anthropic")
        _, data, _ = run(tmp_path, *flags, tasks=[contains_task("t1", "alpha"), graded])
    artifact_mod.validate(data)
    assert ("mocked" in data["evaluation"]) is judged_by_mock
    shown = reports(data)
    assert all(("[mock]" in text) is judged_by_mock for text in shown.values()), shown["table"]
