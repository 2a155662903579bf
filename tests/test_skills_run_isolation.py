"""`skill-eval run SKILL_DIR...` over several skills (the measured gate): one skill's fault is
its own row and the others still run; --max-cost-usd is one cap for every evaluation, each
running with what the ones before it left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skill_eval.interop.skill_evaluations import SharedBudget
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import contains_task, run_cli, write_skill

PRICED = "claude-sonnet-4-6"


def skill_with_suite(folder: Path, reference: str | None = None) -> Path:
    skill = write_skill(folder, "Say alpha.")
    (skill / "evals").mkdir()
    task = contains_task("t1", "alpha")
    if reference is not None:
        task["reference"] = reference
    suite = {"skill_id": folder.name, "version": "1.0", "tasks": [task]}
    (skill / "evals" / "task_suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    return skill


def rows(err: str) -> dict[str, str]:
    table = err[err.rindex("skill  ") :]
    return {line.split()[0]: line for line in table.splitlines()[1:] if line.strip()}


def test_a_skill_whose_check_fails_its_reference_is_its_own_row(tmp_path: Path) -> None:
    skill_with_suite(tmp_path / "skills" / "a-broken", reference="no such word")
    skill_with_suite(tmp_path / "skills" / "b-fine")
    code, out, err = run_cli(
        *("run", str(tmp_path / "skills"), "--mock", "--policy", "delta"),
        *("--state-root", str(tmp_path / "state"), "-q"),
    )
    assert code == 2, err  # the broken evals: bad input, and the worst code
    found = rows(err)
    assert "not run:" in found["a-broken"] and "fails the task's reference" in found["a-broken"]
    assert found["b-fine"].split()[1] == "1" and "[mock]" in found["b-fine"]  # it ran
    assert len(out.split()) == 1  # b-fine's artifact


def test_a_budget_reached_stops_the_evaluations_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill_with_suite(tmp_path / "skills" / "a")
    skill_with_suite(tmp_path / "skills" / "b")
    with FakeAnthropic(rules=[], default="alpha") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        code, out, err = run_cli(
            *("run", str(tmp_path / "skills"), "--executor", "anthropic", "--model", PRICED),
            *("--max-cost-usd", "0.000001", "--state-root", str(tmp_path / "state"), "-q"),
        )
        assert fake.count == 0
    assert code == 5, err
    found = rows(err)
    assert "not run:" in found["a"] and "--max-cost-usd" in found["a"]
    assert "not run: --max-cost-usd was spent by the evaluations before it" in found["b"]
    assert out.strip() == ""


def test_the_cap_is_shared_what_one_evaluation_spent_the_next_cannot() -> None:
    budget = SharedBudget(1.0)
    assert budget.left == 1.0 and not budget.spent_out
    spent = {"candidate": {"cost_usd": 0.25, "judge_cost_usd": 0.05}, "baseline": {"cost_usd": 0.2}}
    budget.spend(json.loads(json.dumps({"usage": spent})))
    assert budget.left == pytest.approx(0.5) and not budget.spent_out
    budget.spend({"usage": {"candidate": {"cost_usd": 0.6}}})
    assert budget.left == 0.0 and budget.spent_out
    assert SharedBudget(None).left is None and not SharedBudget(None).spent_out
