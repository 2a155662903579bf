"""Improver seam: path confinement, the mock improver and model, prompt and reply format."""

from __future__ import annotations

import pytest

from skill_eval.executors.mock_model import rule_following_output, rule_line
from skill_eval.improve import (
    MockImprover,
    Proposal,
    ProposalError,
    TaskOutcome,
    apply_proposal,
    build_feedback,
    build_improver_prompt,
    parse_improver_reply,
)
from skill_eval.improve.improver import check_path

SKILL = {"SKILL.md": "# Skill\n", "ref/notes.md": "notes\n", "suite.yaml": "tasks: []\n"}


@pytest.mark.parametrize(
    "path", ["../x.md", "a/../../x", "/etc/passwd", "C:/x", "a\\b", "", "  ", ".", "./..", "a\0b"]
)
def test_unsafe_paths_are_rejected(path: str) -> None:
    with pytest.raises(ProposalError):
        check_path(path)


def test_safe_paths_are_normalized() -> None:
    assert check_path("./ref//notes.md") == "ref/notes.md"
    assert check_path("SKILL.md") == "SKILL.md"


def test_apply_keeps_unnamed_files_and_adds_new_ones() -> None:
    new = apply_proposal(SKILL, Proposal({"SKILL.md": "# New\n", "./ex/a.py": "print(1)\n"}))
    assert new == {**SKILL, "SKILL.md": "# New\n", "ex/a.py": "print(1)\n"}
    assert SKILL["SKILL.md"] == "# Skill\n"


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ({"suite.yaml": "tasks: [x]"}, "task suite"),
        ({"SKILL.md": "x", "../escape": "x"}, "inside the skill folder"),
        ({"SKILL.md": "   "}, "must not be empty"),
        ({"SKILL.md": "x" * 200_001}, "at most"),
        ({}, "names no file"),
    ],
)
def test_whole_proposal_rejected(files: dict[str, str], words: str) -> None:
    with pytest.raises(ProposalError, match=words):
        apply_proposal(SKILL, Proposal(files), protected=["./suite.yaml"])


def test_mock_model_answers_by_rule_id_or_category() -> None:
    exp = ["alpha-term", "word1"]
    assert "alpha-term" not in rule_following_output("# none", "alpha-1", "alpha", exp)
    assert "alpha-term, word1" in rule_following_output(rule_line("alpha"), "alpha-1", "alpha", exp)
    assert "word1" in rule_following_output(rule_line("alpha-1"), "alpha-1", "alpha", exp)
    assert "word1" not in rule_following_output(rule_line("alpha-2"), "alpha-1", "alpha", exp)


def test_mock_improver_appends_one_rule_per_missing_key_deterministically() -> None:
    outcomes = {
        "a-0": TaskOutcome(False, 0.0),
        "a-1": TaskOutcome(False, 0.0),
        "b-0": TaskOutcome(False, 0.0),
        "c-0": TaskOutcome(False, 0.0),
    }
    fb = build_feedback(
        1,
        list(outcomes),
        outcomes,
        {},
        categories={"a-0": "a", "a-1": "a", "b-0": "b", "c-0": None},
    )
    files = {"SKILL.md": "# S\n\n" + rule_line("b") + "\n"}
    first = MockImprover().propose(files, fb, []).files["SKILL.md"]
    assert first == MockImprover().propose(files, fb, []).files["SKILL.md"]
    assert first.count(rule_line("a")) == 1 and first.count(rule_line("b")) == 1
    assert first.endswith(rule_line("c-0") + "\n")


def test_prompt_holds_files_learnings_feedback_and_the_format() -> None:
    outcomes = {"t": TaskOutcome(False, 0.2, "missing Y")}
    fb = build_feedback(1, ["t"], outcomes, {"t": "Do the Y thing"})
    big = {"SKILL.md": "# S\nbody\n", "data.txt": "z" * 30_000, "ref.md": "ref body\n"}
    p = build_improver_prompt(big, fb, ["Learning: keep rules short"])
    assert "=== FILE: SKILL.md ===\n# S\nbody\n=== END FILE ===" in p.user
    assert "=== FILE: ref.md ===\nref body" in p.user
    assert "data.txt === (30000 characters, not shown)" in p.user and "zzzz" not in p.user
    assert "- Learning: keep rules short" in p.user and "Do the Y thing" in p.user
    assert "=== RATIONALE ===" in p.system and "never edit tests or task suites" in p.system


def test_reply_round_trips_and_ignores_chatter() -> None:
    reply = (
        "Sure! Here is the change.\r\n=== RATIONALE ===\nAdded a rule.\n"
        "=== END RATIONALE ===\n=== FILE: SKILL.md ===\n# S\n\n- rule\n=== END FILE ===\n"
        "  === FILE: ./ref/x.md ===  \n=== not a delimiter ===\n=== END FILE ===\nBye"
    )
    p = parse_improver_reply(reply, tokens=42, cost_usd=0.5)
    assert p.files == {"SKILL.md": "# S\n\n- rule\n", "ref/x.md": "=== not a delimiter ===\n"}
    assert p.rationale == "Added a rule." and (p.tokens, p.cost_usd) == (42, 0.5)


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        ("no blocks at all", "no '=== FILE"),
        ("=== FILE: SKILL.md ===\nx\n", "has no '=== END FILE ==='"),
        ("=== FILE: ../../x ===\nx\n=== END FILE ===", "inside the skill folder"),
        ("=== FILE: a ===\n=== END FILE ===\n=== FILE: a ===\n=== END FILE ===", "given twice"),
    ],
)
def test_bad_replies(reply: str, words: str) -> None:
    with pytest.raises(ProposalError, match=words):
        parse_improver_reply(reply)
