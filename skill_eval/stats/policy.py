"""The comparison policy: from a paired comparison of candidate and baseline to pass or fail,
with the reasoning a reader needs. One epsilon, one list of policies. Pure: no I/O.

delta          pass iff delta >= min_delta (the original tool's rule; the default of
               scripts/evaluate.py). Accepts a 10-point-worse skill in about 15-30% of runs.
no-regression  pass iff the one-sided 96% lower bound of delta is above -margin (default 10
               points): a non-inferiority test at alpha 5%, so a skill 10 points worse passes
               in at most about 5% of runs. The default of `skill-eval run`.
non-inferior   pass iff the 95% interval's low end > -margin (default 5 points).
superior       pass iff the 95% interval's low end > 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .estimates import Comparison, t_floor_interval

Policy = Literal["delta", "no-regression", "non-inferior", "superior"]
POLICIES: tuple[Policy, ...] = ("delta", "no-regression", "non-inferior", "superior")
DEFAULT_POLICY: Policy = "no-regression"
Conclusion = Literal["better", "worse", "inconclusive"]
# The margin a policy uses when --margin is not given.
DEFAULT_MARGIN: dict[str, float] = {"no-regression": 0.10, "non-inferior": 0.05}
# One-sided 96%: the low end of a two-sided 92% interval. At exactly 95% the false-accept rate
# of a 10-point-worse skill sits at 5% and sampling noise puts it above (5.2-5.5% in
# scripts/bench_verdicts.py); 96% keeps it under (3.3-4.7% over bench seeds 0-2).
NO_REGRESSION_CONFIDENCE = 0.92
# Float noise allowance when a policy compares a computed figure with a threshold.
EPS = 1e-9


@dataclass(frozen=True)
class PolicyDecision:
    """Which policy decided, with what settings, and why."""

    name: Policy
    passed: bool
    reasoning: str
    settings: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **self.settings,
            "passed": self.passed,
            "reasoning": self.reasoning,
        }


def margin_of(policy: str, margin: float | None) -> float:
    return margin if margin is not None else DEFAULT_MARGIN.get(policy, 0.05)


def _pts(x: float) -> str:
    return f"{x * 100:+.1f} points"


def decide_policy(
    policy: Policy,
    comparison: Comparison,
    *,
    min_delta: float = 0.0,
    margin: float | None = None,
    samples: int = 1,
    reported: tuple[float | None, float | None, float | None] | None = None,
    alpha: float | None = None,
) -> PolicyDecision:
    """Apply a policy to a comparison. No paired task: fails. `samples` (attempts per task
    score) sets the interval's variance floor for no-regression's one-sided bound.
    `reported`: the artifact's (candidate, baseline, delta) rates over the first k attempts;
    the delta policy reads them exactly, as the original tool did. `alpha`: the one-sided level
    of an --early-stop look (stats/sequential.py) in place of the policy's own."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; valid: {', '.join(POLICIES)}")
    m = margin_of(policy, margin)
    settings = (
        {"min_delta": min_delta}
        if policy == "delta"
        else ({"margin": m} if policy in DEFAULT_MARGIN else {})
    )
    c = comparison
    if c.n_tasks == 0 or c.delta is None or c.interval is None:
        return PolicyDecision(
            policy, False, "no task has a result in both arms, so nothing to compare", settings
        )
    low, high = c.interval
    if alpha is not None and policy in ("non-inferior", "superior"):
        low = t_floor_interval(list(c.differences.values()), 1 - 2 * alpha, samples)[0]
    head = (
        f"delta {_pts(c.delta)} (candidate {c.candidate_rate:.1%} vs baseline "
        f"{c.baseline_rate:.1%} over {c.n_tasks} tasks)"
    )
    ci = f"{c.confidence:.0%} interval [{low * 100:+.1f}, {high * 100:+.1f}] points"
    if alpha is not None:
        ci = (
            f"early-stop one-sided {1 - alpha:.2%} lower bound {low * 100:+.1f} points "
            f"({c.confidence:.0%} interval high end {high * 100:+.1f})"
        )
    cand, base, delta = reported if reported is not None else (None, None, None)
    if policy == "delta" and cand is not None and base is not None and delta is not None:
        head = (
            f"delta {_pts(delta)} (candidate {cand:.1%} vs baseline {base:.1%} over "
            f"{c.n_tasks} tasks)"
        )
        ok = delta >= min_delta - EPS
        why = f"{head} {'meets' if ok else 'is below'} the required minimum {_pts(min_delta)}"
    elif policy == "delta":
        ok = c.delta >= min_delta - EPS
        why = f"{head} {'meets' if ok else 'is below'} the required minimum {_pts(min_delta)}"
    elif policy == "no-regression":
        level = NO_REGRESSION_CONFIDENCE if alpha is None else 1 - 2 * alpha
        bound = t_floor_interval(list(c.differences.values()), level, samples)[0]
        ok = bound > -m + EPS
        named = "96%" if alpha is None else f"{1 - alpha:.2%} (early-stop level)"
        why = f"{head}, one-sided {named} lower bound {_pts(bound)}: " + (
            f"above {_pts(-m)}, so the candidate is not {m * 100:.0f} points worse"
            if ok
            else f"not above {_pts(-m)}, so the candidate may be {m * 100:.0f} points worse or more"
        )
    elif policy == "non-inferior":
        ok = low > -m + EPS
        why = (
            f"{head}, {ci}: the low end is above the margin {_pts(-m)}, so the candidate "
            f"is not worse by more than {m * 100:.1f} points"
            if ok
            else f"{head}, {ci}: the low end does not clear the margin {_pts(-m)}, so the "
            f"candidate may be worse by more than {m * 100:.1f} points"
        )
    else:
        ok = low > EPS
        why = f"{head}, {ci}: " + (
            "the low end is above 0, so the candidate is better"
            if ok
            else "the low end is not above 0, so no improvement is shown"
        )
    return PolicyDecision(policy, ok, why, settings)


def conclusion(comparison: Comparison) -> Conclusion:
    """better / worse when the interval lies entirely above / below 0, else inconclusive."""
    if comparison.interval is None:
        return "inconclusive"
    low, high = comparison.interval
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "inconclusive"
