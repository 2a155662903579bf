"""`skill-eval run`: flags in (cli/run_flags.py, with defaults from the project config file),
a RunPlan built from them, one call to run_evaluation, a summary out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from ..plan.config import chosen_config, command_defaults, executor_tables, load_config
from .common import VERDICT_EXIT as VERDICT_EXIT  # merge and rejudge exit as run does
from .common import verdict_exit
from .run_flags import run_flags
from .run_one import (
    CONFIG_META,
    TABLES_META,
    note,
    plan_of,
    run_plan,
    show_plan,
    stop_on_signals,
    summary,
)
from .skills_run import append_summary, run_skills


class RunCommand(click.Command):
    """`run`, with defaults from the project config file (skill_eval.plan.config) filled in
    before click parses the line, so the command line beats the file."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        path = None
        if not {"-h", "--help"} & set(args):
            path = chosen_config(args, Path.cwd())
            if path is not None:
                config = load_config(path)
                defaults = command_defaults(self, config)
                ctx.default_map = {**(ctx.default_map or {}), **defaults}
                ctx.meta[TABLES_META] = executor_tables(config)
        ctx.meta[CONFIG_META] = path
        return super().parse_args(ctx, args)


@click.command("run", cls=RunCommand)
@click.argument("skill_dirs", nargs=-1, metavar="[SKILL_DIR]...")
@run_flags()
def command(skill_dirs: tuple[str, ...], **kwargs: Any) -> None:
    """Run a task suite with a candidate skill and a baseline and write a verdict artifact.

    \b
    A skill's own evals:  SKILL_DIR... (or a folder of skill folders) [--changed-since REF]
    Standalone mode:      --task-suite FILE --skill-path SKILL_DIR [--baseline-skill PATH |
                          --no-baseline]
    Pipeline mode:        --task-suite FILE --input ranking.json --candidate-id ID
    Continue a run:       --resume RUN_DIR (its stored plan)

    SKILL_DIR runs the evals the skill keeps in SKILL_DIR/evals/ (evals.json and a trigger set
    beside it, or task_suite.yaml) against no skill, the skill installed as it ships on an
    agent executor (--skill-mode says otherwise); a trigger set runs with --no-baseline (a
    no-skill baseline never triggers). Several skills: an artifact each, one summary table,
    the worst exit code (references/interop.md). --task-suite takes an eval set or trigger
    set (JSON) as it takes a suite.

    Defaults for any flag can live in `[tool.skill-eval]` of the nearest pyproject.toml, or
    at the top of a skill-eval.toml, keyed by the long flag name (executor = "anthropic",
    concurrency = 4), and an executor's own options in `[tool.skill-eval.executor.NAME]`;
    the command line and SKILL_EVAL_* variables beat the file, and relative paths in it are
    relative to it. The artifact's manifest names the file used.

    Prints the artifact path on stdout and a summary on stderr. Exit codes:

    \b
    0  pass, or skipped (never run: score below --eval-threshold)
    1  fail: shown worse (the candidate is past the policy's margin), or failed for
       another reason (nothing passed in either arm, --no-baseline's pass rate)
    4  fail, not enough evidence: the policy's interval holds its threshold, so more
       tasks or samples could settle it (the summary says how many); the artifact's
       verdict is fail as well, with evaluation.insufficient true
    5  budget exhausted (never a pass): the estimate is over --max-cost-usd or
       --max-tokens-total (nothing ran), or the run reached it (finished attempts kept:
       --resume RUN_DIR with a higher cap completes it)
    3  error verdict, or a harness fault (executor cannot run, run stopped)
    2  bad input or usage
    """
    stop_on_signals()
    ctx = click.get_current_context()
    if skill_dirs:
        sys.exit(run_skills(skill_dirs, kwargs, ctx))
    if kwargs.pop("changed_since"):
        raise UsageError("--changed-since needs SKILL_DIR (the skills, or a folder of them)")
    if kwargs.pop("evals_from") != "head" or kwargs.pop("allow_unjudged"):
        raise UsageError("--evals-from and --allow-unjudged go with SKILL_DIR --changed-since")
    summary_file = kwargs.pop("summary")
    dry_run = kwargs.pop("dry_run")
    if kwargs["task_suite"]:  # any suite shape: the run reads it (inputs/suite.py)
        plan = plan_of(kwargs, ctx)
    elif kwargs["resume"]:
        from .run_resume import resumed_plan

        plan = resumed_plan(kwargs["resume"], ctx, warn=note)
    else:
        raise UsageError(
            "Missing option '--task-suite' (or give SKILL_DIR, a skill folder with evals/, "
            "or --resume RUN_DIR to continue a run from its stored plan)"
        )
    if dry_run:
        show_plan(plan)
        sys.exit(0)
    outcome = run_plan(plan)
    click.echo(summary(outcome, ran_here=True), err=True)
    click.echo(str(outcome.path))
    if summary_file:
        from ..report.skills_table import SkillRow

        label = str(outcome.artifact.get("task_suite_skill_id") or "skill")
        append_summary(summary_file, [SkillRow(label, outcome.artifact)])
    sys.exit(verdict_exit(outcome.artifact))
