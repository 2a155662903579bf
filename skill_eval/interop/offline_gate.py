"""The offline pull-request gate: "the changed skills' evals are sound", proved with no model
and no key. For each skill the change touched (interop/judged_change.py), the evals it is
judged by must load as their author wrote them, every deterministic judge must pass its task's
reference (where there is one) and fail an empty output, and the skill must lint; model-graded
checks and trigger queries are listed as not checked offline. It says nothing of whether the
skill is any good: no model answered, so it gives no pass or fail about the skill.

Code the evals name (python judges, pytest fixtures) runs only in the jail. One skill whose
evals cannot be read fails that skill; the others are still checked.

    report = offline_gate(["."], changed_since="origin/main", workdir=tmp)
    report.exit_code   # 0 sound, 1 not sound / removed / not judged, 3 could not check
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import ExecutorError, Problem, SkillEvalError, SuiteError
from ..inputs.evalsets.folder import find_skill_evals
from ..inputs.judge_checks import check_judges
from ..inputs.source_checks import judge_types, python_problems
from ..inputs.suite import load_suite
from ..jail import JailKind, JailUnavailable
from ..jail.providers import chosen
from ..judges.base import is_deterministic
from ..skills import lint_skill
from .judged_change import EvalsFrom, JudgedSkill, judge_change
from .skill_finder import find_skills

Outcome = Literal["sound", "not sound", "evals removed", "not judged", "not checked"]
EXIT_SOUND, EXIT_NOT_SOUND, EXIT_NOT_CHECKED = 0, 1, 3


@dataclass
class SkillCheck:
    """What the gate found of one changed skill's evals."""

    skill: JudgedSkill
    outcome: Outcome = "sound"
    problems: list[str] = field(default_factory=list)  # "<eval>: <reason>", one line each
    tasks: int = 0
    checked: list[str] = field(default_factory=list)  # deterministic judges run offline
    model_graded: list[str] = field(default_factory=list)  # not checked offline
    triggers: int = 0  # trigger queries: they load; whether the skill triggers needs a model
    unchecked: list[str] = field(default_factory=list)  # why a check could not run here
    notes: list[str] = field(default_factory=list)  # what was not carried over; lint warnings
    ran_code: bool = False  # a python or pytest judge of its evals ran (in the jail)


@dataclass(frozen=True)
class GateReport:
    skills: tuple[SkillCheck, ...]
    allow_unjudged: bool = False
    ref: str | None = None
    evals_from: EvalsFrom = "head"
    jail_note: str | None = None  # what `auto` chose and why, when it passed a provider over

    @property
    def unjudged_fails(self) -> bool:
        """A changed skill with no evals fails when a change is judged, unless allowed."""
        return self.ref is not None and not self.allow_unjudged

    @property
    def exit_code(self) -> int:
        outcomes = {s.outcome for s in self.skills}
        failing = {"not sound", "evals removed"} | (
            {"not judged"} if self.unjudged_fails else set()
        )
        if outcomes & failing:
            return EXIT_NOT_SOUND
        return EXIT_NOT_CHECKED if "not checked" in outcomes else EXIT_SOUND


def _problem_line(problem: Problem, shown: str) -> str:
    """One problem as `<eval>: <field>: <reason>`, located by task id, not by the line of a
    suite the reader wrote (an evals.json has no such line)."""
    if problem.task_id is not None:
        where = f"eval {problem.task_id!r}" + (f" {problem.field}" if problem.field else "")
        return f"{where}: {problem.message}"
    field_ = f" {problem.field}" if problem.field else ""
    return f"{shown}{field_}: {problem.message}"


def _suites(check: SkillCheck) -> list[tuple[str, Path]]:
    """(shown name, what load_suite reads) of the suite the skill's evals make: its
    task_suite.yaml, or its `evals/` folder read as its eval sets are (in memory); the
    eval files it does not read are noted on `check`."""
    found = find_skill_evals(check.skill.judged_dir)
    check.notes += list(found.unread_lines())
    if found.suite is not None:
        return [("evals/task_suite.yaml", found.suite)]
    shown = " + ".join(
        f"evals/{p.name}" for p in (found.evals_json, found.trigger_set) if p is not None
    )
    return [(shown, check.skill.judged_dir)]


def _check_suite(check: SkillCheck, shown: str, path: Path, jail: JailKind) -> None:
    try:
        suite = load_suite(path)
    except SuiteError as exc:
        check.problems += [_problem_line(p, shown) for p in exc.problems] or [str(exc)]
        return
    if suite.source is not None:
        check.notes += [
            f"{shown}: not carried over: {line}" for line in suite.source.not_carried_over
        ]
        check.notes += [f"{shown}: {warning}" for warning in suite.source.warnings]
    check.tasks += len(suite.tasks)
    check.problems += [_problem_line(p, shown) for p in python_problems(suite, str(path))]
    if check.problems:
        return
    check.triggers += sum(t.is_trigger_task for t in suite.tasks)
    check.model_graded += [
        t.id for t in suite.tasks if not t.is_trigger_task and not is_deterministic(t.judge)
    ]
    checks = check_judges(suite, shown, jail=jail)
    skipped = {c.task.id for c in checks.tasks if c.empty is None and not c.load}
    ran = [c.task for c in checks.tasks if c.task.id not in skipped]
    check.checked += [t.id for t in ran]
    check.ran_code |= any(set(judge_types(t.judge)) & {"python", "pytest"} for t in ran)
    check.problems += [_problem_line(p, shown) for p in checks.errors]
    for warning in checks.warnings:  # an empty output passed: the judge tells nothing apart
        if warning.task_id in skipped:
            check.unchecked.append(_problem_line(warning, shown))
        else:
            check.problems.append(_problem_line(warning, shown))


def _lint(check: SkillCheck) -> None:
    """The skill as the change has it must lint: errors are problems, warnings notes."""
    try:
        findings = lint_skill(check.skill.folder.path)
    except SkillEvalError as exc:
        check.problems.append(f"SKILL.md: {exc}")
        return
    for finding in findings:
        where = f"SKILL.md:{finding.line}" if finding.line > 0 else "SKILL.md"
        line = f"{where}: {finding.message}"
        (check.problems if finding.severity == "error" else check.notes).append(line)


def check_skill(skill: JudgedSkill, jail: JailKind = "auto") -> SkillCheck:
    """The gate's findings on one changed skill (never raises for the skill's own faults)."""
    check = SkillCheck(skill)
    if skill.state == "removed":
        check.outcome = "evals removed"
        check.problems.append(
            "this change removed or emptied the skill's evals (the base branch has them)"
        )
        return check
    if skill.state == "unjudged":
        check.outcome = "not judged"  # eval files it holds that are not read say why
        check.notes += list(find_skill_evals(skill.judged_dir).unread_lines())
        return check
    _lint(check)
    try:
        for shown, path in _suites(check):
            _check_suite(check, shown, path, jail)
    except ExecutorError as exc:  # no jail to run the evals' code in: a fault of this machine
        # (what is missing; the gate has no --no-jail to offer)
        check.unchecked.append(exc.why if isinstance(exc, JailUnavailable) else str(exc))
    except (SkillEvalError, OSError) as exc:
        check.problems.append(f"its evals cannot be read: {exc}")
    if check.tasks == 0 and not check.problems and not check.unchecked:
        emptied = " (this change emptied them)" if skill.base_had_evals else ""
        check.problems.append(f"its evals hold no task{emptied}")
    for found in (check.problems, check.unchecked, check.notes):
        found[:] = [_relative(line, skill) for line in found]
    if check.problems:
        check.outcome = "not sound"
    elif check.unchecked:
        check.outcome = "not checked"
    return check


def _relative(line: str, skill: JudgedSkill) -> str:
    """A reader's message with the folder it read (a temporary copy, with --evals-from base)
    named as the skill is: `skills/x/evals/evals.json`, not `/tmp/.../x/evals/evals.json`."""
    for folder in dict.fromkeys((str(skill.judged_dir.resolve()), str(skill.judged_dir))):
        line = line.replace(folder + "/", skill.label + "/")
    return line


def offline_gate(
    paths: Sequence[str],
    workdir: Path,
    *,
    changed_since: str | None = None,
    evals_from: EvalsFrom = "head",
    allow_unjudged: bool = False,
    jail: JailKind = "auto",
) -> GateReport:
    """Check the evals of every skill under `paths` that the change since `changed_since`
    touched (every skill without it); see the module docstring. UsageError for paths or a
    ref that name nothing."""
    folders = find_skills(paths)
    judged = judge_change(folders, changed_since, workdir, evals_from=evals_from)
    checks = [check_skill(skill, jail) for skill in judged]
    note = None
    if any(c.ran_code for c in checks):
        try:
            note = chosen(jail)
        except JailUnavailable:
            note = None
    return GateReport(tuple(checks), allow_unjudged, changed_since, evals_from, note)


__all__ = ["GateReport", "Outcome", "SkillCheck", "check_skill", "offline_gate"]
