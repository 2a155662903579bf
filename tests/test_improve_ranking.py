"""The improve run's ranking artifact: every version a candidate, schema-valid, readable by the
existing ranking loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.improve import (
    ImproveMemory,
    IterationSettings,
    MockImprover,
    build_ranking_artifact,
    run_improve,
    validate_ranking,
)
from tests.improve_fakes import RuleFollowingEvaluator, make_tasks, skill_with_rules


def test_every_version_is_a_candidate_best_first(tmp_path: Path) -> None:
    tasks = make_tasks()
    skill = skill_with_rules("alpha", "beta")
    with ImproveMemory.in_state_root(tmp_path) as memory:
        result = run_improve(
            skill,
            tasks,
            RuleFollowingEvaluator(tasks),
            MockImprover(),
            memory,
            IterationSettings(),
            skill_id="demo",
            log=lambda _: None,
        )
    art = build_ranking_artifact(result, run_id="improve-1", target_path="skill", skill_name="demo")
    validate_ranking(json.loads(json.dumps(art)))
    cands = art["scored_candidates"]
    assert [c["iteration"] for c in cands] == [2, 1]
    assert [c["score"] for c in cands] == [1.0, 0.5]  # holdout pass rates
    assert cands[0]["skill_content"] == result.best.files["SKILL.md"]
    assert cands[1]["skill_content"] == skill["SKILL.md"]
    assert cands[0]["id"] == f"v2-{result.best.hash[:12]}" and cands[0]["proposed"] is True
    assert cands[1]["proposed"] is False and cands[0]["score_source"] == "holdout"
    assert art["target"] == {"path": "skill", "name": "demo"}
    assert art["improve"]["holdout_tasks"] == list(result.split.holdout)


@pytest.mark.parametrize(
    ("artifact", "words"),
    [
        ({"scored_candidates": []}, "run_id: is required"),
        (
            {"run_id": "r", "scored_candidates": [{"id": ""}]},
            r"scored_candidates\[0\]\.id: must be a non-empty string",
        ),
    ],
)
def test_invalid_artifacts_are_named(artifact: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        validate_ranking(artifact)


def test_run_input_evaluates_the_best_candidate(tmp_path: Path) -> None:
    from tests.helpers import DEMO_SUITE, read_json, run_cli, write_skill

    tasks = make_tasks()
    skill_dir = write_skill(tmp_path / "skill")
    skill = {"SKILL.md": (skill_dir / "SKILL.md").read_text(encoding="utf-8")}
    with ImproveMemory.in_state_root(tmp_path / "state") as memory:
        result = run_improve(
            skill,
            tasks,
            RuleFollowingEvaluator(tasks),
            MockImprover(),
            memory,
            IterationSettings(),
            skill_id="demo",
            log=lambda _: None,
        )
    art = build_ranking_artifact(result, run_id="improve-1", target_path="skill")
    (tmp_path / "ranking.json").write_text(json.dumps(art), encoding="utf-8")
    best = art["scored_candidates"][0]["id"]
    common = [
        "run",
        "--input",
        str(tmp_path / "ranking.json"),
        "--candidate-id",
        best,
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
    ]
    # scores are pass rates (0-1): the default --eval-threshold 1.0 skips all but perfect ones
    code, out, err = run_cli(*common, "--eval-threshold", "0")
    assert code in (0, 1, 3, 4), err
    data = read_json(out.strip())
    assert data["candidate_id"] == best and data["evaluation"]["verdict"] != "skipped"


def test_package_exports_are_sorted_and_resolve() -> None:
    import skill_eval.improve as improve

    assert improve.__all__ == sorted(improve.__all__)
    assert all(getattr(improve, name) is not None for name in improve.__all__)
