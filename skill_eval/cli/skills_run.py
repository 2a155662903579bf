"""`skill-eval run SKILL_DIR...`: each skill's own evals (interop/skill_runs.py plans them),
run one after another with run's flags, so --concurrency is the budget they share and the
judge cache under --state-root serves them all; an artifact per evaluation (its path on
stdout), one summary table across skills on stderr (and as markdown with --summary), and the
worst exit code."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from ..report.skills_table import SkillRow, skills_markdown, skills_text
from .common import EXIT_ERROR, EXIT_FAIL, EXIT_INSUFFICIENT, EXIT_OK, verdict_exit

# Worst first: a harness error, a fail, a fail for lack of evidence, a pass.
SEVERITY = (EXIT_ERROR, EXIT_FAIL, EXIT_INSUFFICIENT, EXIT_OK)
NOT_WITH_SKILL_DIR = ("skill_path", "input_", "candidate_id", "task_suite")
NO_EVALS = "no evals (evals/evals.json, a trigger set or evals/task_suite.yaml)"


def worst(codes: Iterable[int]) -> int:
    found = set(codes)
    return next((code for code in SEVERITY if code in found), EXIT_OK)


def run_skills(skill_dirs: Sequence[str], kwargs: dict[str, Any], ctx: click.Context) -> int:
    """Run every skill's evals; the worst exit code."""
    from ..interop.delivery import as_it_ships, delivery_line
    from ..interop.skill_runs import changed_since, plan_skill_runs, skill_folders
    from .run_cmd import plan_of, run_plan, show_plan, summary

    for name in NOT_WITH_SKILL_DIR:
        if kwargs.get(name):
            flag = "--" + name.rstrip("_").replace("_", "-")
            raise UsageError(f"{flag} with SKILL_DIR: SKILL_DIR is the skill and its evals")
    changed, summary_file = kwargs.pop("changed_since"), kwargs.pop("summary")
    dry_run = kwargs.pop("dry_run", False)
    # --skill-mode on the line or in the config file beats delivering the skill as it ships
    mode_given = ctx.get_parameter_source("skill_mode") is not click.core.ParameterSource.DEFAULT
    folders = skill_folders(skill_dirs)
    if changed:
        kept = changed_since(folders, changed)
        click.echo(f"--changed-since {changed}: {len(kept)} of {len(folders)} skill(s)", err=True)
        folders = kept
    baseline_named = bool(kwargs["baseline_skill"] or kwargs["no_baseline"] or kwargs["arm"])
    plan = plan_skill_runs(folders, baseline_named=baseline_named)
    for note in plan.notes:
        click.echo(note, err=True)
    several = len(plan.runs) > 1
    if several and kwargs["resume"]:
        raise UsageError("--resume RUN_DIR with several evaluations: give one SKILL_DIR")
    rows: list[SkillRow] = []
    codes: list[int] = []
    for run in plan.runs:
        flags = {
            **kwargs,
            "task_suite": str(run.suite.resolve()),  # a --resume from elsewhere finds it
            "skill_path": str(run.skill_dir.resolve()),
            "standalone": True,
            "no_baseline": kwargs["no_baseline"] or run.no_baseline,
        }
        if several and kwargs["output"]:  # --output is then the folder of the artifacts
            flags["output"] = str(Path(kwargs["output"]) / f"{_file_name(run.label)}.json")
        if several:
            click.echo(f"== {run.label}: {run.suite}", err=True)
        planned = as_it_ships(plan_of(flags, ctx), mode_given)
        if dry_run:
            show_plan(planned)
            continue
        outcome = run_plan(planned)
        click.echo(f"{delivery_line(outcome.artifact)}\n{summary(outcome)}", err=True)
        click.echo(str(outcome.path))
        rows.append(SkillRow(run.label, outcome.artifact))
        codes.append(verdict_exit(outcome.artifact))
    rows += [SkillRow(p.resolve().name, note=NO_EVALS) for p in plan.without_evals]
    if not plan.runs:
        click.echo("no skill with evals to run", err=True)
    if rows:
        click.echo(skills_text(rows), err=True)
    if summary_file:
        append_summary(summary_file, rows)
    return worst(codes)


def _file_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "skill"


def append_summary(path: str, rows: Sequence[SkillRow]) -> None:
    """Append the table as markdown to `path` (a job summary collects several steps')."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(skills_markdown(rows))
    except OSError as exc:
        raise UsageError(f"--summary {path}: cannot write: {exc.strerror or exc}") from None


__all__ = ["append_summary", "run_skills", "worst"]
