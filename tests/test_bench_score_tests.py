"""scripts/bench_score_tests.py, the figures behind the test a pooled baseline is decided by
(stats/score.py): its rule named mn-ta decides as `skill-eval run` does, and both modes run
end to end."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys

import pytest

from skill_eval.stats.estimates import paired_comparison
from skill_eval.stats.policy import decide_policy
from tests.helpers import REPO

SCRIPT = REPO / "scripts" / "bench_score_tests.py"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("bench_score_tests", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.path.remove(str(SCRIPT.parent))


def test_its_mn_ta_rule_is_the_decision_of_a_run(bench):
    rng = random.Random(3)
    decide = bench.RULES["mn-ta"][1]
    seen = set()
    for _ in range(200):
        tallies = {f"t{i}": (rng.randint(1, 3), 3, rng.randint(4, 12), 12) for i in range(20)}
        comparison = paired_comparison(
            {t: x / a for t, (x, a, _, _) in tallies.items()},
            {t: y / b for t, (_, _, y, b) in tallies.items()},
            samples=3,
            baseline_samples=12,
            tallies=tallies,
        )
        passed = decide_policy("no-regression", comparison).passed
        assert decide(list(tallies.values())) == passed
        seen.add(passed)
    assert seen == {True, False}  # both answers were checked


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_contract_mode_prints_the_table_for_a_rule():
    out = _run("--reps", "20", "--only", "mn-ta")
    assert "t tail on the candidate's attempts" in out
    table = out.split("design", 1)[1].split("columns:")[0]
    assert "cached: 3 + 1-2 fresh a task" in table and "adaptive" not in table
    assert "target: at 3 samples an unchanged skill passes" in out


def test_the_grid_mode_prints_every_shape_for_both_arm_designs():
    out = _run("--grid", "--reps", "3")
    for shape in ("spread", "high", "top", "mixed", "low"):
        assert out.count(f"\n{shape}") == 2
    assert "pooled arms" in out and "t-floor" in out and "mn-ta" in out
