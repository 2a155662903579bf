"""The meter's and the estimate's arithmetic, in process (#49): what an estimate totals and
leaves for a resumed run, what an attempt's prior costs by the prompt cache its executor
marks, how big a suite says a good answer is, what a judgement's calls cost whatever the judge
writes in its data, and that every try of an attempt is paid for and charged once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.budget import BUDGET_STOPPED
from skill_eval.core.failure import Failure
from skill_eval.core.model import (
    Arm,
    Attempt,
    ExecutionRequest,
    ExecutionResult,
    JudgeResult,
    ModelCall,
    Skill,
    Task,
    Usage,
)
from skill_eval.core.work import Work
from skill_eval.engine.estimate import Estimate, check_caps
from skill_eval.engine.prior import Rate, Spend, answer_chars, attempt_spend
from skill_eval.engine.runner import Runner, RunSettings, plan_jobs
from skill_eval.engine.spend import Meter, Spent, spent_on
from skill_eval.errors import BudgetExhausted
from skill_eval.executors.base import ExecutorBase
from skill_eval.executors.grader import GradeRequest, Reply
from skill_eval.executors.pricing import load_price_table
from skill_eval.executors.request_frame import RequestFrame
from skill_eval.judges.base import JudgeContext, build_judge, run_judge
from skill_eval.plan.sections import Records

PRICES = load_price_table()
SONNET = "claude-sonnet-4-6"  # $3 in, $15 out, $3.75 cache write, $0.30 cache read


def attempt(arm: str, status: str = "passed", **more: Any) -> Attempt:
    fields: dict[str, Any] = {"judge": None, "error": None, "duration_ms": 1, **more}
    return Attempt(arm, "t", 0, status, "out", **fields)  # type: ignore[arg-type]


# -- the estimate (pure) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempts", "rates", "judges", "spent", "usd", "tokens"),
    [
        ({"c": 2, "b": 2}, {"c": Rate(0.1, 100), "b": Rate(0.05, 50)}, 0, Spent(), 0.3, 300),
        ({"c": 1}, {"c": Rate(0.1, 100)}, 3, Spent(), 0.1 + 3 * 0.01, 100 + 3 * 20),
        ({"c": 1}, {"c": Rate(0.1, 100)}, 0, Spent(1.0, 1000), 1.1, 1100),
        ({"c": 1, "b": 1}, {"c": Rate(None, 100), "b": Rate(0.1, 10)}, 0, Spent(), None, 110),
        ({"c": 0, "b": 1}, {"c": Rate(None, 100), "b": Rate(0.1, 10)}, 0, Spent(), 0.1, 10),
    ],
)
def test_an_estimate_totals_its_attempts_judgements_and_what_was_spent(
    attempts: dict[str, int],
    rates: dict[str, Rate],
    judges: int,
    spent: Spent,
    usd: float | None,
    tokens: int,
) -> None:
    estimate = Estimate(attempts, judges, rates, Rate(0.01, 20), "basis", spent=spent)
    assert estimate.tokens == tokens
    assert estimate.cost_usd == (pytest.approx(usd) if usd is not None else None)


def test_a_resumed_runs_estimate_is_what_is_left_plus_what_was_spent() -> None:
    estimate = Estimate({"c": 3, "b": 3}, 6, {"c": Rate(0.1, 1), "b": Rate(0.1, 1)}, Rate(0, 0), "")
    done = [attempt("c"), attempt("c", "error"), attempt("b", "failed")]
    left = estimate.after(done, Spent(0.5, 7))
    assert dict(left.attempts) == {"c": 2, "b": 2}  # an error is run again
    assert left.judge_calls == 4 and left.cost_usd == pytest.approx(0.4 + 0.5)


def test_caps_refuse_an_estimate_over_them_and_say_when_dollars_are_unknown() -> None:
    priced = Estimate({"c": 10}, 0, {"c": Rate(0.1, 1000)}, Rate(0, 0), "")
    with pytest.raises(BudgetExhausted, match=r"estimate \$1.0000 is over --max-cost-usd 0.5"):
        check_caps(priced, Records(max_cost_usd=0.5))
    with pytest.raises(BudgetExhausted, match="10,000 tokens is over --max-tokens-total 999"):
        check_caps(priced, Records(max_tokens_total=999))
    assert check_caps(priced, Records(max_cost_usd=2.0)) is None
    unpriced = Estimate({"c": 10}, 0, {"c": Rate(None, 1000)}, Rate(0, 0), "")
    assert "--max-tokens-total caps" in (check_caps(unpriced, Records(max_cost_usd=2.0)) or "")


# -- the prior (pure) -----------------------------------------------------------------------

TASK = Task("t", "p" * 400, {"type": "contains", "expected": ["x"]}, reference="r" * 800)
SKILL = Skill("s", "k" * 8000)  # 2,000 tokens: over the least the API caches


@pytest.mark.parametrize(
    ("frame", "mode", "share", "spend"),
    [
        # one plain request: prompt and skill in, the reference's size out
        (RequestFrame(), "system", 1.0, Spend(input=2100, output=200)),
        (RequestFrame(), "prepend", 0.5, Spend(input=2100, output=200)),
        # the skill as a cached system prompt: written by one attempt of the arm, read by the rest
        (RequestFrame(cache="prefix"), "system", 0.25, Spend(100, 200, 500, 1500)),
        # Claude Code: its own prompt and the skill cached, the prompt written once
        (RequestFrame(1000, cache="conversation"), "system", 1.0, Spend(0, 200, 3100, 0)),
        # two turns, the skill installed: its SKILL.md comes back in the first tool result
        (
            RequestFrame(1000, turns=2, cache="conversation"),
            "installed",
            1.0,
            Spend(0, 200, 1000 + 100 + (100 + 100 + 2000), 1000 + 100),
        ),
    ],
)
def test_an_attempts_prior_follows_the_cache_its_executor_marks(
    frame: RequestFrame, mode: str, share: float, spend: Spend
) -> None:
    got = attempt_spend(TASK, SKILL, frame, mode, share, "text")
    assert got == pytest.approx(spend)


def test_a_skill_below_the_least_the_api_caches_is_read_at_full_price() -> None:
    short = Skill("s", "k" * 2000)  # 500 tokens
    got = attempt_spend(TASK, short, RequestFrame(cache="prefix"), "system", 0.1, "text")
    assert got == pytest.approx(Spend(input=600, output=200))


def test_an_answers_size_is_the_reference_else_the_expected_output() -> None:
    judge = {"type": "contains", "expected": ["x"]}
    assert answer_chars(Task("a", "p", judge, reference="x" * 70)) == 70
    work = {"text": "abc", "files": {"a.md": "x" * 10}, "tools": [{"name": "Write", "input": {}}]}
    assert answer_chars(Task("a", "p", judge, reference=work)) == 3 + 10 + 2
    nested = {
        "type": "weighted",
        "judges": [
            {"weight": 1, "judge": judge},
            {"weight": 2, "judge": {"type": "expectations", "expected_output": "y" * 40}},
        ],
    }
    assert answer_chars(Task("a", "p", nested)) == 40
    assert answer_chars(Task("a", "p", judge)) is None


# -- what is spent (in process) -------------------------------------------------------------


class PaidGrader:
    """A grader whose every reply used tokens (a stand-in for a priced model service)."""

    name = "paid"

    def complete(self, request: GradeRequest) -> Reply:
        return Reply({"passed": True}, "{}", Usage(1000, 100), model=request.model)


class QuietJudge:
    """A judge that asks the model twice and records nothing of either call in its data."""

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        for _ in range(2):
            ctx.grader.complete(GradeRequest("s", "p", {}, "verdict", SONNET))
        return JudgeResult(True, 1.0, "fine", data={"anything": "but usage"})


def test_a_judge_that_records_nothing_of_its_calls_is_metered_all_the_same(
    tmp_path: Path,
) -> None:
    ctx = JudgeContext(suite_dir=tmp_path, grader=PaidGrader())
    result = run_judge(QuietJudge(), TASK, Work(text="x"), ctx)
    assert result.calls == (ModelCall(SONNET, Usage(1000, 100)),) * 2
    one_call = (1000 * 3 + 100 * 15) / 1_000_000
    spent = spent_on(attempt("c", judge=result), PRICES)
    assert spent.judge_calls == 2 and spent.judge_cost_usd == pytest.approx(2 * one_call)
    assert JudgeResult.from_dict(result.to_dict()).calls == result.calls  # journaled as is


def test_the_meter_counts_an_attempts_own_cost_once() -> None:
    judged = JudgeResult(True, 1.0, calls=(ModelCall(SONNET, Usage(1000, 0)),))
    paid = attempt("c", judge=judged, cost_usd=0.5, usage=Usage(100, 100))
    meter = Meter(None, None, PRICES)
    meter.add(paid, own_charged=True)  # its replies were charged as they came
    assert meter.cost_usd == pytest.approx(0.003) and meter.tokens == 1000
    meter.add(paid)  # an attempt run elsewhere: all of it counts here
    assert meter.cost_usd == pytest.approx(0.003 + 0.503) and meter.finished == 2
    stopped = attempt("c", "error", meta={"error_type": BUDGET_STOPPED})
    meter.add(stopped, own_charged=True)
    assert meter.stopped == 1 and meter.finished == 2


def test_a_meter_refuses_once_a_cap_is_reached() -> None:
    meter = Meter(1.0, None, PRICES)
    assert not meter.charge(0.6, 10) and meter.refusal() is None
    assert meter.charge(0.5, 10) and "spent of --max-cost-usd 1" in (meter.refusal() or "")
    tokens = Meter(None, 100, PRICES)
    assert tokens.charge(0.0, 100) and "100 tokens spent" in (tokens.refusal() or "")


class FlakyPaidExecutor(ExecutorBase):
    """A plugin-style executor that charges nothing itself: its first try fails (retryable)
    after spending, its second answers."""

    name = "flaky-paid"

    def __init__(self) -> None:
        self.tries = 0

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        self.tries += 1
        if self.tries == 1:
            return ExecutionResult(failure=Failure.transient("overloaded"), cost_usd=0.25)
        return ExecutionResult(output="x", usage=Usage(10, 5), cost_usd=0.5)


def test_every_try_of_an_attempt_is_paid_for_and_charged_once(tmp_path: Path) -> None:
    task = Task("t", "p", {"type": "contains", "expected": ["x"]})
    meter = Meter(10.0, None, PRICES)
    runner = Runner(
        FlakyPaidExecutor(),
        {"t": build_judge(task.judge)},
        JudgeContext(suite_dir=tmp_path),
        None,
        RunSettings(concurrency=1, sleep=lambda seconds: None, meter=meter),
    )
    (made,) = runner.run(plan_jobs([Arm("c", None)], [task], 1))
    assert made.status == "passed" and made.tries == 2
    assert made.cost_usd == pytest.approx(0.75) and made.usage == Usage(10, 5)
    assert meter.cost_usd == pytest.approx(0.75) and meter.finished == 1
