"""The comparison policy: from a paired comparison of candidate and baseline to pass or fail,
with the reasoning a reader needs. One epsilon, one list of policies. Pure: no I/O.

delta          pass iff delta >= min_delta (the original tool's rule; the default of
               scripts/evaluate.py). Accepts a 10-point-worse skill in about 15-30% of runs.
no-regression  pass iff the one-sided 96% lower bound of delta is above -margin (default 10
               points): a non-inferiority test at alpha 4%, so a skill 10 points worse passes
               in at most about 5% of runs. The default of `skill-eval run`.
non-inferior   pass iff the 95% interval's low end > -margin (default 5 points).
superior       pass iff the 95% interval's low end > 0.

An interval policy that does not pass says which of two things happened: the candidate is
shown worse (the bound on the other side lies below the threshold too) or the run cannot tell
(the interval holds the threshold: `outcome` "insufficient"; stats/evidence.py says how much
more data would settle it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .estimates import Comparison
from .intervals import EPS

Policy = Literal["delta", "no-regression", "non-inferior", "superior"]
POLICIES: tuple[Policy, ...] = ("delta", "no-regression", "non-inferior", "superior")
DEFAULT_POLICY: Policy = "no-regression"
Conclusion = Literal["better", "worse", "inconclusive"]
Outcome = Literal["pass", "worse", "insufficient"]
# The margin a policy uses when --margin is not given.
DEFAULT_MARGIN: dict[str, float] = {"no-regression": 0.10, "non-inferior": 0.05}
# One-sided 96%: the low end of a two-sided 92% interval. At exactly 95% the false-accept rate
# of a 10-point-worse skill at 20 tasks x 3 samples sits at 5% and sampling noise puts it
# above (5.2-5.5% in scripts/bench_verdicts.py); 96% keeps it under. The exact test of
# pass/fail suites keeps the same level, so one policy means one confidence.
NO_REGRESSION_CONFIDENCE = 0.92
# The one-sided level of each interval policy's test.
POLICY_ALPHA: dict[str, float] = {
    "no-regression": round((1 - NO_REGRESSION_CONFIDENCE) / 2, 12),  # 0.04, no float noise
    "non-inferior": 0.025,
    "superior": 0.025,
}


@dataclass(frozen=True)
class PolicyDecision:
    """Which policy decided, with what settings, and why. For an interval policy, `lower` and
    `upper` are the one-sided bounds at its level `alpha` and `threshold` what they are held
    against (-margin, or 0 for superior)."""

    name: Policy
    passed: bool
    reasoning: str
    settings: dict[str, float]
    outcome: Outcome = "pass"
    lower: float | None = None
    upper: float | None = None
    threshold: float | None = None
    alpha: float | None = None

    @property
    def insufficient(self) -> bool:
        return self.outcome == "insufficient"

    @property
    def deciding(self) -> tuple[str, float] | None:
        """The one-sided bound the outcome rests on: ("upper", value) for shown worse, else
        ("lower", value); None without bounds (the delta policy, nothing compared)."""
        if self.outcome == "worse" and self.upper is not None:
            return "upper", self.upper
        return None if self.lower is None else ("lower", self.lower)

    def to_dict(self) -> dict[str, Any]:
        decided = self.deciding
        bound = (
            {
                "decided_by": {
                    "bound": decided[0],
                    "value": round(decided[1], 4),
                    "one_sided_level": round(1 - self.alpha, 6),
                    "threshold": self.threshold,
                }
            }
            if decided is not None and self.alpha is not None and self.threshold is not None
            else {}
        )
        return {
            "name": self.name,
            **self.settings,
            "passed": self.passed,
            "reasoning": self.reasoning,
            **bound,
        }


def margin_of(policy: str, margin: float | None) -> float:
    return margin if margin is not None else DEFAULT_MARGIN.get(policy, 0.05)


def threshold_of(policy: str, margin: float | None) -> float:
    """What an interval policy's bound must clear: -margin, or 0 for superior."""
    return 0.0 if policy == "superior" else -margin_of(policy, margin)


def _pts(x: float) -> str:
    return f"{x * 100:+.1f} points"


def _size(x: float) -> str:
    return f"{abs(x) * 100:.0f}" if abs(x * 100 - round(x * 100)) < 1e-9 else f"{abs(x) * 100:.1f}"


def _tasks(n: int) -> str:
    return f"{n} task{'s' if n != 1 else ''}"


def decide_policy(
    policy: Policy,
    comparison: Comparison,
    *,
    min_delta: float = 0.0,
    margin: float | None = None,
    samples: int | None = None,
    reported: tuple[float | None, float | None, float | None] | None = None,
    alpha: float | None = None,
    alpha_note: str = "early-stop level",
) -> PolicyDecision:
    """Apply a policy to a comparison. No paired task: fails. `samples` overrides the attempts
    per task the comparison's scores came from (its pseudo-task floor). `reported`: the
    artifact's (candidate, baseline, delta) rates over the first k attempts; the delta policy
    reads them exactly, as the original tool did. `alpha`: a one-sided level in place of the
    policy's own, e.g. an --early-stop look's (stats/sequential.py) or a family's share
    (stats/family.py); `alpha_note` names it in the reasoning."""
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
            policy,
            False,
            "no task has a result in both arms, so nothing to compare",
            settings,
            "insufficient",
        )
    head = (
        f"delta {_pts(c.delta)} (candidate {c.candidate_rate:.1%} vs baseline "
        f"{c.baseline_rate:.1%} over {_tasks(c.n_tasks)})"
    )
    if policy == "delta":
        return _decide_delta(c, head, min_delta, reported, settings)
    a = POLICY_ALPHA[policy] if alpha is None else alpha
    theta = threshold_of(policy, margin)
    if c.differences:
        test = c.paired_test(samples)
        low, high = test.bound(a, "lower"), test.bound(a, "upper")
        above, below = test.clears(theta, a, "lower"), test.clears(theta, a, "upper")
    else:  # a comparison built by hand: its interval (at the policy's level) is all there is
        low, high = c.interval
        above, below = low > theta + EPS, high < theta - EPS
    outcome: Outcome = "pass" if above else ("worse" if below else "insufficient")
    why = _reasoning(policy, outcome, head, m, low, high, c, alpha, a, alpha_note)
    return PolicyDecision(policy, above, why, settings, outcome, low, high, theta, a)


def _decide_delta(
    c: Comparison,
    head: str,
    min_delta: float,
    reported: tuple[float | None, float | None, float | None] | None,
    settings: dict[str, float],
) -> PolicyDecision:
    delta = c.delta if c.delta is not None else 0.0
    cand, base, rdelta = reported if reported is not None else (None, None, None)
    if cand is not None and base is not None and rdelta is not None:
        head = (
            f"delta {_pts(rdelta)} (candidate {cand:.1%} vs baseline {base:.1%} over "
            f"{_tasks(c.n_tasks)})"
        )
        delta = rdelta
    ok = delta >= min_delta - EPS
    why = f"{head} {'meets' if ok else 'is below'} the required minimum {_pts(min_delta)}"
    return PolicyDecision("delta", ok, why, settings, "pass" if ok else "worse")


def _reasoning(
    policy: Policy,
    outcome: Outcome,
    head: str,
    m: float,
    low: float,
    high: float,
    c: Comparison,
    alpha: float | None,
    a: float,
    alpha_note: str,
) -> str:
    """One sentence per outcome; never "may be worse" (a run that cannot tell says so)."""
    n = _tasks(c.n_tasks)
    if policy == "no-regression":
        named = "96%" if alpha is None else f"{1 - a:.2%} ({alpha_note})"
        if outcome == "pass":
            return (
                f"{head}, one-sided {named} lower bound {_pts(low)}: above {_pts(-m)}, "
                f"so the candidate is not {_size(m)} points worse"
            )
        if outcome == "worse":
            return (
                f"{head}, one-sided {named} upper bound {_pts(high)}: below {_pts(-m)}, "
                f"so the candidate is more than {_size(m)} points worse"
            )
        return (
            f"{head}, one-sided {named} lower bound {_pts(low)}: not above {_pts(-m)}, "
            f"so {n} cannot rule out a {_size(m)}-point regression"
        )
    level = f"{1 - 2 * a:.0%}" if alpha is None else f"{1 - 2 * a:.2%} ({alpha_note})"
    ci = f"{level} interval [{low * 100:+.1f}, {high * 100:+.1f}] points"
    if policy == "non-inferior":
        if outcome == "pass":
            return (
                f"{head}, {ci}: the low end is above the margin {_pts(-m)}, so the candidate "
                f"is not worse by more than {m * 100:.1f} points"
            )
        if outcome == "worse":
            return (
                f"{head}, {ci}: the high end is below the margin {_pts(-m)}, so the "
                f"candidate is worse by more than {m * 100:.1f} points"
            )
        return (
            f"{head}, {ci}: the low end does not clear the margin {_pts(-m)}, so {n} cannot "
            f"rule out a regression of more than {m * 100:.1f} points"
        )
    if outcome == "pass":
        return f"{head}, {ci}: the low end is above 0, so the candidate is better"
    if outcome == "worse":
        return f"{head}, {ci}: the high end is below 0, so the candidate is worse"
    return f"{head}, {ci}: the low end is not above 0, so {n} cannot show an improvement"


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
