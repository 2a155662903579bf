"""Train/holdout split: stratified by category, seeded, deterministic."""

from __future__ import annotations

from collections import Counter

import pytest

from skill_eval.core.model import Task
from skill_eval.improve import split_tasks
from tests.improve_fakes import make_tasks


def task(tid: str, category: str | None = None) -> Task:
    return Task(
        id=tid, prompt="p", judge={"type": "contains", "expected": ["x"]}, category=category
    )


def test_default_split_is_60_40_and_every_category_is_on_both_sides() -> None:
    tasks = make_tasks(("a", "b", "c", "d"), per_category=5)
    s = split_tasks(tasks, 0.4, seed=0)
    assert (len(s.train), len(s.holdout)) == (12, 8)
    cat = {t.id: t.category for t in tasks}
    assert Counter(cat[t] for t in s.holdout) == {"a": 2, "b": 2, "c": 2, "d": 2}
    assert set(s.train) | set(s.holdout) == {t.id for t in tasks}
    assert not set(s.train) & set(s.holdout)
    assert s.warnings == ()


def test_same_seed_same_split_other_seed_other_split() -> None:
    tasks = make_tasks(("a", "b"), per_category=10)
    assert split_tasks(tasks, 0.4, 7) == split_tasks(list(tasks), 0.4, 7)
    assert split_tasks(tasks, 0.4, 7).holdout != split_tasks(tasks, 0.4, 8).holdout


def test_suite_order_is_kept() -> None:
    tasks = make_tasks(("a", "b"), per_category=4)
    order = [t.id for t in tasks]
    s = split_tasks(tasks)
    assert list(s.train) == sorted(s.train, key=order.index)
    assert list(s.holdout) == sorted(s.holdout, key=order.index)


def test_two_task_category_gets_one_each_side_even_at_small_fractions() -> None:
    s = split_tasks([task("a1", "a"), task("a2", "a"), task("b1", "b"), task("b2", "b")], 0.1)
    assert len(s.holdout) == 2 and {h[0] for h in s.holdout} == {"a", "b"}


def test_singletons_and_uncategorized_tasks_are_pooled() -> None:
    tasks = [task(f"u{i}") for i in range(5)] + [task("s1", "solo")]
    s = split_tasks(tasks, 0.5, seed=3)
    assert len(s.holdout) == 3 and len(s.train) == 3


def test_holdout_zero_keeps_everything_in_train_with_a_warning() -> None:
    tasks = make_tasks(("a",), per_category=3)
    s = split_tasks(tasks, 0.0)
    assert s.holdout == () and len(s.train) == 3
    assert "no held-out check" in s.warnings[0]


def test_one_task_suite_trains_and_warns_that_holdout_is_empty() -> None:
    s = split_tasks([task("only")], 0.9)
    assert s.train == ("only",) and s.holdout == ()
    assert "holdout is empty" in s.warnings[0]


@pytest.mark.parametrize(
    ("tasks", "fraction", "words"),
    [
        ([task("a")], 1.0, "holdout"),
        ([task("a")], -0.1, "holdout"),
        ([task("a"), task("a")], 0.4, "unique"),
        ([], 0.4, "no tasks"),
    ],
)
def test_bad_input(tasks: list[Task], fraction: float, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        split_tasks(tasks, fraction)
