"""A trigger set with no baseline passes only when each class of queries meets its own bar:
the should-trigger queries fire (mean trigger rate at least MIN_TPR) and the should-not ones
stay quiet (at most MAX_FPR). Accuracy alone let a skill that never fires pass a balanced set
(it is right on every should-not query); it fails now, and so does one that always fires."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.judges.triggers.figures import MAX_FPR, MIN_TPR, classes
from tests.helpers import read_json, run_cli, write_outputs, write_skill

QUERIES = [
    {"query": "write release notes for acme", "should_trigger": True},
    {"query": "draft the changelog for 2.1", "should_trigger": True},
    {"query": "what is the capital of France?", "should_trigger": False},
    {"query": "sort this list of numbers", "should_trigger": False},
]


def figure(rate: float | None) -> dict[str, Any]:
    return {"rate": rate, "interval": None if rate is None else [0.0, 1.0]}


@pytest.mark.parametrize(
    "tpr, fpr, passed, tpr_passed, fpr_passed",
    [
        (1.0, 0.0, True, True, True),
        (MIN_TPR, MAX_FPR, True, True, True),  # the bars are inclusive
        (0.0, 0.0, False, False, True),  # never fires
        (1.0, 1.0, False, True, False),  # always fires
        (0.25, 0.75, False, False, False),
        (1.0, None, True, True, None),  # no should-not query: not measured
        (None, None, None, None, None),
    ],
)
def test_each_class_against_its_bar(
    tpr: float | None, fpr: float | None, passed: Any, tpr_passed: Any, fpr_passed: Any
) -> None:
    found = classes({"tpr": figure(tpr), "fpr": figure(fpr)})
    assert (found["passed"], found["tpr_passed"], found["fpr_passed"]) == (
        passed,
        tpr_passed,
        fpr_passed,
    )
    if fpr is None and tpr is not None:
        assert "no should-not query was judged: not measured" in found["reasoning"]


def trigger_run(tmp_path: Path, fired: dict[int, bool]) -> tuple[int, dict[str, Any], str]:
    """`run SKILL_DIR --mock` of a skill whose evals/ holds only the trigger set, the mock
    scripted to fire on the queries `fired` says."""
    folder = write_skill(tmp_path / "notes")
    (folder / "evals").mkdir()
    (folder / "evals" / "trigger-eval.json").write_text(json.dumps(QUERIES), encoding="utf-8")
    script = {f"trigger-{i + 1}": {"triggered": fired.get(i, False)} for i in range(len(QUERIES))}
    outputs = write_outputs(tmp_path / "outputs.yaml", {"candidate": script})
    code, out, err = run_cli(
        "run", str(folder), "--mock", "--mock-outputs", str(outputs),
        "--state-root", str(tmp_path / "state"),
    )  # fmt: skip
    assert code in (0, 1), err
    return code, read_json(Path(out.strip())), err


def test_a_skill_that_never_fires_fails_though_half_its_answers_are_right(tmp_path: Path) -> None:
    code, artifact, err = trigger_run(tmp_path, {})
    assert artifact["evaluation"]["execution_pass_rate"] == 0.5  # accuracy alone would pass
    assert code == 1 and artifact["evaluation"]["verdict"] == "fail"
    reason = artifact["evaluation"]["reason"]
    assert reason.startswith("trigger tasks: should-trigger queries fired at 0.00 [")
    assert "under the 0.5 needed" in reason
    assert artifact["triggers"]["classes"]["tpr_passed"] is False
    assert "per class (fail): should-trigger queries fired at 0.00" in err  # rates, intervals


def test_a_skill_that_always_fires_fails(tmp_path: Path) -> None:
    code, artifact, _ = trigger_run(tmp_path, dict.fromkeys(range(4), True))
    assert code == 1 and artifact["evaluation"]["verdict"] == "fail"
    assert "should-not queries fired at 1.00" in artifact["evaluation"]["reason"]
    assert "over the 0.5 allowed" in artifact["evaluation"]["reason"]


def test_a_skill_that_fires_where_it_should_passes(tmp_path: Path) -> None:
    code, artifact, err = trigger_run(tmp_path, {0: True, 1: True})
    assert (code, artifact["evaluation"]["verdict"]) == (0, "pass"), err
    assert artifact["triggers"]["classes"]["passed"] is True
