"""Trigger figures from judged attempts: per query, the trigger rate over its samples; per arm,
the true-positive rate (should-trigger queries), the false-positive rate (should-not ones) and
the accuracy, each with an interval; candidate vs baseline, the paired difference of accuracy
(and of TPR and FPR) with the run's --policy decision. Pure: no I/O.

Queries are the unit of replication, as tasks are for pass rates: a rate is the mean of the
per-query rates, and its interval is stats.t_floor_interval over them (clipped to [0, 1]), the
interval the paired comparison uses. Attempts in error count nowhere but in `errors`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...core.model import Attempt, JudgeResult, Task
from ...stats.estimates import paired_comparison, t_floor_interval
from ...stats.policy import Policy, conclusion, decide_policy

CONFIDENCE = 0.95
# With no arm to compare with, each class of queries is held to its own bar (references/
# triggers.md): the should-trigger queries must fire in at least MIN_TPR of their samples
# (query-averaged), the should-not ones in at most MAX_FPR. A skill whose description never
# fires fails the first, one that fires on everything the second.
MIN_TPR = 0.5
MAX_FPR = 0.5


def triggered_of(judge: JudgeResult | None) -> bool | None:
    """Whether a judged trigger attempt triggered; None when it was not judged as one."""
    if judge is None or judge.error is not None:
        return None
    value = judge.data.get("triggered") if judge.data else None
    return value if isinstance(value, bool) else None


def trigger_tasks(tasks: Iterable[Task]) -> list[Task]:
    return [t for t in tasks if t.is_trigger_task]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def query_figures(task: Task, attempts: Sequence[Attempt]) -> dict[str, Any]:
    """One query in one arm: judged samples, how many triggered, errors, the trigger rate."""
    mine = [a for a in attempts if a.task_id == task.id]
    seen = [t for a in mine if a.status != "error" and (t := triggered_of(a.judge)) is not None]
    rate = sum(seen) / len(seen) if seen else None
    return {
        "id": task.id,
        "query": task.query,
        "should_trigger": task.should_trigger,
        "samples": len(seen),
        "triggered": sum(seen),
        "errors": sum(a.status == "error" for a in mine),
        "trigger_rate": _r(rate),
    }


def rate_figure(values: Sequence[float], samples: int) -> dict[str, Any]:
    """The mean of per-query rates with its interval; None figures when there is none."""
    if not values:
        return {"rate": None, "interval": None, "queries": 0}
    low, high = t_floor_interval(values, CONFIDENCE, samples)
    return {
        "rate": _r(math.fsum(values) / len(values)),
        "interval": [_r(max(0.0, low)), _r(min(1.0, high))],
        "queries": len(values),
    }


def correct_rates(queries: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Query id -> share of its samples judged right (triggered == should_trigger)."""
    out: dict[str, float | None] = {}
    for q in queries:
        rate = q["trigger_rate"]
        out[q["id"]] = None if rate is None else (rate if q["should_trigger"] else 1 - rate)
    return out


def arm_figures(tasks: Sequence[Task], attempts: Sequence[Attempt], samples: int) -> dict[str, Any]:
    queries = [query_figures(t, attempts) for t in tasks]
    positives = [
        q["trigger_rate"] for q in queries if q["should_trigger"] and q["trigger_rate"] is not None
    ]
    negatives = [
        q["trigger_rate"]
        for q in queries
        if not q["should_trigger"] and q["trigger_rate"] is not None
    ]
    correct = [r for r in correct_rates(queries).values() if r is not None]
    return {
        "tpr": rate_figure(positives, samples),
        "fpr": rate_figure(negatives, samples),
        "accuracy": rate_figure(correct, samples),
        "errors": sum(q["errors"] for q in queries),
        "queries": queries,
    }


def _paired(
    cand: Mapping[str, float | None], base: Mapping[str, float | None], samples: int
) -> dict[str, Any]:
    c = paired_comparison(cand, base, samples=samples, confidence=CONFIDENCE)
    return {
        "delta": _r(c.delta),
        "interval": None if c.interval is None else [_r(x) for x in c.interval],
        "queries": c.n_tasks,
    }


def worst_case_rates(
    queries: Sequence[Mapping[str, Any]], *, against: bool
) -> dict[str, float | None]:
    """Query id -> share of its samples right, errored samples counted wrong (`against`) or
    right (not `against`); None for a query with no sample at all."""
    out: dict[str, float | None] = {}
    for q in queries:
        total = q["samples"] + q["errors"]
        right = q["triggered"] if q["should_trigger"] else q["samples"] - q["triggered"]
        out[q["id"]] = None if total == 0 else (right + (0 if against else q["errors"])) / total
    return out


def compare(
    cand: Mapping[str, Any],
    base: Mapping[str, Any],
    *,
    policy: Policy,
    min_delta: float,
    margin: float | None,
    samples: int,
) -> dict[str, Any]:
    """Candidate vs baseline, paired query by query: accuracy (decided by `policy`), TPR and
    FPR (a positive FPR delta means the candidate triggers more where it should not)."""
    c_acc, b_acc = correct_rates(cand["queries"]), correct_rates(base["queries"])
    comparison = paired_comparison(c_acc, b_acc, samples=samples, confidence=CONFIDENCE)
    decision = decide_policy(
        policy, comparison, min_delta=min_delta, margin=margin, samples=samples
    )
    if decision.passed and (cand["errors"] or base["errors"]):
        # errors never profit a pass: decide again with every errored sample counted wrong
        # for the candidate and right for the baseline (conductor.guard_excluded's rule)
        worst = paired_comparison(
            worst_case_rates(cand["queries"], against=True),
            worst_case_rates(base["queries"], against=False),
            samples=samples,
            confidence=CONFIDENCE,
        )
        flipped = decide_policy(policy, worst, min_delta=min_delta, margin=margin, samples=samples)
        if not flipped.passed:
            decision = replace(
                decision,
                passed=False,
                reasoning=(
                    f"{cand['errors']} candidate and {base['errors']} baseline trigger attempts "
                    f"ended in error, and counted against the candidate they fail it: "
                    f"{flipped.reasoning}"
                ),
            )

    def rates(arm: Mapping[str, Any], should: bool) -> dict[str, float | None]:
        return {q["id"]: q["trigger_rate"] for q in arm["queries"] if q["should_trigger"] is should}

    return {
        "accuracy": comparison.to_dict(),
        "tpr": _paired(rates(cand, True), rates(base, True), samples),
        "fpr": _paired(rates(cand, False), rates(base, False), samples),
        "policy": decision.to_dict(),
        "conclusion": conclusion(comparison),
    }


def _rate_shown(figure: Mapping[str, Any]) -> str:
    interval = figure.get("interval")
    shown = f"{figure['rate']:.2f}"
    return shown + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def classes(figures: Mapping[str, Any]) -> dict[str, Any]:
    """One arm's trigger figures against each class's bar (MIN_TPR, MAX_FPR): whether each
    class passes (None: the set has no query of that class), and why, in one sentence."""
    tpr, fpr = figures["tpr"], figures["fpr"]
    fires = None if tpr["rate"] is None else tpr["rate"] >= MIN_TPR
    quiet = None if fpr["rate"] is None else fpr["rate"] <= MAX_FPR
    parts = []
    if fires is not None:
        parts.append(
            f"should-trigger queries fired at {_rate_shown(tpr)}, "
            f"{'at least' if fires else 'under'} the {MIN_TPR:g} needed"
        )
    if quiet is not None:
        parts.append(
            f"should-not queries fired at {_rate_shown(fpr)}, "
            f"{'at most' if quiet else 'over'} the {MAX_FPR:g} allowed"
        )
    missing = [
        text for text, seen in (("should-trigger", fires), ("should-not", quiet)) if seen is None
    ]
    if missing:
        parts.append(f"no {' or '.join(missing)} query was judged: not measured")
    judged = [v for v in (fires, quiet) if v is not None]
    return {
        "min_tpr": MIN_TPR,
        "max_fpr": MAX_FPR,
        "tpr_passed": fires,
        "fpr_passed": quiet,
        "passed": all(judged) if judged else None,
        "reasoning": "; ".join(parts),
    }


def section(
    tasks: Sequence[Task],
    attempts: Sequence[Attempt],
    arms: Sequence[str],
    *,
    samples: int,
    policy: Policy,
    min_delta: float,
    margin: float | None,
) -> dict[str, Any] | None:
    """The artifact's `triggers` section; None when the suite has no trigger task. `arms`
    are the arm names that ran, candidate first."""
    chosen = trigger_tasks(tasks)
    if not chosen:
        return None
    by_arm = {
        name: arm_figures(chosen, [a for a in attempts if a.arm == name], samples) for name in arms
    }
    out: dict[str, Any] = {
        "queries": len(chosen),
        "should_trigger": sum(bool(t.should_trigger) for t in chosen),
        "samples": samples,
        "confidence": CONFIDENCE,
        "interval_method": "t interval over queries with a ±1/samples "
        "pseudo-query variance floor, clipped to [0, 1]",
        "arms": by_arm,
        "comparison": None,
    }
    if len(arms) == 1:  # nothing to compare with: each class against its own bar
        out["classes"] = classes(by_arm[arms[0]])
    if len(arms) > 1:
        out["comparison"] = compare(
            by_arm[arms[0]],
            by_arm[arms[1]],
            policy=policy,
            min_delta=min_delta,
            margin=margin,
            samples=samples,
        )
    return out


def failures(data: Mapping[str, Any]) -> list[str]:
    """One line per query an arm got wrong in any sample, naming the query."""
    lines = []
    for arm, figures in (data.get("arms") or {}).items():
        for q in figures["queries"]:
            rate = q["trigger_rate"]
            if rate is None:
                continue
            wrong = rate < 1 if q["should_trigger"] else rate > 0
            if wrong:
                want = "should trigger" if q["should_trigger"] else "should not trigger"
                lines.append(
                    f"{arm}: query {q['query']!r} {want}; triggered in "
                    f"{q['triggered']} of {q['samples']} samples"
                )
    return lines
