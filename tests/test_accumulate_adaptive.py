"""The pure functions round 2 wires into the engine: pooling cached baseline attempts
(stats/accumulate.py) and allocating a budget's attempts (stats/adaptive.py)."""

from __future__ import annotations

import itertools
import math

import pytest

from skill_eval.core.model import Status
from skill_eval.stats.accumulate import CachedRun, pool_baseline, pool_limit, pooled_score
from skill_eval.stats.adaptive import allocate, first_round, neyman_weight
from skill_eval.stats.estimates import paired_comparison
from skill_eval.stats.policy import decide_policy

P: Status = "passed"
F: Status = "failed"
E: Status = "error"


def test_pool_takes_own_attempts_then_newest_runs_up_to_the_limit() -> None:
    own = {"a": [P, F, P], "b": [E, F, F]}
    earlier = [
        CachedRun("run-3", {"a": [P, P, P], "b": [P, E, P], "z": [P]}),
        CachedRun("run-2", {"a": [F, F, F], "b": [F, F, F]}),
        CachedRun("now", {"a": [F] * 9}),  # this run's own id: never counted twice
        CachedRun("run-1", {"a": [P, P, P], "b": [P, P, P]}),
    ]
    pooled = pool_baseline("now", own, earlier, pool_limit(3))  # 12 per task
    assert pooled.limit == 12
    assert pooled.outcomes["a"] == (P, F, P, P, P, P, F, F, F, P, P, P)
    assert pooled.sources["a"] == (("now", 3), ("run-3", 3), ("run-2", 3), ("run-1", 3))
    assert pooled.attempts("b") == 2 + 2 + 3 + 3  # errors are dropped everywhere
    assert "z" not in pooled.outcomes  # a task this run does not have adds nothing
    tight = pool_baseline("now", own, earlier, 5)
    assert tight.outcomes["a"] == (P, F, P, P, P) and tight.sources["a"][-1] == ("run-3", 2)
    data = pooled.to_dict()
    assert data["limit_per_task"] == 12
    assert data["tasks"]["b"]["runs"][0] == {"run_id": "now", "attempts": 2}
    with pytest.raises(ValueError):
        pool_baseline("now", own, earlier, 0)


def test_pooled_scores_feed_the_usual_decision() -> None:
    assert pooled_score([P, F, P, P], 1) == 0.75
    assert pooled_score([P, F, F, F], 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2)
    assert pooled_score([E, E], 1) is None
    cand = {f"t{i}": pooled_score([P, P, F], 1) for i in range(20)}
    base = {f"t{i}": pooled_score([P, P, F] * 4, 1) for i in range(20)}
    comparison = paired_comparison(cand, base, samples=3, baseline_samples=12)
    assert "±1/3 pseudo-task variance floor (baseline pooled: 12 attempts a task)" in (
        comparison.method
    )
    assert decide_policy("no-regression", comparison).passed  # 20 tasks, no difference


def test_first_round_and_budget() -> None:
    assert first_round(120, 20) == 2
    assert first_round(40, 20) == 1
    with pytest.raises(ValueError, match="under one attempt per task and arm"):
        first_round(39, 20)


def test_neyman_weight_is_the_expected_spread_of_one_attempt() -> None:
    # B(c+1, n-c+1) / B(c+1/2, n-c+1/2): 1/pi with no data; flaky outcomes weigh most
    assert neyman_weight(0, 0) == pytest.approx(1 / math.pi)
    assert neyman_weight(1, 2) > neyman_weight(0, 2) == pytest.approx(neyman_weight(2, 2))
    assert neyman_weight(0, 10) < neyman_weight(0, 2)


def _first(cand: dict[str, list[Status]], base: dict[str, list[Status]]) -> dict:
    return {"candidate": cand, "baseline": base}


def test_allocate_spends_the_budget_where_the_other_arm_was_flaky() -> None:
    cand = {"flaky": [P, F], "stable": [P, P], "dead": [F, F]}
    base = {"flaky": [F, P], "stable": [P, P], "dead": [F, F]}
    extra = allocate(_first(cand, base), 20)
    assert sum(extra["candidate"].values()) == 10 and sum(extra["baseline"].values()) == 10
    assert extra["candidate"]["flaky"] > extra["candidate"]["stable"]
    assert extra["candidate"]["stable"] == extra["candidate"]["dead"]
    assert allocate(_first(cand, base), 0) == {
        "candidate": dict.fromkeys(cand, 0),
        "baseline": dict.fromkeys(cand, 0),
    }
    with pytest.raises(ValueError, match="lacks arm"):
        allocate({"candidate": cand}, 4)


def test_an_arms_attempts_never_depend_on_its_own_outcomes() -> None:
    """What keeps every pass rate unbiased: whatever the candidate's first round was, the
    candidate's extra attempts are the same (they follow the baseline's), and vice versa."""
    tasks = ["a", "b", "c"]
    base = {"a": [P, F], "b": [P, P], "c": [F, F]}
    seen = set()
    for outcomes in itertools.product([P, F], repeat=6):
        cand = {t: list(outcomes[2 * i : 2 * i + 2]) for i, t in enumerate(tasks)}
        seen.add(tuple(allocate(_first(cand, base), 13)["candidate"].values()))
    assert len(seen) == 1


def test_pooled_rate_stays_unbiased_under_cross_allocation() -> None:
    """Exact expectation over every first round of both arms at one task: the candidate's
    pass rate over all its attempts averages to its pass chance (it would not if its own
    results decided how many more it got)."""
    p, q = 0.7, 0.4
    expected = 0.0
    for cand in itertools.product([P, F], repeat=2):
        for base in itertools.product([P, F], repeat=2):
            chance = math.prod(p if s == P else 1 - p for s in cand) * math.prod(
                q if s == P else 1 - q for s in base
            )
            first = _first({"t": list(cand), "other": [P, F]}, {"t": list(base), "other": [P, F]})
            more = allocate(first, 8)["candidate"]["t"]
            # E[passes / attempts | this first round] with `more` fresh attempts at chance p
            expected += chance * (cand.count(P) + more * p) / (2 + more)
    assert expected == pytest.approx(p)
