"""What `improve` proposes: a version shown better than the original (policy superior by
default) on held-out tasks the pick was not made on; a suite too small for that to ever
happen is said before the first iteration."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.improve.split import set_apart_to_confirm, split_tasks
from skill_eval.improve.versions import confirmable
from tests.helpers import read_json, run_cli
from tests.test_improve_cli import _write_inputs


@pytest.mark.parametrize(
    ("tasks", "policy", "family", "expected"),
    [
        (4, "superior", 1, False),  # 4 of 4 improved cannot rule out chance at 2.5%
        (7, "superior", 3, True),
        (6, "superior", 2, False),  # the level shared by two versions asks for more
        (5, "no-regression", 1, True),  # "not shown worse" is easier to pass
        (0, "superior", 1, False),
    ],
)
def test_confirmable_is_the_best_outcome_decided_as_the_run_decides(
    tasks: int, policy: str, family: int, expected: bool
) -> None:
    assert confirmable(tasks, policy, family) is expected  # type: ignore[arg-type]


def test_the_tasks_set_apart_are_half_the_holdout_and_seen_by_no_one_else() -> None:
    class T:
        def __init__(self, i: int) -> None:
            self.id, self.category = f"t{i}", f"c{i % 4}"

    split = set_apart_to_confirm(split_tasks([T(i) for i in range(40)], 0.4, 7), 7)
    assert len(split.confirm) == 8 and len(split.holdout) == 8 and len(split.train) == 24
    assert not set(split.confirm) & (set(split.holdout) | set(split.train))
    one = set_apart_to_confirm(split_tasks([T(0), T(4)], 0.5, 0), 0)
    assert one.confirm == one.holdout and "confirmed on the task that picked it" in one.warnings[0]


def test_a_suite_too_small_to_confirm_is_said_before_the_first_iteration(tmp_path: Path) -> None:
    skill, suite = _write_inputs(tmp_path, per=4)  # 16 tasks: 4 set apart to confirm
    code, out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--improver",
        "mock",
        "--confirm-samples",
        "1",
    )
    assert code == 1, err  # the better version is not proposed: it could not be shown better
    lines = err.splitlines()
    warning = next(i for i, line in enumerate(lines) if line.startswith("[confirm] warning"))
    assert warning < next(i for i, line in enumerate(lines) if line.startswith("[iter 1/"))
    assert "the 4 task(s) set apart to confirm the pick cannot pass policy superior" in err
    # three attempts a task and arm (the default) could show it on the same 4 tasks
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state3"),
        "--mock",
        "--improver",
        "mock",
    )
    assert "[confirm] warning" not in err, err
    ranking = read_json(out.strip())
    assert not ranking["improve"]["proposed"]
    # "not shown worse", asked for by name: 4 tasks rule out no regression either, and the
    # warning names the policy asked for
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state2"),
        "--mock",
        "--improver",
        "mock",
        "--policy",
        "no-regression",
        "--confirm-samples",
        "1",
    )
    assert "cannot pass policy no-regression" in err
