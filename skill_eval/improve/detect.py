"""What `improve`'s confirmation can detect, said before the first iteration: the lift at which
the pick, compared with the original on the tasks set apart, passes the policy 4 times in 5
(stats/power.py), and when that is more than 10 points, the suite size or --confirm-samples
at which 10 points would be. A version that is not proposed was not shown better at this
size, which is not the same as not better."""

from __future__ import annotations

import math

from ..stats.policy import POLICY_ALPHA, Policy, threshold_of
from ..stats.power import detectable_lift, samples_to_detect, tasks_to_detect

TARGET = 0.10  # the lift a confirmation should be able to see
NOT_SHOWN = "not shown better at this size"


def _points(lift: float) -> str:
    if lift >= 0:
        return f"about {lift * 100:.0f} points better than the original"
    return f"no more than {-lift * 100:.0f} points worse than the original"


def detectable_lines(
    tasks: int, samples: int, policy: Policy, family: int, holdout: float
) -> list[str]:
    """The log lines: what the confirmation on `tasks` tasks set apart at `samples` attempts
    a task and arm detects under `policy` at its level / `family`, and what would detect
    TARGET when it cannot (the suite size at this `holdout`, which sets a fifth of it apart
    at 0.4)."""
    if policy not in POLICY_ALPHA or tasks < 1:
        return []
    alpha = POLICY_ALPHA[policy] / max(1, family)
    theta = threshold_of(policy, None)
    lift = detectable_lift(tasks, samples, alpha, theta)
    level = f"policy {policy} at its level / {family}"
    what = "no lift up to 100 points" if lift > 1 else f"a version {_points(lift)}"
    lines = [
        f"[confirm] the {tasks} task(s) set apart to confirm the pick, at {samples} "
        f"sample(s) a task, detect {what} 4 times in 5 ({level}; at a 50% pass rate, where "
        "attempts vary most)"
    ]
    if lift > TARGET:
        more = tasks_to_detect(TARGET, samples, alpha, theta)
        deeper = samples_to_detect(TARGET, tasks, alpha, theta)
        ways = []
        if more is not None and holdout > 0:
            suite = math.ceil(2 * more / holdout)
            ways.append(f"a suite of about {suite} tasks ({more} set apart at --holdout {holdout})")
        if deeper is not None:
            ways.append(f"--confirm-samples {deeper}")
        would = " or ".join(ways) if ways else "no size up to the caps"
        lines.append(
            f"[confirm] it cannot detect a version {TARGET * 100:.0f} points better: {would} "
            f"would; a version not proposed here is {NOT_SHOWN}, not shown worse"
        )
    return lines


__all__ = ["NOT_SHOWN", "TARGET", "detectable_lines"]
