"""Baseline accumulation through the cache (#30, #51): runs with an unchanged baseline add their
baseline attempts to the cache (bounded, the oldest dropped); a run that finds a full pool
there makes only its fresh baseline attempts and draws the cached ones beside them, through
the real CLI with the mock executor. The verdict rests on the run's own attempts and states
the bound the cache would have given; the pool's record in the artifact, resume and rejudge;
the cache's runs and the pure draw."""

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
from skill_eval.report.render import render_table
from skill_eval.stats.accumulate import CachedRun, draw
from skill_eval.stats.drift import fresh_counts, saves
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


def test_a_cache_short_of_a_full_pool_is_not_drawn(tmp_path: Path) -> None:
    """One to three earlier runs would save no attempt (the run makes all its own): nothing is
    drawn, the comparison is the run's alone and the summary says why."""
    first = _run(tmp_path, expect=4)
    assert set(_baseline_attempts(first).values()) == {3}
    assert first["baseline_pool"]["smallest"] == 3 and first["baseline_cache"]["hit"] is False
    second = _run(tmp_path, expect=4)
    assert set(_baseline_attempts(second).values()) == {3}
    cache = second["baseline_cache"]
    assert cache["hit"] and cache["attempts_from_cache"] == 0 and cache["runs_from_cache"] == 0
    assert second["baseline_pool"]["verdict_bound"] is None
    assert second["comparison"] == first["comparison"]  # the same outcomes, the same test
    assert "usage" in second and "from_cache" not in second["usage"]["baseline"]
    assert "the cache holds 1 earlier run of it, less than the full pool" in render_table(second)


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


def test_the_decision_uses_the_runs_own_attempts_and_states_the_pools_bound(
    tmp_path: Path, alternating: None
) -> None:
    """Four runs of 2 samples fill the cache (8 attempts a task); the fifth makes one fresh
    baseline attempt a task and draws 7 beside it. Pooled, every task reads 0.5 against the
    candidate's 0.5; the run's own attempts read 1.0 or 0.0. The verdict is the score test's
    on the run's own attempts (1 a task against the candidate's 2), and the summary states the
    bound the pooled tallies would have given beside it."""
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
    for _ in range(4):
        earlier = run_evaluation(plan, log=lambda m: None).artifact
        assert earlier["evaluation"]["verdict"] == "fail" and earlier["evaluation"]["insufficient"]
        assert earlier["baseline_cache"].get("attempts_from_cache", 0) == 0
    fifth = run_evaluation(plan, log=lambda m: None).artifact
    assert set(_baseline_attempts(fifth).values()) == {1}
    assert fifth["baseline_pool"]["smallest"] == 8
    assert set(fifth["comparison"]["differences"].values()) == {0.5, -0.5}
    method = fifth["comparison"]["method"]
    assert method.startswith("Miettinen-Nurminen score test") and "beside a full cache" in method
    own = [(1, 2, 1, 1), (1, 2, 0, 1)] * 8  # this run's baseline: 1.0 or 0.0 a task
    pooled = [(1, 2, 4, 8)] * 16  # with the 7 cached attempts: 0.5 everywhere
    low = fifth["comparison"]["interval"][0]
    assert low == pytest.approx(score_bound(own, 0.025, "lower"), abs=1e-4)
    bound = fifth["baseline_pool"]["verdict_bound"]
    assert bound["bound"] == pytest.approx(score_bound(own, 0.04, "lower"), abs=1e-4)
    assert bound["pooled_bound"] == pytest.approx(score_bound(pooled, 0.04, "lower"), abs=1e-4)
    assert bound["own_attempts"] == 16 and bound["cached_attempts"] == 16 * 7
    assert bound["full_attempts"] == 32
    assert bound["shift"] == pytest.approx(bound["bound"] - bound["pooled_bound"], abs=1e-4)
    assert bound["shift"] < -0.05  # the pool would have made the verdict look better
    guard = fifth["baseline_cache"]["drift_guard"]
    assert guard["agree"] and guard["fresh_rate"] == guard["cached_rate"] == 0.5
    assert fifth["evaluation"]["insufficient"]
    text = render_table(fifth)
    assert "this run made 16 of its 32 baseline attempts and decides on them" in text
    assert f"the verdict's lower bound {bound['bound'] * 100:+.1f} points" in text
    assert f"it would read {bound['pooled_bound'] * 100:+.1f}" in text


def test_the_pool_grows_to_its_limit_then_the_cache_serves_the_baseline(tmp_path: Path) -> None:
    for run in range(1, 5):
        data = _run(tmp_path)
        assert set(_baseline_attempts(data).values()) == {3}
        cache = BaselineCache(tmp_path / "cache")
        (entry,) = cache.info()["entries"]
        cache.close()
        assert entry["attempts"] == 3 * run * 8  # each run's own, kept
    fifth = _run(tmp_path)
    # it ran only its fresh attempts: 40% of its baseline's, at least one a task, spread
    fresh = fresh_counts(TASKS, 3)
    assert sum(fresh.values()) == 9 and set(fresh.values()) == {1, 2}  # 40% of 24, rounded down
    assert _baseline_attempts(fifth) == fresh
    for task in TASKS:
        pool = fifth["baseline_pool"]["tasks"][task]
        assert pool["attempts"] == 12
        assert pool["runs"][0]["attempts"] == fresh[task] and len(pool["runs"]) == 5
    assert fifth["usage"]["baseline"]["from_cache"] == 8 * 12 - sum(fresh.values())
    assert fifth["baseline_cache"]["drift_guard"]["fresh_attempts"] == sum(fresh.values())
    # the cache holds no more than the limit per task: the newest runs' attempts, 12 a task
    cache = BaselineCache(tmp_path / "cache")
    (entry,) = cache.info()["entries"]
    cache.close()
    assert entry["attempts"] == 12 * 8 and entry["runs"] == 5


def test_rejudge_and_resume_keep_the_pool(tmp_path: Path) -> None:
    for _ in range(4):
        _run(tmp_path)
    fifth = _run(tmp_path)
    assert fifth["baseline_cache"]["attempts_from_cache"] > 0
    run_dir = fifth["manifest"]["run_dir"]
    code, out, err = run_cli("rejudge", run_dir)
    assert code == 4, err  # as the run: 8 tasks x 3 samples cannot rule out 10 points
    rejudged = read_json(out.strip())
    assert rejudged["baseline_pool"]["tasks"] == fifth["baseline_pool"]["tasks"]
    assert rejudged["baseline_pool"]["verdict_bound"] == fifth["baseline_pool"]["verdict_bound"]
    assert rejudged["comparison"]["method"] == fifth["comparison"]["method"]
    state = Path(run_dir).parent.parent
    resumed = _run_resume(tmp_path, state, run_dir)
    assert resumed["baseline_pool"]["tasks"] == fifth["baseline_pool"]["tasks"]
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
    ("held", "fresh", "whole", "take"),
    [
        ([], 1, False, ()),
        ([("r2", [P, F, P]), ("r1", [P, P, P])], 1, False, ()),
        ([("r3", [P] * 3), ("r2", [F] * 3), ("r1", [P] * 3)], 1, False, ()),
        ([("r4", [P] * 3), ("r3", [F] * 3), ("r2", [P] * 3), ("r1", [F] * 3)], 1, True,
         (("r4", 3), ("r3", 3), ("r2", 3), ("r1", 2))),
        ([("r4", [P] * 3), ("r3", [F] * 3), ("r2", [P] * 3), ("r1", [F] * 3)], 2, True,
         (("r4", 3), ("r3", 3), ("r2", 3), ("r1", 1))),
        ([("r4", [P] * 3), ("r3", [F] * 3), ("r2", [P] * 3), ("r1", [F] * 3)], 3, False, ()),
        ([("r9", [P] * 12), ("r1", [F] * 3)], 1, True, (("r9", 11),)),
        ([("r2", [P] * 8), ("r1", [F] * 3)], 1, True, (("r2", 8), ("r1", 3))),
        ([("r2", [P] * 8), ("r1", [F] * 2)], 1, False, ()),
        ([("me", [P] * 12), ("r1", [F] * 3)], 1, False, ()),
    ],
)  # fmt: skip
def test_draw_fills_a_full_pool_beside_the_fresh_attempts_or_takes_nothing(
    held: list[tuple[str, list[str]]], fresh: int, whole: bool, take: tuple[tuple[str, int], ...]
) -> None:
    """Only a full pool is drawn (12 a task at 3 samples, the fresh attempts included), and
    only when the fresh attempts are fewer than the samples: elsewhere pooling saves nothing."""
    earlier = [CachedRun(run, {"t": outcomes}) for run, outcomes in held]  # type: ignore[dict-item]
    plan = draw("me", ["t"], earlier, samples=3, limit=12, fresh={"t": fresh})
    assert plan["t"].whole is whole and plan["t"].take == take
    assert plan["t"].own == (fresh if whole else 3)
    assert plan["t"].attempts == sum(n for _, n in take)


@pytest.mark.parametrize(
    ("samples", "least", "counts"),
    [(1, 1, [1] * 5), (2, 1, [1] * 5), (3, 1, [1, 1, 1, 1, 2]), (10, 1, [4] * 5),
     (3, 3, [3] * 5), (4, 2, [2] * 5)],
)  # fmt: skip
def test_fresh_attempts_are_a_share_of_the_baseline_at_least_one_a_task(
    samples: int, least: int, counts: list[int]
) -> None:
    """40% of the baseline's attempts, spread over the tasks, at least one a task (every
    task's drift is seen; pass@k needs k): at 1 sample the cache saves nothing."""
    tasks = [f"t{i}" for i in range(5)]
    fresh = fresh_counts(tasks, samples, least=least)
    assert list(fresh.values()) == counts
    assert saves(fresh, samples) is (sum(counts) < 5 * samples)


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
            samples=3,
            progress=False,
        )
        runs = [run_evaluation(plan, log=lambda m: None).artifact for _ in range(5)]
    finally:
        REGISTRY.reset()
    first = runs[0]
    # the claim was dropped: nothing of the first four runs counts as drawn
    for data in runs[:4]:
        assert all("meta" not in a for r in data["baseline_results"] for a in r["attempts"])
        assert data["baseline_cache"].get("attempts_from_cache", 0) == 0
    first_run = Path(first["manifest"]["run_dir"]).name
    # the first run's attempts were its own, so they were cached and the fifth run drew them
    drawn = [r["run_id"] for r in runs[4]["baseline_pool"]["tasks"]["t0"]["runs"][1:]]
    assert drawn[-1] == first_run and len(drawn) == 4


# -- drift --------------------------------------------------------------------------------------

MARK = "SKILL-MARK-d41"


def test_a_baseline_that_drifted_is_flagged_and_decides_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four runs fill the cache with a baseline that passes every task; then the service
    changes (the fake server's answers to the baseline do), so the fifth run's fresh baseline
    attempts fail where the cached ones passed. It warns on stderr and in the artifact, and
    its verdict rests on its own attempts: the pool, which would have put the bound lower,
    is stated beside it, not used."""
    ids = [f"t{i}" for i in range(10)]
    suite = write_suite(tmp_path / "suite", [contains_task(t, "alpha") for t in ids])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {MARK}")
    args = [
        "run", "--standalone", "--task-suite", str(suite), "--skill-path", str(skill),
        "--state-root", str(tmp_path / "state"), "--executor", "anthropic",
        "--model", "test-model", "--baseline-cache-dir", str(tmp_path / "cache"),
        "--samples", "2",
    ]  # fmt: skip
    rules = [{"system_contains": MARK, "text": "alpha"}]
    with FakeAnthropic(rules=rules, default="alpha as well") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        for _ in range(4):
            code, out, err = run_cli(*args, "-q")
            first = read_json(out.strip())
            assert first["evaluation"]["baseline_pass_rate"] == 1.0, err
        fake.set_rules(rules, default="nothing useful")  # the baseline's answers change
        before = fake.count
        code, out, err = run_cli(*args)
        baseline_requests = [r for r in fake.requests[before:] if MARK not in str(r.body)]
    data = read_json(out.strip())
    artifact.validate(data)
    cache = data["baseline_cache"]
    guard = cache["drift_guard"]
    assert cache["hit"] and cache["pooled"] is True and cache["attempts_from_cache"] == 70
    assert guard["agree"] is False and guard["p"] < guard["level"]
    assert guard["fresh_rate"] == 0.0 and guard["cached_rate"] == 1.0
    assert all(r["models"] == ["test-model"] and r["age_seconds"] >= 0 for r in cache["runs"])
    assert cache["runs_refused"] == []
    # decided on its own baseline: one fresh attempt a task, the drawn ones beside it
    assert len(baseline_requests) == 10
    assert _baseline_attempts(data) == dict.fromkeys(ids, 1)
    assert data["evaluation"]["baseline_pass_rate"] == 0.0
    assert data["evaluation"]["verdict"] == "pass" and code == 0
    bound = data["baseline_pool"]["verdict_bound"]
    assert bound["pooled_bound"] < bound["bound"]  # the stale cache would have hurt it
    assert data["evaluation"]["policy"]["reasoning"].count(f"{bound['bound'] * 100:+.1f}") == 1
    assert "the cached baseline differs from today's" in err
    assert "fresh baseline attempts pass 0% a task, the cache's 100%" in err
    assert "the cached attempts differ from today's" in err  # the summary's cache note
