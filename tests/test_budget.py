"""--budget ATTEMPTS (#30): a first round at every task and arm, then the rest of the budget
where the other arm's first round says a task is flaky (stats/adaptive.py), run in rounds by
the engine (engine/rounds.py): through `evaluate` with a flaky scripted executor, and through
the real CLI with the mock executor; the flags it refuses, one line each."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from skill_eval import Arm, Decision, Execution, Skill, evaluate, load_suite
from skill_eval.core.model import ExecutionRequest, ExecutionResult
from skill_eval.engine import artifact
from skill_eval.executors.mock import MockConfig, MockExecutor
from skill_eval.stats.adaptive import allocate
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite

TASKS = [f"t{i}" for i in range(6)]


class FlakyExecutor(MockExecutor):
    """The mock, answering DONE (a pass) on every task but where `flaky` names the arm and
    task: there it alternates DONE and a miss, call by call."""

    def __init__(self, flaky: set[tuple[str, str]]) -> None:
        super().__init__(MockConfig())
        self.flaky = flaky
        self.calls: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        key = (request.arm, request.task.id)
        with self.lock:
            self.calls[key] += 1
            n = self.calls[key]
        miss = key in self.flaky and n % 2 == 0
        return ExecutionResult(output="nope" if miss else "DONE")


def test_the_rest_of_the_budget_follows_the_other_arms_first_round(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [contains_task(t, "DONE") for t in TASKS]))
    # the candidate is flaky at t0 and t1, the baseline at t2 and t3
    flaky = {("candidate", "t0"), ("candidate", "t1"), ("baseline", "t2"), ("baseline", "t3")}
    executor = FlakyExecutor(flaky)
    arms = [Arm("baseline", Skill("b", "# base"), "base"), Arm("candidate", Skill("c", "# c"))]
    budget = 2 * len(TASKS) * 2 + 60  # a first round of 2, then 60 more
    result = evaluate(
        suite,
        arms,
        executor,
        decision=Decision(budget=budget),
        execution=Execution(concurrency=2),
    )
    spent = result.adaptive
    assert spent is not None and spent.first == 2 and spent.planned == budget
    assert sum(executor.calls.values()) == len(result.attempts) == budget
    first = {
        arm.name: {r.task_id: [a.status for a in r.attempts if a.index < 2] for r in arm.results}
        for arm in result.arms
    }
    assert spent.extra == allocate(first, 60)  # the engine's rounds are the pure rule's
    # crossed over: the candidate samples more where the baseline was flaky, and back
    cand, base = spent.extra["candidate"], spent.extra["baseline"]
    assert cand["t2"] > cand["t0"] and cand["t3"] > cand["t5"]
    assert base["t0"] > base["t2"] and base["t1"] > base["t4"]
    for arm in result.arms:
        for r in arm.results:
            assert [a.index for a in r.attempts] == list(
                range(2 + spent.extra[arm.name][r.task_id])
            )
    # decided at the floor the budget buys per task and arm: 84 / (2 x 6) = 7
    comparison = result.comparison("candidate").analysis.comparison
    assert comparison is not None and "±1/7 pseudo-task" in comparison.method


def _run(tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in TASKS])
    outputs = write_outputs(
        tmp_path / "outputs.yaml",
        {"candidate": dict.fromkeys(TASKS, "DONE"), "baseline": {"t0": "DONE", "t1": "DONE"}},
    )
    skill = write_skill(tmp_path / "skill")
    return run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
        *extra,
    )


def test_a_budget_run_records_its_allocation_and_resumes_it(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path, "--budget", "40")
    assert code == 0, err
    data = read_json(out.strip())
    artifact.validate(data)
    spent = data["adaptive"]
    assert spent["budget"] == 40 and spent["first_round"] == 2 and spent["floor_samples"] == 3
    assert spent["planned_attempts"] == 40
    assert sum(map(sum, (v.values() for v in spent["extra"].values()))) == 40 - 24
    assert data["manifest"]["budget"] == 40 and data["manifest"]["samples"] == 3
    attempts = {
        (arm, r["task_id"]): r["stats"]["n"]
        for arm in ("candidate", "baseline")
        for r in data[f"{arm}_results"]
    }
    assert sum(attempts.values()) == 40
    assert all(n == 2 + spent["extra"][arm][task] for (arm, task), n in attempts.items())
    assert data["evaluation"]["verdict"] == "pass"  # 4 of 6 tasks improved, none regressed
    # a resumed budget run keeps its rounds: nothing runs again
    run_dir = data["manifest"]["run_dir"]
    code, out, err = _run(tmp_path, "--budget", "40", "--resume", run_dir)
    assert code == 0, err
    again = read_json(out.strip())
    assert again["adaptive"] == spent and again["usage"] == data["usage"]
    # another budget is another run
    code, out, err = _run(tmp_path, "--budget", "48", "--resume", run_dir)
    assert code == 2 and "that run used other inputs (changed: budget" in err


def test_budget_is_a_decision_flag_in_run_help() -> None:
    code, out, _ = run_cli("run", "--help")
    assert code == 0
    decision = out[out.index("Decision:") : out.index("Records:")]
    assert "--budget ATTEMPTS" in decision


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--samples", "3"], "--samples fixes the attempts per task and arm and --budget"),
        (["--early-stop"], "--early-stop and --budget both decide how many attempts run"),
        (["--shard", "1/2"], "drop one of --budget and --shard"),
        (["--pass-k", "2"], "--budget places attempts for pass@1 estimates"),
        (["--no-baseline"], "--no-baseline has none"),
        (["--baseline-cache-dir", "cache"], "drop --budget or --baseline-cache-dir"),
        ([], "--budget must be at least 2"),
    ],
)
def test_what_budget_refuses(tmp_path: Path, extra: list[str], message: str) -> None:
    budget = "1" if not extra else "40"
    code, out, err = _run(tmp_path, "--budget", budget, *extra)
    assert code == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err


def test_budget_needs_a_first_round_at_every_task(tmp_path: Path) -> None:
    code, _, err = _run(tmp_path, "--budget", "11")
    assert code == 2
    assert "--budget 11: the suite's 6 tasks need at least 12 attempts" in err


def test_budget_refuses_batch_in_one_line() -> None:
    from skill_eval import RunPlan, UsageError

    with pytest.raises(UsageError, match="--budget runs in two rounds and --batch"):
        RunPlan.from_flags(
            task_suite="suite.yaml",
            standalone=True,
            skill_path="skill",
            executor="anthropic",
            batch=True,
            budget=40,
        )
