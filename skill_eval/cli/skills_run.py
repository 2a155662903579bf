"""`skill-eval run SKILL_DIR...`: each skill's own evals (interop/skill_runs.py plans them;
with --changed-since, interop/change_plan.py picks the skills a change touched and the evals
each is judged by), run one after another with run's flags, so --concurrency is the budget
they share and the judge cache under --state-root serves them all; an artifact per evaluation
(its path on stdout), one summary table across skills on stderr (and as markdown with
--summary), and the worst exit code."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import UsageError
from ..interop.skill_evaluations import SharedBudget
from ..report.skills_table import SkillRow, skills_markdown, skills_text
from .common import EXIT_ERROR, EXIT_FAIL, EXIT_INSUFFICIENT, EXIT_OK, EXIT_USAGE, verdict_exit

if TYPE_CHECKING:
    from ..interop.change_plan import ChangePlan
    from ..plan.run_plan import RunPlan

EXIT_BUDGET = 5  # BudgetExhausted.exit_code: a cap, never a pass
# Worst first: a harness error, evals that cannot be read, a fail, the budget spent, a fail
# for lack of evidence, a pass.
SEVERITY = (EXIT_ERROR, EXIT_USAGE, EXIT_FAIL, EXIT_BUDGET, EXIT_INSUFFICIENT, EXIT_OK)
NOT_WITH_SKILL_DIR = ("skill_path", "input_", "candidate_id", "task_suite")
NO_EVALS = "no evals (evals/evals.json, a trigger set or evals/task_suite.yaml)"
UNJUDGED = "NOT JUDGED: no evals (--allow-unjudged to let it pass)"
REMOVED = "NOT JUDGED: this change removed or emptied its evals (the base ref has them)"
SPENT = "--max-cost-usd was spent by the evaluations before it"


def worst(codes: Iterable[int]) -> int:
    found = set(codes)
    return next((code for code in SEVERITY if code in found), EXIT_OK)


def run_skills(skill_dirs: Sequence[str], kwargs: dict[str, Any], ctx: click.Context) -> int:
    """Run every skill's evals; the worst exit code."""
    from ..interop.change_plan import plan_change
    from ..interop.delivery import as_it_ships
    from .run_one import plan_of, show_plan

    changed, summary_file, evals_from, allow_unjudged, dry_run = _own_flags(kwargs)
    # --skill-mode on the line or in the config file beats delivering the skill as it ships
    mode_given = ctx.get_parameter_source("skill_mode") is not click.core.ParameterSource.DEFAULT
    baseline_named = bool(kwargs["baseline_skill"] or kwargs["no_baseline"] or kwargs["arm"])
    change = plan_change(
        skill_dirs,
        Path(kwargs["state_root"]),
        changed_since=changed,
        evals_from="base" if evals_from == "base" else "head",
        baseline_named=baseline_named,
    )
    plan = change.plan
    if changed:
        said = f"--changed-since {changed}: {change.judged} of {change.found} skill(s)"
        click.echo(said, err=True)
    for note in plan.notes:
        click.echo(note, err=True)
    several = len(plan.runs) > 1
    if several and kwargs["resume"]:
        raise UsageError("--resume RUN_DIR with several evaluations: give one SKILL_DIR")
    rows: list[SkillRow] = []
    codes: list[int] = []
    budget = SharedBudget(kwargs.get("max_cost_usd"))
    for run in plan.runs:
        flags = {
            **kwargs,
            "task_suite": str(run.suite.resolve()),  # a --resume from elsewhere finds it
            "skill_path": str(run.skill_dir.resolve()),
            "standalone": True,
            "no_baseline": kwargs["no_baseline"] or run.no_baseline,
            "max_cost_usd": budget.left,
        }
        if several and kwargs["output"]:  # --output is then the folder of the artifacts
            flags["output"] = str(Path(kwargs["output"]) / f"{_file_name(run.label)}.json")
        if several:
            click.echo(f"== {run.label}: {run.suite}", err=True)
        planned = as_it_ships(plan_of(flags, ctx), mode_given)
        if dry_run:
            show_plan(planned)
            continue
        row, code = _evaluate(run.label, planned, budget)
        rows.append(row)
        codes.append(code)
    if not plan.runs and _only_unreadable(change):  # one skill, nothing else: its one line
        raise change.plan.unreadable[0][1]
    rows += _unrun_rows(change, allow_unjudged)
    codes += _unrun_codes(change, allow_unjudged)
    for name, error in plan.unreadable:
        click.echo(f"{name}: evals cannot be read: {error}", err=True)
    if not plan.runs and not plan.unreadable:
        empty = [*change.unjudged, *(p.resolve().name for p in plan.without_evals)]
        if not changed and empty:  # the skills asked for have nothing to run
            raise UsageError(_nothing_to_run(empty))
        click.echo("no skill with evals to run", err=True)
    if rows:
        click.echo(skills_text(rows), err=True)
    if summary_file:
        append_summary(summary_file, rows, change.evals_changed)
    return worst(codes)


def _own_flags(kwargs: dict[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
    """Take `run SKILL_DIR`'s own flags out of `kwargs` (the rest are the plan's):
    (--changed-since, --summary, --evals-from, --allow-unjudged, --dry-run)."""
    for name in NOT_WITH_SKILL_DIR:
        if kwargs.get(name):
            flag = "--" + name.rstrip("_").replace("_", "-")
            raise UsageError(f"{flag} with SKILL_DIR: SKILL_DIR is the skill and its evals")
    changed, summary_file = kwargs.pop("changed_since"), kwargs.pop("summary")
    evals_from, allow_unjudged = kwargs.pop("evals_from"), kwargs.pop("allow_unjudged")
    if (evals_from != "head" or allow_unjudged) and not changed:
        raise UsageError("--evals-from and --allow-unjudged go with --changed-since REF")
    return changed, summary_file, evals_from, allow_unjudged, kwargs.pop("dry_run", False)


def _evaluate(label: str, plan: RunPlan, budget: SharedBudget) -> tuple[SkillRow, int]:
    """One skill's evaluation (interop/skill_evaluations.py): its row and exit code."""
    from ..interop.delivery import delivery_line
    from ..interop.skill_evaluations import evaluate_one
    from .run_one import run_plan, summary

    if budget.spent_out:
        return SkillRow(label, note=f"not run: {SPENT}"), EXIT_BUDGET
    done = evaluate_one(lambda: run_plan(plan), budget)
    if done.outcome is None:
        error = done.error
        said = str(error).strip() if error is not None else ""
        click.echo(f"{label}: not run: {said}", err=True)
        code = error.exit_code if error is not None else EXIT_ERROR
        return SkillRow(label, note=f"not run: {(said.splitlines() or ['?'])[0]}"), code
    said = summary(done.outcome, ran_here=True)
    click.echo(f"{delivery_line(done.outcome.artifact)}\n{said}", err=True)
    click.echo(str(done.outcome.path))
    return SkillRow(label, done.outcome.artifact), verdict_exit(done.outcome.artifact)


def _unrun_rows(change: ChangePlan, allow_unjudged: bool) -> list[SkillRow]:
    """Rows for the skills that did not run: evals removed, none, unreadable."""
    unjudged = UNJUDGED if change.judging_change and not allow_unjudged else NO_EVALS
    rows = [SkillRow(label, note=REMOVED) for label in change.removed]
    rows += [SkillRow(label, note=unjudged) for label in change.unjudged]
    rows += [SkillRow(p.resolve().name, note=NO_EVALS) for p in change.plan.without_evals]
    unreadable = change.plan.unreadable
    return rows + [SkillRow(name, note=f"evals cannot be read: {e}") for name, e in unreadable]


def _nothing_to_run(skills: Sequence[str]) -> str:
    """Why `run SKILL_DIR...` ran nothing: the skills named hold no evals."""
    names = ", ".join(skills[:5])
    more = f" and {len(skills) - 5} more" if len(skills) > 5 else ""
    return (
        f"{names}{more}: {NO_EVALS}: nothing to run; write the skill's evals/evals.json "
        "(references/interop.md), or give a suite with --task-suite FILE --skill-path SKILL_DIR"
    )


def _only_unreadable(change: ChangePlan) -> bool:
    """The one skill asked for is one whose evals cannot be read, and nothing else is said."""
    plan = change.plan
    return len(plan.unreadable) == 1 and not (
        change.removed or change.unjudged or plan.without_evals
    )


def _unrun_codes(change: ChangePlan, allow_unjudged: bool) -> list[int]:
    codes = [EXIT_FAIL] * len(change.removed) + [e.exit_code for _, e in change.plan.unreadable]
    if change.judging_change and not allow_unjudged:
        codes += [EXIT_FAIL] * len(change.unjudged)
    return codes


def _file_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "skill"


def append_summary(path: str, rows: Sequence[SkillRow], evals_changed: Sequence[str] = ()) -> None:
    """Append the table as markdown to `path` (a job summary collects several steps')."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(skills_markdown(rows, evals_changed=evals_changed))
    except OSError as exc:
        raise UsageError(f"--summary {path}: cannot write: {exc.strerror or exc}") from None


__all__ = ["append_summary", "run_skills", "worst"]
