"""Baseline accumulation through the cache (#30): runs with an unchanged baseline add their
baseline attempts to the cache (bounded, the oldest dropped), and each later run pools them
with its own, through the real CLI with the mock executor; the pool's decision, its record in
the artifact, resume and rejudge; the cache's runs and the pure draw."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import Attempt, ExecutionRequest, ExecutionResult, JudgeResult
from skill_eval.engine import artifact
from skill_eval.engine.cache import BaselineCache
from skill_eval.engine.conductor import run_evaluation
from skill_eval.executors.base import REGISTRY, ExecutorSpec, register_executor
from skill_eval.executors.mock import SPEC as MOCK
from skill_eval.executors.mock import MockConfig, MockExecutor
from skill_eval.plan.run_plan import RunPlan
from skill_eval.stats.accumulate import CachedRun, draw
from skill_eval.stats.drift import DRIFT_TOLERANCE, allowance, fresh_counts
from skill_eval.stats.score import score_bound
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite

TASKS = [f"t{i}" for i in range(8)]


def _run(tmp_path: Path, *extra: str, expect: int | None = None) -> dict[str, Any]:
    """An unchanged skill (both arms pass every task) at 8 tasks x 3 samples, sharing one
    baseline cache; a new state root each time, as separate CI jobs would have."""
    suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in TASKS])
    outputs = write_outputs(tmp_path / "outputs.yaml", dict.fromkeys(TASKS, "DONE"))
    skill = write_skill(tmp_path / "skill")
    state = tmp_path / f"state{len(list(tmp_path.glob('state*')))}"
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(state),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--baseline-cache-dir",
        str(tmp_path / "cache"),
        "--samples",
        "3",
        "-q",
        *extra,
    )
    assert out.strip(), err
    if expect is not None:
        assert code == expect, err
    data = read_json(out.strip())
    artifact.validate(data)
    return data


def _baseline_attempts(data: dict[str, Any]) -> dict[str, int]:
    return {r["task_id"]: r["stats"]["n"] for r in data["baseline_results"]}


def test_a_second_run_pools_the_cached_baseline(tmp_path: Path) -> None:
    first = _run(tmp_path, expect=4)
    assert set(_baseline_attempts(first).values()) == {3}
    assert first["baseline_pool"]["smallest"] == 3 and first["baseline_cache"]["hit"] is False

    second = _run(tmp_path)
    assert set(_baseline_attempts(second).values()) == {6}  # more than its own --samples
    cache = second["baseline_cache"]
    assert cache["hit"] and cache["attempts_from_cache"] == 8 * 3 and cache["runs_from_cache"] == 1
    pool = second["baseline_pool"]
    first_run = Path(first["manifest"]["run_dir"]).name
    this_run = Path(second["manifest"]["run_dir"]).name
    assert pool["run_id"] == this_run and pool["limit_per_task"] == 12
    assert pool["tasks"]["t0"] == {
        "attempts": 6,
        "runs": [{"run_id": this_run, "attempts": 3}, {"run_id": first_run, "attempts": 3}],
    }
    assert "(baseline pooled: 6 attempts a task)" in second["comparison"]["method"]
    assert second["comparison"]["method"].startswith("Miettinen-Nurminen score test")
    # each drawn attempt says where it came from; this run paid only for its own
    drawn = [a for r in second["baseline_results"] for a in r["attempts"] if a.get("meta")]
    assert len(drawn) == 24 and {a["index"] for a in drawn} == {3, 4, 5}
    assert {a["meta"]["cached_from"]["run_id"] for a in drawn} == {first_run}
    assert {a["meta"]["cached_from"]["index"] for a in drawn} == {0, 1, 2}
    assert second["usage"]["baseline"]["from_cache"] == 24


class AlternatingExecutor(MockExecutor):
    """Answers DONE (a pass) or a miss by how often it was asked for the arm and task before,
    across runs: the candidate passes every other call (0.5 a task in each run of 2 samples);
    the baseline passes its first two calls of even tasks and its next two of odd ones, so
    each run alone sees half the tasks at 1.0 and half at 0.0, and two runs pooled see 0.5
    everywhere: the spread a pooled baseline averages out."""

    calls: Counter[tuple[str, str]] = Counter()

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        key = (request.arm, request.task.id)
        with LOCK:
            n = self.calls[key]
            self.calls[key] += 1
        if request.arm == "candidate":
            passed = n % 2 == 0
        else:
            passed = (n // 2 + int(request.task.id[1:])) % 2 == 0
        return ExecutionResult(output="DONE" if passed else "nope")


LOCK = threading.Lock()


@pytest.fixture
def alternating() -> Iterator[None]:
    AlternatingExecutor.calls = Counter()
    register_executor(ExecutorSpec("alternating", MockConfig, MOCK.schema, AlternatingExecutor))
    yield
    REGISTRY.reset()


def test_the_decision_uses_the_pool(tmp_path: Path, alternating: None) -> None:
    """Run alone, the baseline's noise leaves 16 tasks unable to rule out a 10-point
    regression; pooled with the run before, it is averaged out (every task 0.5 against 0.5)
    and the decision is the score test's on every baseline attempt of both runs: its bound
    is the one the pooled tallies give, not the one of this run's own attempts. (16 tasks at 2
    samples still cannot rule out 10 points: the planning figure says how many would, 4 times in
    5, the drift allowance of the pool included.)"""
    ids = [f"t{i}" for i in range(16)]
    suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in ids])
    plan = RunPlan.from_flags(
        task_suite=str(suite),
        state_root=str(tmp_path / "state"),
        standalone=True,
        skill_path=str(write_skill(tmp_path / "skill")),
        executor="alternating",
        baseline_cache_dir=str(tmp_path / "cache"),
        samples=2,
        progress=False,
    )
    first = run_evaluation(plan, log=lambda m: None).artifact
    assert first["evaluation"]["verdict"] == "fail" and first["evaluation"]["insufficient"]
    second = run_evaluation(plan, log=lambda m: None).artifact
    assert set(_baseline_attempts(second).values()) == {4}
    assert set(second["comparison"]["differences"].values()) == {0.0}  # 0.5 vs 0.5 a task
    assert second["comparison"]["method"].startswith("Miettinen-Nurminen score test")
    pooled = [(1, 2, 2, 4)] * 16
    own = [(1, 2, 2, 2), (1, 2, 0, 2)] * 8  # this run's baseline alone: 1.0 or 0.0 a task
    low = second["comparison"]["interval"][0]
    # moved out by the drift allowance: 6 points times the cached share of each pool (half)
    assert low == pytest.approx(score_bound(pooled, 0.025, "lower") - 0.03, abs=1e-4)
    assert abs(low - score_bound(own, 0.025, "lower")) > 1e-3
    guard = second["baseline_cache"]["drift_guard"]
    assert guard["agree"] and guard["fresh_rate"] == guard["cached_rate"] == 0.5
    assert second["evaluation"]["insufficient"]
    # far more than the 100-140 tasks at which this even result would just clear: a rerun
    # settles 4 times in 5 only when the true delta lies clear of the threshold plus the pool's
    # drift allowance, which the bound keeps however many tasks (stats/plan.py)
    assert 2600 <= second["evaluation"]["tasks_needed"]["tasks"] <= 3600  # 3072 at 6 points


def test_the_pool_grows_to_its_limit_then_the_cache_serves_the_baseline(tmp_path: Path) -> None:
    sizes = [_baseline_attempts(_run(tmp_path))["t0"] for _ in range(4)]
    assert sizes == [3, 6, 9, 12]
    fifth = _run(tmp_path)
    assert set(_baseline_attempts(fifth).values()) == {12}
    # it ran only the fresh attempts the drift guard reads: 40% of its baseline's, spread
    fresh = fresh_counts(TASKS, 3)
    assert sum(fresh.values()) == 9 and set(fresh.values()) == {1, 2}  # 40% of 24, rounded down
    for task in TASKS:
        pool = fifth["baseline_pool"]["tasks"][task]
        assert pool["runs"][0]["attempts"] == fresh[task] and len(pool["runs"]) == 5
    assert fifth["usage"]["baseline"]["from_cache"] == 8 * 12 - sum(fresh.values())
    assert fifth["baseline_cache"]["drift_guard"]["fresh_attempts"] == sum(fresh.values())
    # the cache holds no more than the limit per task: the newest runs' attempts, 12 a task
    cache = BaselineCache(tmp_path / "cache")
    (entry,) = cache.info()["entries"]
    cache.close()
    assert entry["attempts"] == 12 * 8 and entry["runs"] == 5


def test_rejudge_and_resume_keep_the_pool(tmp_path: Path) -> None:
    _run(tmp_path)
    second = _run(tmp_path)
    run_dir = second["manifest"]["run_dir"]
    code, out, err = run_cli("rejudge", run_dir)
    assert code == 4, err  # as the run: 8 tasks x 3 samples cannot rule out 10 points
    rejudged = read_json(out.strip())
    assert rejudged["baseline_pool"]["tasks"] == second["baseline_pool"]["tasks"]
    assert rejudged["comparison"]["method"] == second["comparison"]["method"]
    state = Path(run_dir).parent.parent
    resumed = _run_resume(tmp_path, state, run_dir)
    assert resumed["baseline_pool"]["tasks"] == second["baseline_pool"]["tasks"]
    assert resumed["baseline_cache"]["attempts_from_cache"] == 0  # it holds its pool already


def _run_resume(tmp_path: Path, state: Path, run_dir: str) -> dict[str, Any]:
    suite = tmp_path / "suite" / "task_suite.yaml"
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(tmp_path / "skill"),
        "--state-root",
        str(state),
        "--mock",
        "--mock-outputs",
        str(tmp_path / "outputs.yaml"),
        "--baseline-cache-dir",
        str(tmp_path / "cache"),
        "--samples",
        "3",
        "-q",
        "--resume",
        run_dir,
    )
    assert code == 4, err
    return read_json(out.strip())


# -- the cache's runs ---------------------------------------------------------------------------


def attempt(task_id: str, index: int = 0, status: str = "passed") -> Attempt:
    judge = JudgeResult(status == "passed", 1.0 if status == "passed" else 0.0)
    return Attempt("baseline", task_id, index, status, "out", judge, None, 5)  # type: ignore[arg-type]


def test_runs_add_bounded_and_the_oldest_go(tmp_path: Path) -> None:
    now = [1000.0]
    cache = BaselineCache(tmp_path / "c", ttl_seconds=100, clock=lambda: now[0])
    for n, run in enumerate(("r1", "r2", "r3")):
        now[0] += 10
        stored = cache.put("k", [attempt("a", i) for i in range(2)], run_id=run, limit=5)
        assert stored == 2
        hit = cache.get("k")
        assert hit is not None and [r.run_id for r in hit.runs] == ["r3", "r2", "r1"][2 - n :]
    hit = cache.get("k")
    assert hit is not None
    # 5 a task at most: r1 keeps one attempt, the newest runs all of theirs
    assert [len(r.attempts) for r in hit.runs] == [2, 2, 1]
    assert hit.created_at == 1030.0
    # a resumed run replaces its own record (and keeps when it first stored)
    assert cache.put("k", [attempt("a", i) for i in range(3)], run_id="r3", limit=5) == 3
    hit = cache.get("k")
    assert hit is not None and [(r.run_id, len(r.attempts)) for r in hit.runs] == [
        ("r3", 3),
        ("r2", 2),
    ]
    assert hit.runs[0].created_at == 1030.0
    # each run expires on its own
    now[0] = 1020.0 + 100
    hit = cache.get("k")
    assert hit is not None and [r.run_id for r in hit.runs] == ["r3"]
    now[0] = 1030.0 + 100
    assert cache.get("k") is None


def test_an_entry_written_before_runs_accumulated_is_one_run(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path / "c")
    old = attempt("a").to_dict()
    cache._cache.set("k", {"created_at": cache.clock(), "attempts": [old]})
    hit = cache.get("k")
    assert hit is not None and len(hit.runs) == 1 and hit.runs[0].run_id.startswith("cached-")
    assert cache.put("k", [attempt("a", 0, "failed")], run_id="new", limit=4) == 1
    hit = cache.get("k")
    assert hit is not None
    assert [r.run_id for r in hit.runs][0] == "new" and len(hit.attempts) == 2


# -- the pure draw ------------------------------------------------------------------------------


P, F = "passed", "failed"


@pytest.mark.parametrize(
    ("held", "whole", "take"),
    [
        ([], False, ()),
        ([("r2", [P, F, P]), ("r1", [P, P, P])], False, (("r2", 3), ("r1", 3))),
        ([("r3", [P] * 3), ("r2", [F] * 3), ("r1", [P] * 3)], False, (("r3", 3), ("r2", 3),
                                                                      ("r1", 3))),
        ([("r4", [P] * 3), ("r3", [F] * 3), ("r2", [P] * 3), ("r1", [F] * 3)], True,
         (("r4", 3), ("r3", 3), ("r2", 3), ("r1", 3))),
        ([("r9", [P] * 12), ("r1", [F] * 3)], True, (("r9", 12),)),
        ([("r2", [P] * 8), ("r1", [F] * 3)], False, (("r2", 8), ("r1", 1))),
        ([("me", [P] * 12), ("r1", [F] * 3)], False, (("r1", 3),)),
    ],
)  # fmt: skip
def test_draw_fills_the_pool_or_tops_up_the_runs_own(
    held: list[tuple[str, list[str]]], whole: bool, take: tuple[tuple[str, int], ...]
) -> None:
    earlier = [CachedRun(run, {"t": outcomes}) for run, outcomes in held]  # type: ignore[dict-item]
    plan = draw("me", ["t"], earlier, samples=3, limit=12)
    assert plan["t"].whole is whole and plan["t"].take == take
    assert plan["t"].attempts == sum(n for _, n in take)


class ClaimingExecutor(MockExecutor):
    """The mock, whose results claim to have been drawn from another run's cache."""

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        result = super().run(request)
        return ExecutionResult(output="DONE", meta={**result.meta, "cached_from": {"run_id": "x"}})


def test_only_the_cache_marks_an_attempt_as_drawn(tmp_path: Path) -> None:
    register_executor(ExecutorSpec("claiming", MockConfig, MOCK.schema, ClaimingExecutor))
    try:
        suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in TASKS[:2]])
        plan = RunPlan.from_flags(
            task_suite=str(suite),
            state_root=str(tmp_path / "state"),
            standalone=True,
            skill_path=str(write_skill(tmp_path / "skill")),
            executor="claiming",
            baseline_cache_dir=str(tmp_path / "cache"),
            progress=False,
        )
        first = run_evaluation(plan, log=lambda m: None).artifact
        second = run_evaluation(plan, log=lambda m: None).artifact
    finally:
        REGISTRY.reset()
    assert all("meta" not in a for r in first["baseline_results"] for a in r["attempts"])
    first_run = Path(first["manifest"]["run_dir"]).name
    # the first run's attempts were its own, so they were cached and the second run drew them
    assert second["baseline_pool"]["tasks"]["t0"]["runs"][1] == {"run_id": first_run, "attempts": 1}


# -- the drift guard ----------------------------------------------------------------------------

MARK = "SKILL-MARK-d41"


@pytest.mark.parametrize(
    ("shares", "moved"),
    [([], 0.0), ([0.0, 0.0], 0.0), ([0.5] * 16, 0.03), ([1.0, 0.75] * 10, 0.0525)],
)
def test_the_allowance_covers_a_5_point_drift_with_room(shares: list[float], moved: float) -> None:
    """6 points times the mean cached share of the pools: above the bias a cache 5 points off
    today puts into the mean difference (5 points times the same share), so a 5-point drift
    is absorbed with a point of room, not at the edge where the pooled score test runs at its
    own level (scripts/bench_verdicts.py --only drift)."""
    assert DRIFT_TOLERANCE == 0.06
    assert allowance(shares) == pytest.approx(moved)
    bias = 0.05 * (sum(shares) / len(shares) if shares else 0.0)
    assert allowance(shares) == pytest.approx(1.2 * bias)  # a fifth above the bias


def test_a_baseline_that_drifted_is_not_pooled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run's baseline passes every task; between runs the service changes (the fake
    server's answers to the baseline do), so the second run's fresh baseline attempts fail
    where the cached ones passed: it does not pool, says so on stderr and in the artifact,
    and decides on its own baseline, which it then runs in full."""
    ids = [f"t{i}" for i in range(10)]
    suite = write_suite(tmp_path / "suite", [contains_task(t, "alpha") for t in ids])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {MARK}")
    args = [
        "run", "--standalone", "--task-suite", str(suite), "--skill-path", str(skill),
        "--state-root", str(tmp_path / "state"), "--executor", "anthropic",
        "--model", "test-model", "--baseline-cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    rules = [{"system_contains": MARK, "text": "alpha"}]
    with FakeAnthropic(rules=rules, default="alpha as well") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(*args, "-q")
        first = read_json(out.strip())
        assert first["evaluation"]["baseline_pass_rate"] == 1.0, err
        fake.set_rules(rules, default="nothing useful")  # the baseline's answers change
        before = fake.count
        code, out, err = run_cli(*args)
        baseline_requests = [r for r in fake.requests[before:] if MARK not in str(r.body)]
    data = read_json(out.strip())
    artifact.validate(data)
    first_run = Path(first["manifest"]["run_dir"]).name
    cache = data["baseline_cache"]
    guard = cache["drift_guard"]
    assert cache["hit"] and cache["pooled"] is False and cache["attempts_from_cache"] == 0
    assert guard["agree"] is False and guard["p"] < guard["level"]
    assert guard["fresh_rate"] == 0.0 and guard["cached_rate"] == 1.0
    assert cache["runs"][0]["run_id"] == first_run and cache["runs"][0]["models"] == ["test-model"]
    assert cache["runs"][0]["age_seconds"] >= 0
    assert [r["run_id"] for r in cache["runs_refused"]] == [first_run]
    assert cache["runs_refused"][0]["reason"].startswith("drift")
    # decided on its own baseline, made in full: one attempt a task, none drawn
    assert len(baseline_requests) == 10
    assert _baseline_attempts(data) == dict.fromkeys(ids, 1)
    assert all("meta" not in a or "cached_from" not in a["meta"]
               for r in data["baseline_results"] for a in r["attempts"])  # fmt: skip
    assert data["evaluation"]["baseline_pass_rate"] == 0.0
    assert "moved out" not in data["comparison"]["method"]
    pool = data["baseline_pool"]
    assert pool["pooled"] is False and pool["drift_guard"] == guard and pool["drift_allowance"] == 0
    assert pool["runs_refused"] == cache["runs_refused"]
    assert "baseline not pooled" in err and "decided on this run's own baseline" in err
    assert "fresh baseline attempts pass 0% a task" in err and first_run in err
