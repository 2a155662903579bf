"""scripts/bench_score_tests.py, the score tests the README measures against the verdict
contract: its closed-form restricted estimate is the likelihood's maximum, and the script runs
end to end on the contract's designs."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys

import pytest

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


def _loglik(q: float, tally: tuple[int, int, int, int], theta: float) -> float:
    x, a, y, b = tally
    total = 0.0
    for passes, tries, p in ((x, a, q + theta), (y, b, q)):
        if passes:
            total += passes * math.log(p) if p > 0 else -math.inf
        if tries - passes:
            total += (tries - passes) * math.log(1 - p) if p < 1 else -math.inf
    return total


@pytest.mark.parametrize("theta", [-0.3, -0.1, 0.0, 0.2])
@pytest.mark.parametrize("tally", [(0, 3, 12, 12), (3, 3, 12, 12), (1, 3, 7, 12), (2, 2, 0, 2)])
def test_the_closed_form_is_the_likelihood_maximum(bench, tally, theta):
    q = bench.restricted_baseline(tally, theta)
    low, high = max(0.0, -theta), min(1.0, 1.0 - theta)
    assert low - 1e-12 <= q <= high + 1e-12
    grid = [low + (high - low) * i / 4000 for i in range(4001)]
    best = max(grid, key=lambda g: _loglik(g, tally, theta))
    assert _loglik(q, tally, theta) >= _loglik(best, tally, theta) - 1e-9


def test_a_task_both_arms_always_pass_has_variance_under_a_regression_null(bench):
    # 3 of 3 against 12 of 12: under "10 points worse" the candidate's chance is 0.9, not 1.
    assert bench.z_score([(3, 3, 12, 12)] * 20, -0.1, mn=False) == pytest.approx(
        0.1 / (math.sqrt(20 * 0.09 / 3) / 20)
    )


def test_the_script_prints_the_contract_table_for_a_rule():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--reps", "20", "--only", "mn-z"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Miettinen-Nurminen" in done.stdout
    assert "accumulated 3 + 3+9 cached" in done.stdout
    assert "adaptive" not in done.stdout.split("design", 1)[1].split("columns:")[0]
    assert "target: with 9 cached baseline attempts" in done.stdout
