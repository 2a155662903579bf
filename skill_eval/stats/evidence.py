"""What a run could and could not show, beside its verdict: whether a run that did not pass
lacked evidence (the interval holds the policy's threshold) or showed the candidate worse;
the smallest regression it did rule out; and, for a run that lacked evidence, the plan that
would settle it (stats/plan.py). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .estimates import Comparison
from .plan import TasksNeeded, plan
from .policy import PolicyDecision

__all__ = ["NO_EVIDENCE", "Evidence", "TasksNeeded", "assess", "of_verdict"]


@dataclass(frozen=True)
class Evidence:
    """`insufficient`: the policy did not pass and did not show the candidate worse either.
    `detectable_margin`: the smallest regression, in points, the run ruled out at the policy's
    level (minus its lower bound; 0 when the bound is above 0); None without an interval
    policy. `tasks_needed`: for an insufficient run, the plan that would settle it."""

    insufficient: bool
    detectable_margin: float | None
    tasks_needed: TasksNeeded | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "insufficient": self.insufficient,
            "detectable_margin": self.detectable_margin,
            "tasks_needed": None if self.tasks_needed is None else self.tasks_needed.to_dict(),
        }


NO_EVIDENCE = Evidence(False, None, None)


def assess(
    decision: PolicyDecision | None, comparison: Comparison | None, pass_k: int = 1
) -> Evidence:
    """The evidence figures of a policy's decision on a comparison. `pass_k` converts the
    comparison's samples (pass@k scores per task) back into attempts per task and arm."""
    if decision is None or comparison is None:
        return Evidence(bool(decision and decision.insufficient), None, None)
    if decision.lower is None:  # nothing compared: a plan names why there is no figure
        test = comparison.paired_test()
        needed = plan(decision, test.n, test.samples, pass_k)
        return Evidence(decision.insufficient, None, needed if decision.insufficient else None)
    margin = round(max(0.0, -decision.lower) * 100, 1)
    if not decision.insufficient:
        return Evidence(False, margin, None)
    test = comparison.paired_test()
    return Evidence(True, margin, plan(decision, test.n, test.samples, pass_k))


def of_verdict(
    verdict: str, reason: str | None, decision: PolicyDecision | None, evidence: Evidence
) -> Evidence:
    """The evidence as the artifact states it: `insufficient` only when the verdict is a fail
    the policy made (not "nothing passed", an error, a skip or --no-baseline's pass rate)."""
    from_policy = verdict == "fail" and decision is not None and reason == decision.reasoning
    if evidence.insufficient and not from_policy:
        return Evidence(False, evidence.detectable_margin, None)
    return evidence
