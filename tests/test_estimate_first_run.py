"""A first run's estimate is the run's cost within 30% (#49): with no earlier run in the state
root, the estimate sizes each answer from the suite (the task's reference) and prices the
executor's own prompt and its cache; the fake Messages API answers each task with its
reference, and the artifact's spending is compared with what `--dry-run` said. On the API
executor for short, medium and long answers; on the default path (`run SKILL_DIR`: Claude
Code, its default model, the skill installed) with the real CLI."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.base import DEFAULT_MODEL
from skill_eval.executors.claude.binary import bundled_cli
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import jail_missing, read_json, run_cli, write_suite

DESCRIPTION = "Writes quarterly revenue summaries in the house style."
SENTENCE = "Revenue rose in the quarter, led by the north region; costs held flat. "
SIZES = {"short": 90, "medium": 1_400, "long": 6_000}


def tasks_of(size: str, count: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{size}{i}",
            "prompt": f"[task {size}{i}] Summarise the revenue of division {i} for the quarter.",
            "reference": (SENTENCE * (SIZES[size] // len(SENTENCE) + 1))[: SIZES[size] + 11 * i],
            "judge": {"type": "contains", "expected": ["Revenue"]},
        }
        for i in range(count)
    ]


def skill_folder(root: Path) -> Path:
    """A skill of 6,000 characters (over the least the API caches)."""
    root.mkdir(parents=True)
    rules = "\n".join(f"- Rule {n}: {SENTENCE}" for n in range(80))[:6_000]
    text = f"---\nname: {root.name}\ndescription: {DESCRIPTION}\n---\n{rules}\n"
    (root / "SKILL.md").write_text(text, encoding="utf-8")
    return root


def answering(tasks: list[dict[str, Any]], installed: bool = False) -> list[dict[str, Any]]:
    """Each task answered with its reference; installed, the skill's arm invokes it first."""
    rules: list[dict[str, Any]] = []
    for task in tasks:
        marker = f"[task {task['id']}]"
        if installed:
            skill = {"tool_use": {"name": "Skill", "input": {"skill": "revenue"}}}
            steps = [skill, task["reference"]]
            rules.append(
                {"messages_contain": marker, "request_contains": DESCRIPTION, "steps": steps}
            )
        rules.append({"messages_contain": marker, "text": task["reference"]})
    return rules


def estimated_usd(out: str) -> float:
    line = next(x for x in out.splitlines() if x.startswith("estimate: ~"))
    assert "basis: prior" in line  # no earlier run to learn from
    return float(line.split("$", 1)[1].split(" ", 1)[0])


def spent_usd(artifact_path: str) -> float:
    usage = read_json(artifact_path.strip())["usage"]
    return sum(u["cost_usd"] + u.get("judge_cost_usd", 0) for u in usage.values())


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_first_runs_estimate_on_the_api_is_within_30_percent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: str
) -> None:
    tasks = tasks_of(size)
    suite = write_suite(tmp_path / "suite", tasks)
    run = [
        *("run", "--task-suite", str(suite), "--skill-path", str(skill_folder(tmp_path / "s"))),
        *("--executor", "anthropic", "--model", "claude-sonnet-4-6", "--samples", "2"),
        *("--state-root", str(tmp_path / "state"), "--policy", "delta", "-q"),
    ]
    with FakeAnthropic(rules=answering(tasks), default="no such task") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        code, out, err = run_cli(*run, "--dry-run")
        assert code == 0, err
        estimate = estimated_usd(out)
        code, out, err = run_cli(*run)
        assert code in (0, 1, 4), err
    actual = spent_usd(out)
    assert actual > 0 and abs(estimate - actual) <= 0.3 * actual, (estimate, actual)


CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli()


@pytest.mark.skipif(
    CLAUDE is None or jail_missing() is not None,
    reason=str(jail_missing() or "claude-agent-sdk not installed: pip install -e '.[agent]'"),
)
def test_the_first_runs_estimate_on_the_default_path_is_within_30_percent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run SKILL_DIR`: Claude Code on its default model (priced), the skill installed and
    invoked by the skill's arm, the evals the folder carries."""
    skill = skill_folder(tmp_path / "revenue")
    tasks = tasks_of("medium", 2)
    write_suite(skill / "evals", tasks)
    run = [
        *("run", str(skill), "--claude-bin", str(CLAUDE), "--samples", "2"),
        *("--state-root", str(tmp_path / "state"), "--policy", "delta", "-q"),
    ]
    with FakeAnthropic(rules=answering(tasks, installed=True), default="no such task") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        code, out, err = run_cli(*run, "--dry-run")
        assert code == 0, err
        assert f"plan: executor claude-cli, model {DEFAULT_MODEL}" in out
        estimate = estimated_usd(out)
        code, out, err = run_cli(*run)
        assert code in (0, 1, 4), err
        assert {r.json.get("model") for r in fake.requests_to("/v1/messages")} == {DEFAULT_MODEL}
    artifact = out.strip().splitlines()[-1]
    assert read_json(artifact)["manifest"]["model"] == DEFAULT_MODEL
    actual = spent_usd(artifact)
    assert actual > 0 and abs(estimate - actual) <= 0.3 * actual, (estimate, actual)
