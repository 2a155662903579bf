"""Delta feedback: failing train tasks only, judge details and findings, previous diff, bounded."""

from __future__ import annotations

from skill_eval.improve import TaskOutcome, build_feedback
from skill_eval.improve.feedback import MAX_DIFF_CHARS, MAX_PROMPT_CHARS


def test_only_failing_train_tasks_lowest_score_first() -> None:
    outcomes = {
        "t1": TaskOutcome(True, 1.0),
        "t2": TaskOutcome(False, 0.5, "missing X", ("says nothing of X",)),
        "t3": TaskOutcome(False, 0.0, "empty"),
        "h1": TaskOutcome(False, 0.0, "HOLDOUT SECRET"),
    }
    fb = build_feedback(
        2,
        ["t1", "t2", "t3", "t4"],
        outcomes,
        {"t2": "Prompt two", "t3": "Prompt three", "h1": "holdout prompt"},
        previous_diff="+ a rule\n",
        categories={"t2": "cat"},
    )
    assert [f.task_id for f in fb.failing] == ["t3", "t4", "t2"]
    assert fb.train_score == 0.25
    text = fb.render()
    assert "Prompt two" in text and "missing X" in text and "- says nothing of X" in text
    assert "category cat" in text and "+ a rule" in text and "no result for this task" in text
    assert "HOLDOUT" not in text and "holdout prompt" not in text


def test_size_is_bounded() -> None:
    ids = [f"t{i}" for i in range(40)]
    outcomes = {
        t: TaskOutcome(False, 0.0, "d" * 5000, tuple("f" * 999 for _ in range(20))) for t in ids
    }
    fb = build_feedback(
        1, ids, outcomes, {t: "p" * 10_000 for t in ids}, previous_diff="x" * 50_000
    )
    assert len(fb.failing) == 12 and fb.omitted_failures == 28
    assert all(len(f.prompt) < MAX_PROMPT_CHARS + 60 and len(f.findings) == 5 for f in fb.failing)
    assert len(fb.previous_diff) < MAX_DIFF_CHARS + 60
    assert len(fb.render()) < 60_000
    assert "(28 more failing task(s) not shown)" in fb.render()
