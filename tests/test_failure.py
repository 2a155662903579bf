"""A failed execution as one typed record (core/failure.py): what each kind of Failure becomes
in the run (the attempt's recorded status, retried or not, the run stopped or not), as a pure
table and through the real runner, and the loose keywords plugin executors written before it
still pass to `ExecutionResult`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval import ExecutionResult, Failure
from skill_eval.core.attempt_policy import AttemptPolicy
from skill_eval.core.model import Arm, ExecutionRequest, Task
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.errors import RunStopped
from skill_eval.executors.base import ExecutorBase, ExecutorConfig
from skill_eval.judges.base import JudgeContext, build_judge
from tests.helpers import journal_records

# Failure -> (recorded status, retried while retries are left, run stops)
TABLE: list[tuple[Failure, str, bool, bool]] = [
    (Failure("tampering: a call the model never made"), "error", False, False),
    (Failure.transient("529 overloaded", after=0.0), "error", True, False),
    (Failure.setup("HTTP 401 authentication_error"), "error", False, True),
    (Failure.output("stopped at --max-turns"), "failed", False, False),
    (Failure.output("timed out after 10s", retry=True), "failed", True, False),
]


@pytest.mark.parametrize(("failure", "status", "retried", "stops"), TABLE)
def test_what_a_failure_becomes(failure: Failure, status: str, retried: bool, stops: bool) -> None:
    assert (failure.status, failure.retried(True), failure.stops_run) == (status, retried, stops)
    assert not failure.retried(False)  # no retry past --max-retries, whatever the kind
    assert not failure.final().retried(True) and failure.final().status == status


TASK = Task(id="t0", prompt="p", judge={"type": "contains", "expected": ["ok"]}, index=0)
ARM = Arm("candidate", None, "none")


class Failing(ExecutorBase):
    """Every try ends in the same result."""

    name = "failing"

    def __init__(self, result: ExecutionResult) -> None:
        self.config, self.result, self.tries = ExecutorConfig(), result, 0

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        self.tries += 1
        return self.result


def run_one(tmp_path: Path, result: ExecutionResult) -> tuple[dict[str, Any], int, bool]:
    """The journaled attempt of one job whose executor always returns `result` (two retries
    allowed), how many tries it made, and whether the run stopped."""
    executor = Failing(result)
    runner = Runner(
        executor,
        {TASK.id: build_judge(TASK.judge)},
        JudgeContext(suite_dir=tmp_path),
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(sleep=lambda s: None, attempts=AttemptPolicy(max_retries=2)),
    )
    try:
        runner.run(plan_jobs([ARM], [TASK], 1))
        stopped = False
    except RunStopped:
        stopped = True
    [record] = journal_records(tmp_path / "attempts.jsonl")
    return record, executor.tries, stopped


@pytest.mark.parametrize(("failure", "status", "retried", "stops"), TABLE)
def test_the_runner_records_each_failure_as_the_table_says(
    tmp_path: Path, failure: Failure, status: str, retried: bool, stops: bool
) -> None:
    record, tries, stopped = run_one(tmp_path, ExecutionResult(failure=failure))
    assert (record["status"], tries, stopped) == (status, 3 if retried else 1, stops)
    if status == "failed":  # the output's failure: its reason in the judgement, no error
        assert record["error"] is None
        assert record["judge"]["details"] == f"counted as a failure: {failure.message}"
        assert record["judge"]["data"] == {"output_caused": True}
    else:
        assert record["error"] == failure.message


# The loose keywords of ExecutionResult before Failure, as a plugin executor passes them.
LEGACY: list[tuple[dict[str, Any], Failure]] = [
    ({"error": "boom"}, Failure("boom")),
    ({"error": "529", "retryable": True, "retry_after": 2.0}, Failure.transient("529", after=2.0)),
    ({"error": "401", "fatal": True}, Failure.setup("401")),
    ({"error": "401", "fatal": True, "retryable": True}, Failure.setup("401")),  # fatal first
    ({"error": "turns", "output_caused": True}, Failure.output("turns")),
    (
        {"error": "slow", "retryable": True, "output_caused": True},
        Failure.output("slow", retry=True),
    ),
    ({"error": "400", "retry_after": 3.0}, Failure("400")),  # a wait counts only with a retry
]


@pytest.mark.parametrize(("keywords", "failure"), LEGACY)
def test_a_plugin_s_loose_keywords_make_the_same_failure(
    keywords: dict[str, Any], failure: Failure
) -> None:
    assert ExecutionResult(output="", **keywords) == ExecutionResult(failure=failure)


def test_a_plugin_s_loose_keywords_journal_the_same_bytes(tmp_path: Path) -> None:
    old, _, _ = run_one(
        tmp_path / "old",
        ExecutionResult(error="timed out", retryable=True, output_caused=True, meta={"a": 1}),
    )
    new, _, _ = run_one(
        tmp_path / "new",
        ExecutionResult(failure=Failure.output("timed out", retry=True), meta={"a": 1}),
    )
    timing = ("started_at", "finished_at", "duration_ms", "mac")  # the mac covers the times
    assert {k: v for k, v in old.items() if k not in timing} == {
        k: v for k, v in new.items() if k not in timing
    }
    assert list(old) == list(new)  # the same keys in the same order


@pytest.mark.parametrize(
    ("keywords", "says"),
    [
        ({"retryable": True}, "need error="),
        ({"fatal": True, "error": ""}, "need error="),
        ({"failure": Failure("x"), "error": "y"}, "not both"),
        ({"failure": "boom"}, "must be a Failure"),
    ],
)
def test_keywords_that_describe_no_failure_are_refused(keywords: dict[str, Any], says: str) -> None:
    with pytest.raises(TypeError, match=says):
        ExecutionResult(**keywords)


def test_a_result_is_read_through_its_failure() -> None:
    result = ExecutionResult(error="boom", retryable=True)
    assert result.failure == Failure.transient("boom")
    assert not hasattr(result, "error") and not hasattr(result, "retryable")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: Failure("x", "stop", retry=True), "not retried"),
        (lambda: Failure("x", retry_after=1.0), "needs retry=True"),
        (lambda: Failure("x", "later"), "must be one of"),  # type: ignore[arg-type]
    ],
)
def test_a_failure_that_says_two_things_is_refused(make: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        make()
