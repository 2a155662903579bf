"""The runner: interleaved arms, bounded concurrency, retries of what is not the skill's
fault, a journal that survives a torn line, and resume without repeats."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from skill_eval.core.attempt_policy import AttemptPolicy
from skill_eval.core.failure import Failure
from skill_eval.core.model import Arm, ExecutionRequest, ExecutionResult, JudgeResult, Skill, Task
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.errors import RunStopped
from skill_eval.executors.base import ExecutorBase, ExecutorConfig
from skill_eval.judges.base import JudgeContext, build_judge
from tests.helpers import journal_records

TASKS = [
    Task(id=f"t{i}", prompt=f"p{i}", judge={"type": "contains", "expected": ["ok"]}, index=i)
    for i in range(4)
]
ARMS = [Arm("candidate", Skill("s", "skill text"), "candidate"), Arm("baseline", None, "none")]


class ScriptedExecutor(ExecutorBase):
    """A fake executor: fails the first `failures` tries of every job with a retryable error,
    records calls and the peak number running at once."""

    name = "scripted"

    def __init__(self, failures: int = 0, retryable: bool = True, delay: float = 0.0) -> None:
        self.config = ExecutorConfig()
        self.failures, self.retryable, self.delay = failures, retryable, delay
        self.calls: list[tuple[str, str, int]] = []
        self.running = self.peak = 0
        self.lock = threading.Lock()

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        key = (request.arm, request.task.id, request.attempt)
        with self.lock:
            self.calls.append(key)
            tries = self.calls.count(key)
            self.running += 1
            self.peak = max(self.peak, self.running)
        time.sleep(self.delay)
        with self.lock:
            self.running -= 1
        if tries <= self.failures:
            overloaded = Failure.transient("529 overloaded", after=0)
            return ExecutionResult(failure=overloaded if self.retryable else overloaded.final())
        return ExecutionResult(output="ok" if request.skill else "no")


def make_runner(
    tmp_path: Path, executor: ScriptedExecutor, max_retries: int = 5, **settings
) -> Runner:
    judges = {t.id: build_judge(t.judge) for t in TASKS}
    return Runner(
        executor,
        judges,
        JudgeContext(suite_dir=tmp_path),
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(
            sleep=lambda s: None, attempts=AttemptPolicy(max_retries=max_retries), **settings
        ),
    )


def test_jobs_interleave_arms() -> None:
    jobs = plan_jobs(ARMS, TASKS[:2], samples=2)
    assert [(j.arm.name, j.task.id, j.index) for j in jobs] == [
        ("candidate", "t0", 0),
        ("baseline", "t0", 0),
        ("candidate", "t1", 0),
        ("baseline", "t1", 0),
        ("candidate", "t0", 1),
        ("baseline", "t0", 1),
        ("candidate", "t1", 1),
        ("baseline", "t1", 1),
    ]


def test_retryable_errors_are_retried_to_success_and_recorded_once(tmp_path: Path) -> None:
    executor = ScriptedExecutor(failures=2)
    attempts = make_runner(tmp_path, executor, max_retries=5).run(plan_jobs(ARMS, TASKS, 1))
    assert {a.status for a in attempts if a.arm == "candidate"} == {"passed"}
    assert {a.status for a in attempts if a.arm == "baseline"} == {"failed"}
    assert all(a.tries == 3 for a in attempts)
    lines = journal_records(tmp_path / "attempts.jsonl")
    assert len(lines) == len(attempts) == 8


def test_persistent_errors_become_error_attempts(tmp_path: Path) -> None:
    executor = ScriptedExecutor(failures=99)
    attempts = make_runner(tmp_path, executor, max_retries=2).run(plan_jobs(ARMS, TASKS, 1))
    assert {a.status for a in attempts} == {"error"}
    assert all(a.tries == 3 and a.error == "529 overloaded" for a in attempts)


def test_non_retryable_errors_are_not_retried(tmp_path: Path) -> None:
    executor = ScriptedExecutor(failures=1, retryable=False)
    attempts = make_runner(tmp_path, executor).run(plan_jobs(ARMS, TASKS, 1))
    assert all(a.status == "error" and a.tries == 1 for a in attempts)


def test_concurrency_is_bounded_and_used(tmp_path: Path) -> None:
    executor = ScriptedExecutor(delay=0.3)  # time for the three to overlap, even loaded
    make_runner(tmp_path, executor, concurrency=3).run(plan_jobs(ARMS, TASKS, 2))
    assert executor.peak == 3


def test_resume_skips_finished_attempts_and_ignores_a_torn_line(tmp_path: Path) -> None:
    jobs = plan_jobs(ARMS, TASKS, 1)
    first = ScriptedExecutor()
    runner = make_runner(tmp_path, first)
    runner.run(jobs[:5])
    runner.journal.close()
    journal = tmp_path / "attempts.jsonl"
    with journal.open("a") as handle:  # a kill in the middle of a write
        handle.write(json.dumps({"arm": "candidate", "task_id": "t3"})[:20])
    done = Journal(journal).read()
    assert len(done) == 5
    second = ScriptedExecutor()
    attempts = make_runner(tmp_path, second).run(jobs, done)
    assert len(second.calls) == 3 and len(attempts) == 8
    assert len(Journal(journal).read()) == 8


def test_a_crashing_executor_is_an_error_attempt_not_a_crash(tmp_path: Path) -> None:
    class Crashing(ScriptedExecutor):
        def run(self, request: ExecutionRequest) -> ExecutionResult:
            raise RuntimeError("boom")

    crashing = Crashing()
    attempts = make_runner(tmp_path, crashing, max_retries=3).run(plan_jobs(ARMS, TASKS, 1))
    assert all(a.status == "error" and "boom" in (a.error or "") for a in attempts)
    # A bug raises again on the same input: tried once, its traceback kept on the attempt.
    assert all(a.tries == 1 and "raise RuntimeError" in (a.error or "") for a in attempts)
    assert len(crashing.calls) == 0  # Crashing.run never reaches the recording parent


def test_a_fatal_executor_error_stops_the_run_at_the_first_attempt(tmp_path: Path) -> None:
    class BadKey(ScriptedExecutor):
        def run(self, request: ExecutionRequest) -> ExecutionResult:
            with self.lock:
                self.calls.append((request.arm, request.task.id, request.attempt))
            return ExecutionResult(
                failure=Failure.setup("HTTP 401 authentication_error: invalid x-api-key")
            )

    executor = BadKey()
    runner = make_runner(tmp_path, executor, concurrency=1, max_retries=5)
    with pytest.raises(RunStopped) as info:
        runner.run(plan_jobs(ARMS, TASKS, 1))
    assert len(executor.calls) == 1  # 8 jobs planned; the first one stopped the run
    assert "401 authentication_error" in str(info.value) and str(tmp_path) in str(info.value)
    journaled = Journal(tmp_path / "attempts.jsonl").read()
    assert [a.error for a in journaled] == ["HTTP 401 authentication_error: invalid x-api-key"]


def test_a_judge_error_retries_the_judge_not_the_model(tmp_path: Path) -> None:
    class FlakyJudge:
        calls = 0

        def judge(self, task, output, ctx):
            FlakyJudge.calls += 1
            if FlakyJudge.calls <= 2:
                return JudgeResult.failure("judge model overloaded", transient=True)
            return JudgeResult(True, 1.0)

    executor = ScriptedExecutor()
    runner = make_runner(tmp_path, executor, max_retries=3)
    runner.judges = {t.id: FlakyJudge() for t in TASKS}
    attempts = runner.run(plan_jobs(ARMS[:1], TASKS[:1], 1))
    assert attempts[0].status == "passed" and len(executor.calls) == 1
    assert FlakyJudge.calls == 3


@pytest.mark.parametrize("kind", ["returned", "raised"])
def test_a_permanent_judge_error_is_recorded_at_once(tmp_path: Path, kind: str) -> None:
    class BrokenJudge:
        calls = 0

        def judge(self, task, output, ctx):
            BrokenJudge.calls += 1
            if kind == "raised":
                return {}["missing-key"]
            return JudgeResult.failure("test_file file not found: 'fixtures/t.py'")

    runner = make_runner(tmp_path, ScriptedExecutor(), max_retries=5)
    runner.judges = {t.id: BrokenJudge() for t in TASKS}
    attempts = runner.run(plan_jobs(ARMS[:1], TASKS[:1], 1))
    assert BrokenJudge.calls == 1 and attempts[0].status == "error"
    judge = attempts[0].judge
    assert judge is not None and judge.error_kind == "permanent"
    if kind == "raised":  # the cause and where it was raised, kept for the author
        assert attempts[0].error == "judge error: judge crashed: KeyError: 'missing-key'"
        assert 'return {}["missing-key"]' in judge.details
    else:
        assert "file not found" in (attempts[0].error or "")
    on_disk = Journal(tmp_path / "attempts.jsonl").read()[0].judge
    assert on_disk is not None and on_disk.error_kind == "permanent"


def test_lone_surrogates_in_model_output_do_not_break_the_journal(tmp_path: Path) -> None:
    class Surrogate(ScriptedExecutor):
        def run(self, request: ExecutionRequest) -> ExecutionResult:
            return ExecutionResult(output="ok \ud800 end")

    attempts = make_runner(tmp_path, Surrogate()).run(plan_jobs(ARMS, TASKS[:1], 1))
    assert all(a.status == "passed" and "\ufffd" in a.output for a in attempts)
    assert len(Journal(tmp_path / "attempts.jsonl").read()) == 2
