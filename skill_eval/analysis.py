"""From per-task results to the numbers a verdict rests on: per-task pass@k statistics, the
paired comparison with its interval, the policy's decision, and tasks that cannot tell the
arms apart. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import stats
from .results import TaskResult

POLICIES = ("delta", "non-inferior", "superior")


@dataclass(frozen=True)
class Analysis:
    comparison: stats.Comparison | None
    policy: dict[str, Any] | None  # name, settings, passed, reasoning
    conclusion: str | None
    non_discriminating: tuple[str, ...]
    power_hint: str | None


def task_score(result: TaskResult, pass_k: int) -> float | None:
    """A task's score for pairing: the unbiased pass@k estimate from every sample (so with
    samples == pass_k it is exactly the compatibility 0/1 "some of the first k passed")."""
    s = stats.task_stats(result.outcomes, pass_k)
    if s.n == 0:
        return None
    if s.n == pass_k or s.pass_at_k is None:
        return 1.0 if s.first_k_passed else 0.0
    return s.pass_at_k


def analyse(candidate: Sequence[TaskResult], baseline: Sequence[TaskResult], *, pass_k: int,
            samples: int, policy: str, min_delta: float, margin: float,
            rates: tuple[float | None, float | None, float | None]) -> Analysis:
    """`rates` are the reported (candidate, baseline, delta) over the paired tasks: the
    `delta` policy reads them exactly, the others the paired interval."""
    if not baseline:
        return Analysis(None, None, None, (), None)
    comparison = stats.paired_comparison(
        {r.task_id: task_score(r, pass_k) for r in candidate},
        {r.task_id: task_score(r, pass_k) for r in baseline},
        samples=max(1, samples // pass_k))
    decision = stats.decide(policy, comparison, min_delta=min_delta,  # type: ignore[arg-type]
                            margin=margin)
    passed, reasoning = decision.passed, decision.reasoning
    cand_rate, base_rate, delta = rates
    if policy == "delta" and delta is not None and cand_rate is not None \
            and base_rate is not None:
        # The compatible rule reads the reported delta (first k attempts) exactly.
        passed = delta >= min_delta - 1e-9
        reasoning = (f"delta {delta:+.4g} (candidate {cand_rate:.4g} vs baseline "
                     f"{base_rate:.4g} over {comparison.n_tasks} tasks) "
                     f"{'meets' if passed else 'is below'} the required minimum {min_delta:+g}")
    settings = {"min_delta": min_delta} if policy == "delta" else (
        {"margin": margin} if policy == "non-inferior" else {})
    blind = stats.non_discriminating({r.task_id: r.outcomes for r in candidate},
                                     {r.task_id: r.outcomes for r in baseline})
    hint = None
    if comparison.baseline_rate is not None:
        hint = stats.power_hint(comparison.baseline_rate, 0.1, samples=samples,
                                n_tasks=len(candidate))
    return Analysis(comparison, {"name": policy, **settings, "passed": passed,
                                 "reasoning": reasoning},
                    stats.conclusion(comparison), tuple(blind), hint)
