"""What a paired comparison of a given size can detect before it runs: the smallest lift a
policy's one-sided bound clears 4 times in 5, and the tasks or samples that would bring it to
a target lift. `improve` states it before its first iteration (improve/detect.py).

The suite's pass rates are unknown before anything runs, so the figure is taken where
attempts vary most (a pass chance of one half in both arms): it holds, or does better, for
any suite. The spread of a task's difference is the attempt noise of both arms; with more
than one attempt a task the decision is the t-floor interval (stats/intervals.py), whose
pseudo-task floor is counted; with one, the exact test, approximated by its normal limit.
scripts/bench_improve.py measures how often the confirmation passes at the stated lift.
Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

from .student_t import t_quantile

POWER = 0.8
HARDEST_RATE = 0.5  # the pass chance at which an attempt varies most
MAX_TASKS = 100_000
MAX_SAMPLES = 1000


def standard_error(tasks: int, samples: int, rate: float = HARDEST_RATE) -> float:
    """The standard error of the mean paired difference over `tasks` tasks at `samples`
    attempts a task and arm, both arms at pass chance `rate`."""
    if tasks < 1 or samples < 1:
        raise ValueError(f"tasks and samples must be >= 1, got {tasks}, {samples}")
    per_task = 2 * rate * (1 - rate) / samples
    if samples == 1:
        return math.sqrt(per_task / tasks)
    return math.sqrt(((tasks - 1) * per_task + 2 / samples**2) / ((tasks + 1) * tasks))


def detectable_lift(
    tasks: int, samples: int, alpha: float, threshold: float = 0.0, power: float = POWER
) -> float:
    """The true lift (candidate - baseline, pass-rate units) at which the one-sided bound at
    level `alpha` clears `threshold` with probability `power`."""
    quantile = t_quantile(1 - 2 * alpha, max(1, tasks - 1))
    return threshold + (quantile + NormalDist().inv_cdf(power)) * standard_error(tasks, samples)


def tasks_to_detect(lift: float, samples: int, alpha: float, threshold: float = 0.0) -> int | None:
    """The fewest tasks at `samples` at which `lift` is detected 4 times in 5 (None past
    MAX_TASKS)."""
    return _smallest(1, MAX_TASKS, lambda n: detectable_lift(n, samples, alpha, threshold) <= lift)


def samples_to_detect(lift: float, tasks: int, alpha: float, threshold: float = 0.0) -> int | None:
    """The fewest attempts a task and arm at which these `tasks` detect `lift` 4 times in 5
    (None past MAX_SAMPLES: the pseudo-task floor and the t quantile of few tasks may leave
    it out of reach)."""
    return _smallest(1, MAX_SAMPLES, lambda s: detectable_lift(tasks, s, alpha, threshold) <= lift)


def _smallest(low: int, high: int, enough: Callable[[int], bool]) -> int | None:
    """The smallest m in [low, high] with enough(m), by bisection (detection grows with
    size)."""
    if not enough(high):
        return None
    if enough(low):
        return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


__all__ = [
    "POWER",
    "detectable_lift",
    "samples_to_detect",
    "standard_error",
    "tasks_to_detect",
]
