"""Verdict rules: pure functions from pass rates and run health to pass/fail/skipped/error.

Order matters: a skipped candidate is never run; a run with too many errors says nothing
about the skill; a broken suite (the original skill passes under 20%) is an error to fix
first; a run where no task passed in either arm fails (the suite or its judges may be
broken); then the comparison policy decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ..core.model import Attempt, JudgeResult

VerdictName = Literal["pass", "fail", "skipped", "error"]
BaselineKind = Literal["original", "skill", "none", "absent"]
BROKEN_SUITE_RATE = 0.2


@dataclass(frozen=True)
class Verdict:
    verdict: VerdictName
    reason: str | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)


def fmt_rate(rate: float) -> str:
    return f"{round(rate, 4):g}"


def skip_verdict(candidate_score: float | None, eval_threshold: float | None) -> Verdict | None:
    """`skipped` when the discriminator's score is below --eval-threshold (pipeline mode)."""
    if eval_threshold is None or candidate_score is None:
        return None
    if candidate_score < eval_threshold:
        return Verdict(
            "skipped",
            f"candidate score {fmt_rate(candidate_score)} < "
            f"eval threshold {fmt_rate(eval_threshold)}",
        )
    return None


@dataclass(frozen=True)
class RunHealth:
    """Errors in the arm that had the most of them (each arm must be healthy on its own)."""

    attempts: int
    errors: int
    max_error_rate: float
    arm: str | None = None

    @property
    def error_rate(self) -> float:
        return self.errors / self.attempts if self.attempts else 0.0

    @classmethod
    def worst_arm(cls, attempts: Iterable[Attempt], max_error_rate: float) -> RunHealth:
        counts: dict[str, list[int]] = {}
        for attempt in attempts:
            seen = counts.setdefault(attempt.arm, [0, 0])
            seen[0] += 1
            seen[1] += attempt.status == "error"
        if not counts:
            return cls(0, 0, max_error_rate)
        arm, (total, errors) = max(counts.items(), key=lambda kv: (kv[1][1] / kv[1][0], kv[0]))
        return cls(total, errors, max_error_rate, arm)


NOTHING_PASSED = "no task passed in either arm: the suite or its judges may be broken"


def decide_verdict(
    *,
    candidate_rate: float | None,
    baseline_rate: float | None,
    baseline_kind: BaselineKind,
    health: RunHealth,
    min_pass_rate: float,
    policy_passed: bool | None,
    policy_reason: str,
    first_failures: Sequence[str] = (),
) -> Verdict:
    """The verdict of a run that executed. `policy_passed` is the comparison policy's
    decision (None when there is no baseline); `first_failures` the first failing judge
    message of each arm, quoted when nothing passed."""
    warnings: list[str] = []
    if health.attempts and health.error_rate > health.max_error_rate:
        where = f" of the {health.arm}" if health.arm else ""
        return Verdict(
            "error",
            f"{health.errors} of {health.attempts} attempts{where} ended in "
            "error "
            f"({fmt_rate(health.error_rate)} > max error rate "
            f"{fmt_rate(health.max_error_rate)}); results say nothing "
            "about the skill",
        )
    if candidate_rate is None:
        return Verdict(
            "error", "no task of the candidate could be evaluated (every attempt ended in error)"
        )
    if baseline_kind in ("original", "skill"):
        if baseline_rate is None:
            return Verdict(
                "error", "no task of the baseline could be evaluated (every attempt ended in error)"
            )
        if baseline_rate < BROKEN_SUITE_RATE:
            return Verdict(
                "error", f"baseline pass rate {fmt_rate(baseline_rate)} < {BROKEN_SUITE_RATE}"
            )
    elif (
        baseline_kind == "none" and baseline_rate is not None and baseline_rate < BROKEN_SUITE_RATE
    ):
        warnings.append(
            f"no-skill baseline pass rate {fmt_rate(baseline_rate)} < "
            f"{BROKEN_SUITE_RATE}: expected without a skill, but check that the "
            "tasks are passable at all"
        )
    if candidate_rate == 0 and (baseline_rate is None or baseline_rate == 0):
        # 0 of N against 0 of N is delta 0, which the delta policy would pass: but nothing
        # was measured, and a typo in the suite must not look like an accepted skill.
        quoted = "; ".join(first_failures)
        return Verdict("fail", NOTHING_PASSED + (f" ({quoted})" if quoted else ""), tuple(warnings))
    if baseline_kind == "absent" or policy_passed is None:
        ok = candidate_rate >= min_pass_rate
        reason = (
            f"pass rate {fmt_rate(candidate_rate)} "
            f"{'>=' if ok else '<'} min pass rate {fmt_rate(min_pass_rate)}"
        )
        return Verdict("pass" if ok else "fail", None if ok else reason, tuple(warnings))
    return Verdict(
        "pass" if policy_passed else "fail",
        None if policy_passed else policy_reason,
        tuple(warnings),
    )


def worst_case(
    attempts: Iterable[Attempt],
    errored: Mapping[str, Sequence[str]],
    arms: tuple[str, str] = ("candidate", "baseline"),
) -> list[Attempt]:
    """The attempts as the excluded tasks could at worst have gone for the candidate: a task
    in error in the candidate only counts as a candidate failure, one in error in the
    baseline only as a baseline pass (tasks in error in both arms stay out). `errored` is
    keyed "candidate", "baseline", "both"; `arms` names the attempts' candidate and baseline
    arms."""
    cand_only, base_only = set(errored.get("candidate", ())), set(errored.get("baseline", ()))
    out = []
    for a in attempts:
        if a.status == "error" and a.arm == arms[0] and a.task_id in cand_only:
            a = replace(a, status="failed", judge=JudgeResult(False, 0.0, "worst case"))
        elif a.status == "error" and a.arm == arms[1] and a.task_id in base_only:
            a = replace(a, status="passed", judge=JudgeResult(True, 1.0, "worst case"))
        out.append(a)
    return out


def guard_excluded(
    verdict: Verdict, errored: Mapping[str, Sequence[str]], decide_worst: Callable[[], Verdict]
) -> Verdict:
    """`error` when a pass rests on tasks left out for errors: counted at worst for the
    candidate (see worst_case), the verdict `decide_worst` returns would not be a pass."""
    cand, base = len(errored.get("candidate", ())), len(errored.get("baseline", ()))
    if verdict.verdict != "pass" or not (cand or base):
        return verdict
    worst = decide_worst()
    if worst.verdict == "pass":
        return verdict
    return Verdict(
        "error",
        f"tasks left out for errors could change the verdict: {cand} in "
        f"error in the candidate only, {base} in the baseline only; "
        f"counted as candidate failures and baseline passes the verdict "
        f"would be {worst.verdict}" + (f" ({worst.reason})" if worst.reason else ""),
        verdict.warnings,
    )
