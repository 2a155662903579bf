"""The improve loop end to end on fakes: a pure-python evaluate_fn (rule-following mock model +
contains check), the mock and scripted improvers, a real SQLite memory in tmp_path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skill_eval.executors.mock_model import rule_line
from skill_eval.improve import (
    ImproveMemory,
    Improver,
    ImproveResult,
    IterationSettings,
    MockImprover,
    run_improve,
)
from skill_eval.improve.loop import VersionResult, select_best, why_best
from tests.improve_fakes import (
    IdRuleImprover,
    ManualClock,
    RuleFollowingEvaluator,
    ScriptedImprover,
    make_tasks,
    skill_with_rules,
)

TASKS = make_tasks()  # 4 categories x 3 tasks: 8 train, 4 holdout (one per category)
HALF = skill_with_rules("alpha", "beta")  # passes half of train and half of holdout


def run(
    tmp_path: Path,
    improver: Improver,
    skill: dict[str, str] = HALF,
    lines: list[str] | None = None,
    **kw: object,
) -> tuple[ImproveResult, ImproveMemory]:
    memory = ImproveMemory.in_state_root(tmp_path / "state")
    evaluator = kw.pop("evaluator", None) or RuleFollowingEvaluator(TASKS)
    settings = kw.pop("settings", None) or IterationSettings()
    out = [] if lines is None else lines
    result = run_improve(
        skill,
        TASKS,
        evaluator,
        improver,
        memory,
        settings,  # type: ignore
        skill_id="demo",
        log=out.append,
        **kw,
    )  # type: ignore[arg-type]
    return result, memory


def decisions(memory: ImproveMemory, result: ImproveResult) -> list[str]:
    return [c.decision for c in memory.cycles(result.run_id)]


def test_mock_improver_converges_to_accept_and_is_proposed(tmp_path: Path) -> None:
    lines: list[str] = []
    improver = MockImprover(tokens_per_call=50, cost_per_call=0.02)
    result, memory = run(tmp_path, improver, lines=lines)
    assert (len(result.split.train), len(result.split.holdout)) == (8, 4)
    assert [v.train_score for v in result.versions] == [0.5, 1.0]
    assert result.decision == "Accept" and len(result.versions) <= 3
    assert result.best.iteration == 2 and result.proposed
    assert result.gate_reason == "holdout 0.50 -> 1.00"
    assert decisions(memory, result) == ["Continue", "Accept"]
    assert [c.phase for c in memory.cycles(result.run_id)] == ["refine", "complete"]
    assert result.tokens == 2 * 12 * 100 + 50 and result.cost_usd == pytest.approx(0.26)
    assert "[iter 1/3] train 0.50  holdout 0.50  (eval: 0 of 12 judgements reused)  $0.12" in lines
    # the improver's $0.02 counts in the run's total shown after iteration 2
    assert (
        "[iter 2/3] train 0.50 -> 1.00  holdout 1.00  (eval: 6 of 12 judgements reused)"
        "  $0.26" in lines
    )
    # only train results reached the improver
    [fb] = improver.calls
    assert {f.task_id for f in fb.failing} <= set(result.split.train)
    assert "--- a/SKILL.md" in result.best.diff and rule_line("gamma") in result.best.diff
    assert memory.version_files(result.run_id, result.best.hash) == result.best.files


@pytest.mark.parametrize(
    ("settings", "expected", "words"),
    [
        (IterationSettings(token_budget=500), ["Continue", "AbortBudget"], "tokens 2400 > budget"),
        (IterationSettings(max_cost_usd=0.10), ["AbortBudget"], "cost $0.12 > max $0.10"),
    ],
)
def test_budget_aborts_are_recorded(
    tmp_path: Path, settings: IterationSettings, expected: list[str], words: str
) -> None:
    result, memory = run(tmp_path, MockImprover(), settings=settings)
    assert decisions(memory, result) == expected
    assert result.decision == "AbortBudget" and words in result.reason
    assert memory.cycles(result.run_id)[-1].phase == "abort"


def test_timeout_with_an_injected_clock(tmp_path: Path) -> None:
    clock = ManualClock()
    evaluator = RuleFollowingEvaluator(TASKS, on_call=lambda: clock.advance(1000))
    result, memory = run(
        tmp_path,
        MockImprover(),
        clock=clock,
        evaluator=evaluator,
        settings=IterationSettings(timeout_seconds=1500),
    )
    assert decisions(memory, result) == ["Continue", "AbortTimeout"]
    assert "wall time 2000s > timeout 1500s" in result.reason
    assert memory.cycles(result.run_id)[1].duration_seconds == 1000


def test_regression_aborts_and_keeps_the_previous_version(tmp_path: Path) -> None:
    worse = skill_with_rules()["SKILL.md"]
    result, memory = run(tmp_path, ScriptedImprover([worse]))
    assert decisions(memory, result) == ["Continue", "AbortRegression"]
    assert result.versions[1].rejected and result.best.iteration == 1
    assert not result.proposed
    assert result.gate_reason == "no version beat the original on holdout"
    [lesson] = memory.recall("demo", 10_000).anti_patterns
    assert lesson.startswith("Regressed (train 0.50 -> 0.00, holdout 0.50 -> 0.00): removed:")
    [_, cycle] = memory.cycles(result.run_id)
    assert (cycle.train_score, cycle.phase) == (0.0, "abort")


def test_regression_check_can_be_turned_off(tmp_path: Path) -> None:
    worse = skill_with_rules()["SKILL.md"]
    result, memory = run(
        tmp_path, ScriptedImprover([worse]), settings=IterationSettings(abort_on_regression=False)
    )
    assert decisions(memory, result) == ["Continue", "AcceptBest"]


def test_accept_best_when_iterations_run_out(tmp_path: Path) -> None:
    steps = [skill_with_rules("alpha")["SKILL.md"], skill_with_rules("alpha", "beta")["SKILL.md"]]
    result, memory = run(tmp_path, ScriptedImprover(steps), skill=skill_with_rules())
    assert decisions(memory, result) == ["Continue", "Continue", "AcceptBest"]
    assert "reached 3 of 3 iterations" in result.reason
    assert result.best.iteration == 3 and result.proposed


def test_accept_best_on_diminishing_returns(tmp_path: Path) -> None:
    same = HALF["SKILL.md"] + "\nBe kind.\n"
    result, memory = run(tmp_path, ScriptedImprover([same]))
    assert decisions(memory, result) == ["Continue", "AcceptBest"]
    assert "improvement +0.00 < threshold 0.05" in result.reason


def test_holdout_gate_rejects_a_version_that_only_wins_on_train(tmp_path: Path) -> None:
    result, memory = run(tmp_path, IdRuleImprover())
    assert decisions(memory, result) == ["Continue", "Accept"]
    assert result.versions[1].train_score == 1.0
    assert result.versions[1].holdout_score == result.versions[0].holdout_score == 0.5
    assert result.best.iteration == 1 and not result.proposed
    assert result.gate_reason == "no version beat the original on holdout"
    [text] = [t for t in memory.recall("demo", 10_000).anti_patterns if "train only" in t]
    assert "holdout 0.50 -> 0.50" in text


def test_compare_fn_has_the_last_word(tmp_path: Path) -> None:
    seen: list[tuple[str, str, tuple[str, ...], int]] = []

    def compare(best, original, on, family):  # type: ignore[no-untyped-def]
        seen.append((best["SKILL.md"], original["SKILL.md"], tuple(on), family))
        return False, "paired delta CI includes 0"

    result, _ = run(tmp_path, MockImprover(), compare_fn=compare)
    assert not result.proposed and result.gate_reason == "paired delta CI includes 0"
    [(best, original, on, family)] = seen
    assert original == HALF["SKILL.md"] and best == result.best.files["SKILL.md"]
    # confirmed on the held-out tasks set apart from those that picked it: seen by neither
    split = result.split
    assert on == split.confirm and len(on) == 2 and not set(on) & set(split.holdout)
    assert not set(on) & set(split.train) and len(split.holdout) == 2
    # The pick was chosen from every later version not rejected: the gate is told how many.
    assert family == result.family == len([v for v in result.versions[1:] if not v.rejected])


def test_second_run_recalls_the_first_runs_learnings(tmp_path: Path) -> None:
    first, _ = run(tmp_path, MockImprover())
    assert first.learnings_saved >= 1 and first.recall.learnings == ()
    lines: list[str] = []
    second_improver = MockImprover()
    second, _ = run(tmp_path, second_improver, skill=skill_with_rules("alpha"), lines=lines)
    assert second.recall.learnings and second.run_id != first.run_id
    [seen] = second_improver.learnings_seen
    assert any(
        s.startswith("Learning: Helped (train 0.50 -> 1.00") and "[rule:gamma]" in s for s in seen
    )
    assert re.match(
        r"\[recall\] 1 learning\(s\), 0 anti-pattern\(s\) \(~\d+ tokens of 20000", lines[0]
    )


def test_unsafe_proposal_stops_the_loop_and_is_recorded(tmp_path: Path) -> None:
    improver = ScriptedImprover(
        [HALF["SKILL.md"] + "\nmore\n"], extra_files={"../task_suite.yaml": "tasks: []"}
    )
    result, memory = run(tmp_path, improver)
    assert result.decision == "AcceptBest" and "improver proposal rejected" in result.reason
    assert decisions(memory, result) == ["AcceptBest"] and len(result.versions) == 1


def test_protected_suite_in_the_skill_folder(tmp_path: Path) -> None:
    improver = ScriptedImprover([HALF["SKILL.md"]], extra_files={"suite.yaml": "tasks: []"})
    result, _ = run(tmp_path, improver, skill={**HALF, "suite.yaml": "x"}, protected=["suite.yaml"])
    assert "the task suite cannot be edited" in result.reason


def test_holdout_zero_warns_and_falls_back_to_train(tmp_path: Path) -> None:
    lines: list[str] = []
    result, _ = run(tmp_path, MockImprover(), settings=IterationSettings(holdout=0.0), lines=lines)
    assert result.split.holdout == () and result.warnings
    assert any(line.startswith("[split] warning: holdout is 0") for line in lines)
    assert result.proposed and "no holdout" in result.gate_reason
    assert "holdout -" in next(line for line in lines if line.startswith("[iter 1/3]"))


def test_a_costly_improver_call_stops_before_another_evaluation(tmp_path: Path) -> None:
    evaluator = RuleFollowingEvaluator(TASKS)
    result, memory = run(
        tmp_path,
        MockImprover(cost_per_call=5.0),
        evaluator=evaluator,
        settings=IterationSettings(max_cost_usd=2.0),
    )
    assert decisions(memory, result) == ["AbortBudget"] and len(evaluator.calls) == 1
    assert "cost $5.12 > max $2.00" in result.reason
    [cycle] = memory.cycles(result.run_id)
    assert cycle.cost_usd == pytest.approx(5.12) and result.cost_usd == pytest.approx(5.12)


def test_the_same_lesson_is_recalled_once(tmp_path: Path) -> None:
    run(tmp_path, MockImprover())
    run(tmp_path, MockImprover())  # same start, same lesson saved again
    memory = ImproveMemory.in_state_root(tmp_path / "state")
    helped = [t for t in memory.recall("demo", 10_000).learnings if t.startswith("Helped")]
    assert len(helped) == 1


def _version(
    iteration: int,
    holdout: float | None,
    tokens: int = 100,
    train: float = 0.5,
    rejected: bool = False,
) -> VersionResult:
    return VersionResult(
        iteration, f"h{iteration}", None, {}, "", train, holdout, tokens, 0.0, rejected
    )


@pytest.mark.parametrize(
    ("versions", "chosen", "why"),
    [
        (
            [_version(1, 0.5), _version(2, 0.75), _version(3, 0.5)],
            2,
            "highest holdout pass rate, 0.75 (iterations: 1 0.50, 2 0.75, 3 0.50)",
        ),
        (
            [_version(1, 0.5), _version(2, 0.75, tokens=90), _version(3, 0.75)],
            2,
            "tied with iteration 3, chosen for fewer evaluation tokens (90)",
        ),
        (
            [_version(1, 0.5), _version(2, 0.75), _version(3, 0.75)],
            2,
            "tied with iteration 3, chosen as the earlier version",
        ),
        (
            [_version(1, 0.5), _version(2, 1.0, rejected=True)],
            1,
            "every later version was rejected for a regression (holdout: 1 0.50, 2 1.00 "
            "(rejected))",
        ),
        (
            [_version(1, None, train=0.25), _version(2, None, train=0.5)],
            2,
            "highest train pass rate, 0.50",
        ),
    ],
)
def test_the_log_says_why_the_best_version_was_chosen(
    versions: list[VersionResult], chosen: int, why: str
) -> None:
    best = select_best(versions)
    assert best.iteration == chosen
    assert why in why_best(versions, best)
