"""Two evaluation artifacts of the same suite side by side (e.g. last week's run and today's):
which tasks flipped for the candidate, the pass-rate change with a paired interval over the
tasks both runs judged (stats.paired_comparison, B − A), and the cost change.

    diff = compare_artifacts(old, new)
    diff.regressed   # task ids that passed in A and fail in B
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..stats.estimates import Comparison, paired_comparison
from .text import one_line

ARMS = ("candidate", "baseline")


@dataclass(frozen=True)
class TaskChange:
    task_id: str
    before: str  # passed | failed | error | missing
    after: str
    rate_before: float | None  # passes / judged attempts
    rate_after: float | None


@dataclass(frozen=True)
class ArtifactDiff:
    tasks: tuple[TaskChange, ...]
    stats: Comparison | None  # None when no task was judged in both
    cost: dict[str, tuple[float, float]]  # arm -> (A, B) in USD
    verdicts: tuple[str, str]
    warnings: tuple[str, ...]

    def _where(self, before: str, after: str) -> list[str]:
        return [t.task_id for t in self.tasks if t.before == before and t.after == after]

    @property
    def regressed(self) -> list[str]:
        return self._where("passed", "failed")

    @property
    def improved(self) -> list[str]:
        return self._where("failed", "passed")

    @property
    def other_changes(self) -> list[TaskChange]:
        """Changes into or out of error, and tasks only one run has."""
        return [
            t
            for t in self.tasks
            if t.before != t.after and {t.before, t.after} != {"passed", "failed"}
        ]


def _status(result: Mapping[str, Any]) -> str:
    if result.get("status") in ("passed", "failed", "error"):
        return str(result["status"])
    return "passed" if result.get("passed") else "error" if result.get("error") else "failed"


def _rate(result: Mapping[str, Any]) -> float | None:
    if _status(result) == "error":  # not judged: left out of the paired comparison
        return None
    attempts = [a for a in result.get("attempts") or () if isinstance(a, Mapping)]
    if not attempts:
        return float(bool(result.get("passed")))
    judged = [a for a in attempts if a.get("status") != "error"]
    return sum(a.get("status") == "passed" for a in judged) / len(judged) if judged else None


def _results(artifact: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        one_line(r.get("task_id")): r
        for r in artifact.get("candidate_results") or ()
        if isinstance(r, Mapping)
    }


def _cost(artifact: Mapping[str, Any], arm: str) -> float:
    usage = artifact.get("usage")
    entry = usage.get(arm) if isinstance(usage, Mapping) else None
    return float(entry.get("cost_usd") or 0) if isinstance(entry, Mapping) else 0.0


def _suite_warnings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    def suite(artifact: Mapping[str, Any]) -> Mapping[str, Any]:
        found = (artifact.get("manifest") or {}).get("task_suite")
        return found if isinstance(found, Mapping) else {}

    out = []
    if a.get("task_suite_skill_id") != b.get("task_suite_skill_id"):
        out.append(
            f"the suites name different skills ({one_line(a.get('task_suite_skill_id'))}"
            f" vs {one_line(b.get('task_suite_skill_id'))})"
        )
    sha_a, sha_b = suite(a).get("sha256"), suite(b).get("sha256")
    if sha_a and sha_b and sha_a != sha_b:
        out.append("the suite file changed between the runs (sha256 differs): compare with care")
    return out


def compare_artifacts(
    a: Mapping[str, Any], b: Mapping[str, Any], confidence: float = 0.95
) -> ArtifactDiff:
    """How the candidate arm moved from artifact A to artifact B. Raises UsageError when the
    two have no task in common (not two runs of one suite)."""
    before, after = _results(a), _results(b)
    if not set(before) & set(after):
        raise UsageError("the two artifacts have no task in common: not runs of the same suite")
    tasks = tuple(
        TaskChange(
            t,
            _status(before[t]) if t in before else "missing",
            _status(after[t]) if t in after else "missing",
            _rate(before[t]) if t in before else None,
            _rate(after[t]) if t in after else None,
        )
        for t in [*before, *(t for t in after if t not in before)]
    )
    matched = [t for t in tasks if t.rate_before is not None and t.rate_after is not None]
    samples = max([len(r.get("attempts") or ()) for r in (*before.values(), *after.values())] + [1])
    stats = (
        paired_comparison(
            {t.task_id: t.rate_after for t in matched},
            {t.task_id: t.rate_before for t in matched},
            confidence=confidence,
            samples=samples,
        )
        if matched
        else None
    )
    verdicts = tuple(
        one_line((x.get("evaluation") or {}).get("verdict") or "?").upper() for x in (a, b)
    )
    return ArtifactDiff(
        tasks=tasks,
        stats=stats,
        cost={arm: (_cost(a, arm), _cost(b, arm)) for arm in ARMS},
        verdicts=(verdicts[0], verdicts[1]),
        warnings=tuple(_suite_warnings(a, b)),
    )
