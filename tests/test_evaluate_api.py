"""`skill_eval.evaluate`: any number of labelled in-memory arms through the real mock executor
and the real judges, per-arm results, and the comparisons of every arm against the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval import Arm, Decision, Execution, Skill, UsageError, Work, evaluate, load_suite
from skill_eval.engine.runner import Journal
from skill_eval.executors.base import create_executor

SUITE = """\
skill_id: "notes"
version: "1.0"
tasks:
""" + "".join(
    f"""\
  - id: "t{i}"
    prompt: "write note {i}"
    judge: {{type: "contains", expected: ["ok{i}"]}}
"""
    for i in range(4)
)

# v1 passes nothing, v2 every task, v3 the first two; a task absent from a table gets
# MOCK_OUTPUT, which no judge accepts.
OUTPUTS = {
    "v2": {f"t{i}": f"ok{i}" for i in range(4)},
    "v3": {"t0": "ok0", "t1": "ok1"},
}


def arms() -> list[Arm]:
    # In memory: no folder behind any of these skills.
    return [
        Arm(name, Skill(name, f"# skill {name}\nwrite good notes"), f"version {name}")
        for name in ("v1", "v2", "v3")
    ]


@pytest.fixture
def suite(tmp_path: Path):
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return load_suite(tmp_path / "suite.yaml")


def test_three_in_memory_arms_give_three_results_and_two_comparisons(suite, tmp_path) -> None:
    assert Work is not None  # the other half of the public entry
    executor = create_executor("mock", {"mock_outputs": OUTPUTS})
    before = sorted(p.name for p in tmp_path.iterdir())
    result = evaluate(suite, arms(), executor, execution=Execution(concurrency=3))

    assert [r.name for r in result.arms] == ["v1", "v2", "v3"] and result.reference == "v1"
    assert [result.arm(n).pass_rate for n in ("v1", "v2", "v3")] == [0.0, 1.0, 0.5]
    v3 = result.arm("v3")
    assert [(r.task_id, r.passed) for r in v3.results] == [
        ("t0", True),
        ("t1", True),
        ("t2", False),
        ("t3", False),
    ]
    assert len(v3.attempts) == 4 and v3.errors == () and v3.cost_usd == 0.0
    assert v3.arm.skill is not None and v3.arm.skill.directory is None
    assert len(result.attempts) == 12

    assert [(c.arm, c.reference) for c in result.comparisons] == [("v2", "v1"), ("v3", "v1")]
    v2 = result.comparison("v2")
    assert (v2.rate, v2.reference_rate, v2.delta) == (1.0, 0.0, 1.0)
    assert v2.analysis.comparison is not None and v2.analysis.comparison.n_tasks == 4
    assert result.comparison("v3").delta == 0.5
    # Two candidates against one reference: Holm holds the false-accept rate over both, and 4
    # pass/fail tasks (exact test) cannot rule out a 10-point regression at that level.
    assert v2.passed is False and v2.unpaired == ()
    assert v2.analysis.policy is not None and v2.analysis.policy.outcome == "insufficient"
    assert "Holm over 2 candidates" in v2.analysis.policy.reasoning
    with pytest.raises(KeyError):
        result.comparison("v1")  # the reference is not compared with itself
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    data = json.loads(json.dumps(result.to_dict()))
    assert [a["pass_rate"] for a in data["arms"]] == [0.0, 1.0, 0.5]
    assert data["comparisons"][0]["policy"]["passed"] is False


def test_the_reference_arm_can_be_named_and_attempts_journaled(suite, tmp_path) -> None:
    journal = Journal(tmp_path / "attempts.jsonl")
    result = evaluate(
        suite,
        arms(),
        create_executor("mock", {"mock_outputs": OUTPUTS}),
        reference="v2",
        journal=journal,
        decision=Decision(pass_k=1, samples=2),
    )
    journal.close()
    assert [(c.arm, c.delta) for c in result.comparisons] == [("v1", -1.0), ("v3", -0.5)]
    assert result.comparison("v1").passed is False
    assert len(journal.read()) == 3 * 4 * 2
    assert {a.arm for a in journal.read()} == {"v1", "v2", "v3"}


def test_resume_runs_only_what_is_missing(suite, tmp_path) -> None:
    executor = create_executor("mock", {"mock_outputs": OUTPUTS})
    first = evaluate(suite, arms()[:2], executor)
    result = evaluate(suite, arms(), executor, done=first.attempts)
    assert len(result.attempts) == 12
    kept = {id(a) for a in first.attempts}
    assert sum(id(a) in kept for a in result.attempts) == 8  # v1 and v2 were not run again


def test_one_arm_is_results_without_comparisons(suite) -> None:
    result = evaluate(suite, arms()[1:2], "mock")
    assert result.comparisons == () and result.arm("v2").pass_rate == 0.0  # MOCK_OUTPUT


@pytest.mark.parametrize(
    ("given", "reference", "message"),
    [
        ([], None, "no arms"),
        ([Arm("a", None), Arm("a", Skill("a", "x"))], None, "arm 'a' is given twice"),
        ([Arm("a", None)], "b", "reference arm 'b' is not one of a"),
    ],
)
def test_bad_arms_are_a_usage_error(suite, given, reference, message) -> None:
    with pytest.raises(UsageError, match=message):
        evaluate(suite, given, "mock", reference=reference)
