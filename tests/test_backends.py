"""The backend seam: a job is plain data that any process can run with `run_attempt`, and the
thread backend maps it as today's pool did."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from skill_eval.backends import create_backend
from skill_eval.backends.threads import ThreadBackend
from skill_eval.core.model import Arm, Skill, Task
from skill_eval.engine.jobs import AttemptJob, run_attempt
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.errors import UsageError
from skill_eval.executors.base import create_executor
from skill_eval.judges.base import JudgeContext, build_judge
from skill_eval.judges.judge_cache import MemoryJudgeCache
from tests.helpers import DEMO_SKILL, DEMO_SUITE

TASKS = [
    Task(id="exact", prompt="say ok", judge={"type": "contains", "expected": ["ok"]}),
    Task(
        id="graded",
        prompt="explain",
        index=1,
        judge={"type": "llm-rubric", "rubric": "clear", "pass_threshold": 0.7},
    ),
    Task(id="missed", prompt="say yes", index=2, judge={"type": "contains", "expected": ["yes"]}),
]
OUTPUTS = {"candidate": {"exact": "ok then", "graded": "because", "missed": "no"}}
ARM = Arm("candidate", Skill("s", "# in memory"), "candidate")


def shipped_jobs(tmp_path: Path) -> tuple[list[AttemptJob], list]:
    """The jobs as the runner ships them (with its run spec), and what the pool made of them."""
    executor = create_executor("mock", {"mock_outputs": OUTPUTS})
    ctx = JudgeContext(suite_dir=tmp_path, cache=MemoryJudgeCache())  # the mock grader
    runner = Runner(
        executor,
        {t.id: build_judge(t.judge) for t in TASKS},
        ctx,
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(concurrency=2),
    )
    jobs = plan_jobs([ARM], TASKS, 1)
    in_threads = runner.run(jobs)
    spec = runner.spec()
    return [AttemptJob(j.arm, j.task, j.index, spec) for j in jobs], in_threads


def same(attempt) -> tuple:
    return (
        attempt.arm,
        attempt.task_id,
        attempt.index,
        attempt.status,
        attempt.output,
        attempt.judge,
        attempt.error,
        attempt.tries,
        attempt.usage,
    )


def test_a_pickled_job_runs_in_another_process_with_the_same_attempt(tmp_path: Path) -> None:
    jobs, in_threads = shipped_jobs(tmp_path)
    assert pickle.loads(pickle.dumps(jobs[0])) == jobs[0]
    with multiprocessing.get_context("spawn").Pool(1) as pool:  # a fresh interpreter
        elsewhere = pool.map(run_attempt, jobs)
    assert all(f.fatal is False and f.attempt is not None for f in elsewhere)
    by_task = {a.task_id: a for a in in_threads}
    assert [same(f.attempt) for f in elsewhere] == [same(by_task[j.task.id]) for j in jobs]
    # The other process rebuilt the executor and the judges, the mock grader included.
    statuses = {f.attempt.task_id: f.attempt.status for f in elsewhere}
    assert statuses == {"exact": "passed", "graded": "passed", "missed": "failed"}
    graded = next(f.attempt for f in elsewhere if f.attempt.task_id == "graded")
    assert graded.judge is not None and graded.judge.score == 0.8


def test_the_thread_backend_keeps_concurrency_bounded_and_stops_when_closed() -> None:
    backend = ThreadBackend(2)
    lock, running, peak, started = threading.Lock(), [0], [0], []
    both = threading.Barrier(2, timeout=60)  # the first two must run at the same time

    def work(n: int) -> int:
        with lock:
            started.append(n)
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        if n < 2 and not both.broken:
            both.wait()
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return n * n

    assert sorted(backend.map(work, range(10))) == [n * n for n in range(10)]
    assert peak[0] == 2
    started.clear()
    results = backend.map(work, range(100))
    next(results)
    results.close()  # the driver stopped reading: nothing new starts
    time.sleep(0.1)
    assert len(started) <= 4  # at most twice the concurrency were ever submitted


def test_an_unknown_backend_names_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="valid runners: ray, threads"):
        create_backend("spark", concurrency=2)


def test_the_ray_backend_without_ray_installed_says_how_to_install_it(tmp_path: Path) -> None:
    # A fresh interpreter in which `import ray` fails, as where the extra is not installed.
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from skill_eval.cli import main\n"
        "sys.argv = ['skill-eval', *sys.argv[1:]]\nmain()"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "run",
            "--standalone",
            "--task-suite",
            str(DEMO_SUITE),
            "--skill-path",
            str(DEMO_SKILL),
            "--mock",
            "--state-root",
            str(tmp_path / "s"),
            "--runner",
            "ray",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "Error: --runner ray needs Ray, which is not installed: pip install 'skill-eval[ray]'"
    )
    assert not (tmp_path / "s").exists()  # nothing ran, nothing was written
