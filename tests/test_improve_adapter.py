"""The improve loop's evaluate_fn and compare_fn are `skill_eval.evaluate` underneath: versions
as in-memory skills (a private folder only when they have more than SKILL.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval import load_suite
from skill_eval.executors.base import create_executor
from skill_eval.improve.adapter import make_compare_fn, make_evaluate_fn, skill_from_files
from skill_eval.improve.improver import ProposalError

SUITE = 'skill_id: "notes"\nversion: "1.0"\ntasks:\n' + "".join(
    f'  - id: "t{i}"\n    prompt: "note {i}"\n'
    f'    judge: {{type: "contains", expected: ["ok{i}"]}}\n'
    for i in range(12)
)
ALL = [f"t{i}" for i in range(12)]


@pytest.fixture
def suite(tmp_path: Path):
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return load_suite(tmp_path / "suite.yaml")


def test_evaluate_fn_summarises_the_chosen_tasks(suite) -> None:
    executor = create_executor("mock", {"mock_outputs": {"version": {"t0": "ok0", "t2": "x"}}})
    summary = make_evaluate_fn(suite, executor)({"SKILL.md": "# v"}, ["t0", "t2"])
    assert sorted(summary.per_task) == ["t0", "t2"]
    assert summary.per_task["t0"].passed and not summary.per_task["t2"].passed
    assert summary.pass_rate(["t0", "t2"]) == 0.5 and summary.judgement_count == 2


def test_compare_fn_is_the_paired_policy_against_the_original(suite) -> None:
    good = {t: "ok" + t[1:] for t in ALL}  # 12 tasks: enough for the policy to conclude
    better = make_compare_fn(suite, create_executor("mock", {"mock_outputs": {"best": good}}))
    passed, reason = better({"SKILL.md": "# new"}, {"SKILL.md": "# old"}, ALL)
    assert passed is True and reason
    worse = make_compare_fn(suite, create_executor("mock", {"mock_outputs": {"original": good}}))
    assert worse({"SKILL.md": "# new"}, {"SKILL.md": "# old"}, ALL)[0] is False


def test_a_version_with_other_files_lives_in_a_private_folder_while_it_runs() -> None:
    with skill_from_files({"SKILL.md": "# only"}) as alone:
        assert alone.directory is None and alone.content == "# only"
    with skill_from_files({"SKILL.md": "# s", "scripts/x.py": "print(1)\n"}) as skill:
        folder = skill.directory
        assert folder is not None and (folder / "scripts" / "x.py").read_text() == "print(1)\n"
        assert skill.tree_sha256 != alone.tree_sha256
    assert not folder.exists()
    with pytest.raises(ProposalError), skill_from_files({"SKILL.md": "x", "../out": "y"}):
        pass


def test_an_output_judged_before_reuses_its_judgement(tmp_path: Path) -> None:
    text = 'skill_id: "notes"\nversion: "1.0"\ntasks:\n' + "".join(
        f'  - id: "r{i}"\n    prompt: "note {i}"\n'
        f'    judge: {{type: "llm-rubric", rubric: "clear", pass_threshold: 0.7}}\n'
        for i in range(3)
    )
    (tmp_path / "suite.yaml").write_text(text, encoding="utf-8")
    rubric_suite = load_suite(tmp_path / "suite.yaml")
    evaluate_fn = make_evaluate_fn(rubric_suite, create_executor("mock"))
    first = evaluate_fn({"SKILL.md": "# v1"}, ["r0", "r1", "r2"])
    again = evaluate_fn({"SKILL.md": "# v2"}, ["r0", "r1", "r2"])  # same mock outputs
    assert first.reused_judgements == 0 and first.judgement_count == 3
    assert again.reused_judgements == 3 and again.per_task["r0"].passed
