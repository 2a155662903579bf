"""`skill-eval run`: flags in (cli/run_flags.py, with defaults from the project config file),
a RunPlan built from them, one call to run_evaluation, a summary out."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import RunAborted, UsageError
from ..plan.config import chosen_config, command_defaults, executor_tables, load_config
from .common import VERDICT_EXIT as VERDICT_EXIT  # merge and rejudge exit as run does
from .common import verdict_exit
from .run_flags import run_flags

if TYPE_CHECKING:
    from ..engine.finish import EvaluationOutcome
    from ..plan.run_plan import RunPlan

CONFIG_META = "skill_eval.config_file"  # ctx.meta key: the config file read, or None
TABLES_META = "skill_eval.executor_tables"  # ctx.meta key: its executor tables


def plan_from_command(kwargs: dict[str, Any], ctx: click.Context) -> RunPlan:
    """The run plan of `run`'s (or scripts/evaluate.py's) parsed flags: the config file's
    executor tables and which flags came from the file (ctx), --quiet as `progress`, and
    the deprecated --backend as --runner."""
    from ..plan.run_plan import RunPlan  # the plan (and the executor registry) after parsing

    kwargs = dict(kwargs)
    from_config = [
        name
        for name in kwargs
        if ctx.get_parameter_source(name) is click.core.ParameterSource.DEFAULT_MAP
    ]
    not_the_plans = ("changed_since", "evals_from", "allow_unjudged", "summary", "dry_run")
    for name in ("config", "no_config", *not_the_plans):
        kwargs.pop(name, None)
    config_file = ctx.meta.get(CONFIG_META)
    kwargs["config_file"] = str(config_file) if config_file is not None else None
    kwargs["input"] = kwargs.pop("input_")
    kwargs["progress"] = not kwargs.pop("quiet")
    kwargs["runner"] = _runner(kwargs.pop("backend"), kwargs["runner"], ctx)
    options = kwargs.pop("executor_option")
    return RunPlan.from_flags(
        **kwargs,
        executor_options=options,
        executor_tables=ctx.meta.get(TABLES_META, ()),
        from_config=from_config,
    )


def _runner(backend: str | None, runner: str, ctx: click.Context) -> str:
    """--runner, or the deprecated --backend (the same flag under its old name, which it
    says on stderr); both on the command line must agree."""
    if backend is None:
        return runner
    source = ctx.get_parameter_source("backend")
    if source is click.core.ParameterSource.DEFAULT_MAP:
        where = ctx.meta.get(CONFIG_META)
        click.echo(f"warning: {where}: key 'backend' is deprecated; name it 'runner'", err=True)
    else:
        click.echo("warning: --backend is deprecated; use --runner (where attempts run)", err=True)
    runner_given = ctx.get_parameter_source("runner") is click.core.ParameterSource.COMMANDLINE
    if runner_given and runner != backend:
        raise UsageError(f"--runner {runner} and --backend {backend} disagree; give --runner only")
    return runner if runner_given else backend


def stop_on_sigterm() -> None:
    """A `kill` stops a run the way Ctrl-C does: finished attempts saved, resumable."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def summary(outcome: EvaluationOutcome, *, ran_here: bool = False) -> str:
    """The end-of-run report for stderr: the per-task table, rates, verdict, artifact path.
    `ran_here`: the run just ran in this process, whose first lines said its jail (--no-jail,
    what auto chose: engine/conductor.py), so they are not said again; a merged or rejudged
    run's summary says them first."""
    from ..report.render import render_table

    lines = [render_table(outcome.artifact).rstrip()]
    isolation = outcome.artifact.get("manifest", {}).get("isolation", {})
    if isolation.get("chosen") and not ran_here:
        lines.insert(0, str(isolation["chosen"]))
    unjailed = ran_here and isolation.get("isolated") is False  # --no-jail: said first
    if isolation.get("warning") and not unjailed:  # first: the rest is worth less without one
        lines.insert(0, f"WARNING: {isolation['warning']}")
    cause = first_error(outcome.artifact)
    if cause is not None:
        lines.append(f"first error         {cause}")
    return "\n".join([*lines, f"artifact            {outcome.path}"])


def first_error(artifact: dict[str, Any]) -> str | None:
    """The first attempt error with its cause on one line: its first line (what failed) and
    its last (the cause, e.g. `ModuleNotFoundError: ...`), which the table cuts short."""
    errors = artifact.get("errors") or []
    if not errors:
        return None
    first = errors[0]
    parts = [line.strip() for line in str(first.get("error") or "").splitlines() if line.strip()]
    text = parts[0] if len(parts) < 2 else f"{parts[0]} ... {parts[-1]}"
    more = f" (and {len(errors) - 1} more in the artifact)" if len(errors) > 1 else ""
    from ..report.view import one_line  # no control or bidi characters from the output

    return one_line(f"{first.get('task_id')} ({first.get('arm')}): {text}{more}")


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
    stop_on_sigterm()
    ctx = click.get_current_context()
    if skill_dirs:
        from .skills_run import run_skills

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

        plan = resumed_plan(kwargs["resume"], ctx, warn=_note)
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
        from .skills_run import append_summary

        label = str(outcome.artifact.get("task_suite_skill_id") or "skill")
        append_summary(summary_file, [SkillRow(label, outcome.artifact)])
    sys.exit(verdict_exit(outcome.artifact))


def _note(message: str) -> None:
    click.echo(message, err=True)


def plan_of(kwargs: dict[str, Any], ctx: click.Context) -> RunPlan:
    """The plan of run's flags (standalone implied by --skill-path without --input)."""
    if kwargs["skill_path"] and not kwargs["input_"]:
        kwargs = {**kwargs, "standalone": True}  # a skill and no ranking: standalone mode
    return plan_from_command(kwargs, ctx)


def show_plan(plan: RunPlan) -> None:
    """--dry-run: the run's plan and price on stdout; no model call, no run directory."""
    from ..engine.estimate import dry_run

    for line in dry_run(plan, _note):
        click.echo(line)


def run_plan(plan: RunPlan) -> EvaluationOutcome:
    """run_evaluation, with a SystemExit raised inside the run (a plugin's) made an error."""
    from ..engine.conductor import run_evaluation  # the engine loads after the flags parse

    try:
        return run_evaluation(plan)
    except SystemExit as exc:  # exit 0 would lie
        raise RunAborted(
            f"the run was ended by SystemExit({exc.code!r}) raised inside it; "
            "no artifact was written"
        ) from None
