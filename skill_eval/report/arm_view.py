"""The arms every human-readable report shows, as one ordered list: a two-arm run's candidate
and baseline (the candidate alone without a baseline), or every arm of a run with --arm in the
run's order. Each arm has its name, its role in the verdict, its label and skill, its pass rate,
its result on each task, its usage, and for an --arm run the figures of the side-by-side table
(report/arm_table.py). The two-arm report is the case N = 2 of it.

The verdict always compares two of them: the `candidate` (an --arm run's first compared arm)
with the `baseline` (its reference arm); the artifact's top-level fields hold that pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .arm_table import figures
from .arms import arm_skills
from .junit import rate_text
from .text import one_line
from .triggers import task_ids as trigger_task_ids

Result = Mapping[str, Any]
Role = Literal["candidate", "baseline", "arm"]  # the verdict's pair, or another --arm arm
PAIR: tuple[Role, Role] = ("candidate", "baseline")


def status(result: Result) -> str:
    if result.get("status") in ("passed", "failed", "error"):
        return str(result["status"])
    return "passed" if result.get("passed") else "error" if result.get("error") else "failed"


def counts(result: Result) -> tuple[int, int, int]:
    """(passes, judged attempts, attempts in error) of one arm on one task."""
    if result.get("attempts"):
        statuses = [a.get("status") for a in result["attempts"]]
        errors = statuses.count("error")
        return statuses.count("passed"), len(statuses) - errors, errors
    if status(result) == "error":  # an older artifact without attempts
        return 0, 0, 1
    return int(bool(result.get("passed"))), 1, 0


def count_cell(result: Result | None) -> str:
    if result is None:
        return "-"
    passes, judged, errors = counts(result)
    if judged == 0:
        return f"{errors} err"
    return f"{passes}/{judged}" + (f" +{errors} err" if errors else "")


@dataclass(frozen=True)
class ArmView:
    """One arm as the reports show it."""

    name: str  # "candidate", "baseline", or an --arm arm's name
    role: Role
    reference: bool  # the arm the others are compared with
    label: str  # "baseline skill", "installed on mock"; "" when the artifact names none
    skill: str  # its skill as named (report/arms.py), "" for none
    rate: float | None
    rate_text: str  # "0.4000 (2/5)": the pass rate and the tasks passed of those it covers
    results: Mapping[str, Result]  # task id -> the arm's result on it
    usage: Mapping[str, Any] | None
    figures: Mapping[str, str] = field(default_factory=dict)  # --arm: arm_table.ROWS cells
    fired_rate: float | None = None
    triggers: str = ""  # TPR, FPR and accuracy (trigger tasks), or ""

    @property
    def heading(self) -> str:
        return f"{self.name} (reference)" if self.reference else self.name

    @property
    def described(self) -> str:
        """Its label and skill in one phrase (`baseline skill my-skill`), or ""."""
        return f"{self.label} {self.skill}".strip()

    def cell(self, task_id: str) -> str:
        """Its pass count on a task, `2/3 +1 err`, or `-` without a result."""
        return count_cell(self.results.get(task_id))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def by_task(results: Any) -> dict[str, Result]:
    return {
        one_line(r.get("task_id")): r
        for r in (results if isinstance(results, list | tuple) else ())
        if isinstance(r, Mapping)
    }


def _tasks_passed(results: Iterable[Result]) -> str:
    judged = [r for r in results if status(r) != "error"]
    return f"{sum(bool(r.get('passed')) for r in judged)}/{len(judged)}"


def _judged(
    artifact: Mapping[str, Any], mine: Mapping[str, Result], theirs: Mapping[str, Result]
) -> set[str]:
    """The tasks an arm's rate covers: with a reference, those judged in both arms; a mixed
    suite's ordinary tasks alone."""
    both = set(mine) & set(theirs) if theirs else set(mine)
    judged = {
        t
        for t in both
        if status(mine[t]) != "error" and (not theirs or status(theirs[t]) != "error")
    }
    triggers = trigger_task_ids(artifact)
    if set(mine) - triggers:
        judged -= triggers
    return judged


def _rate_text(rate: Any, results: Mapping[str, Result], judged: set[str]) -> str:
    shown = rate_text(rate) if rate is not None else "n/a"
    if results:
        shown += f" ({_tasks_passed(r for t, r in results.items() if t in judged)})"
    return shown


def paired(artifact: Mapping[str, Any]) -> bool:
    """Whether the run compared its candidate with a baseline."""
    ev = _mapping(artifact.get("evaluation"))
    listed = _mapping(_mapping(artifact.get("manifest")).get("arms"))
    return (
        bool(artifact.get("baseline_results"))
        or listed.get("baseline") is not None
        or ev.get("baseline_pass_rate") is not None
    )


def read_arms(artifact: Mapping[str, Any]) -> list[ArmView]:
    """The arms of `artifact` in order (see the module), read defensively."""
    listed = [a for a in _mapping(artifact.get("arms")).get("arms") or () if isinstance(a, Mapping)]
    return _listed(artifact, listed) if listed else _two(artifact)


def _two(artifact: Mapping[str, Any]) -> list[ArmView]:
    ev = _mapping(artifact.get("evaluation"))
    usage = _mapping(artifact.get("usage"))
    skills = arm_skills(artifact)
    cand = by_task(artifact.get("candidate_results"))
    base = by_task(artifact.get("baseline_results"))
    judged = _judged(artifact, cand, base)
    arms = []
    rates = (ev.get("execution_pass_rate"), ev.get("baseline_pass_rate"))
    for role, results, rate in list(zip(PAIR, (cand, base), rates, strict=True))[
        : 2 if paired(artifact) else 1
    ]:
        label, skill = skills.get(role, ("", ""))
        arms.append(
            ArmView(
                name=role,
                role=role,
                reference=role == "baseline",
                label=label,
                skill=skill,
                rate=_number(rate),
                rate_text=_rate_text(rate, results, judged),
                results=results,
                usage=u if isinstance(u := usage.get(role), Mapping) else None,
            )
        )
    return arms


def _listed(artifact: Mapping[str, Any], listed: Sequence[Mapping[str, Any]]) -> list[ArmView]:
    """An --arm run's arms: the manifest names which two the verdict compares."""
    manifest = _mapping(_mapping(artifact.get("manifest")).get("arms"))
    roles = {str(_mapping(manifest.get(role)).get("name")): role for role in PAIR}
    skills = arm_skills(artifact)
    section = _mapping(artifact.get("arms"))
    comparisons = {
        str(c.get("arm")): c for c in section.get("comparisons") or () if isinstance(c, Mapping)
    }
    tables = {one_line(a.get("name") or "?"): by_task(a.get("results")) for a in listed}
    reference = next((one_line(a.get("name")) for a in listed if a.get("reference")), "")
    arms = []
    for entry in listed:
        name = one_line(entry.get("name") or "?")
        role: Role = roles.get(str(entry.get("name")), "arm")
        cells, fired_rate, triggers = figures(entry, comparisons.get(str(entry.get("name"))))
        results = tables[name]
        # the reference's rate covers the tasks judged in it and the verdict's candidate
        other = tables.get(_named(roles, "candidate")) if name == reference else None
        theirs = other if other is not None else tables.get(reference, {})
        label, skill = skills.get(role, (str(entry.get("label") or ""), _skill_name(entry)))
        arms.append(
            ArmView(
                name=name,
                role=role,
                reference=bool(entry.get("reference")),
                label=label,
                skill=skill,
                rate=_number(entry.get("pass_rate")),
                rate_text=_rate_text(
                    entry.get("pass_rate"), results, _judged(artifact, results, theirs)
                ),
                results=results,
                usage=u if isinstance(u := entry.get("usage"), Mapping) else None,
                figures=cells,
                fired_rate=fired_rate,
                triggers=triggers,
            )
        )
    return arms


def _named(roles: Mapping[str, str], role: str) -> str:
    """The name of the arm playing `role`, or ""."""
    return next((one_line(name) for name, r in roles.items() if r == role), "")


def _skill_name(entry: Mapping[str, Any]) -> str:
    return str(_mapping(entry.get("skill")).get("name") or "")


__all__ = ["PAIR", "ArmView", "Role", "count_cell", "counts", "paired", "read_arms", "status"]
