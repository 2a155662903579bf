"""One evaluation from `run`'s flags, for `run` with a suite and for each skill of `run
SKILL_DIR...`: its plan (with the config file's defaults and tables), its dry run, the run
itself, and the summary said on stderr. cli/run_cmd.py is the command; cli/skills_run.py runs
several skills with these."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Any

import click

from ..errors import RunAborted, UsageError

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


def stop_on_signals() -> None:
    """A `kill` (SIGTERM) or Ctrl-C (SIGINT) stops a run: finished attempts saved, resumable.
    SIGINT too where Python started with it ignored or blocked (a shell's `&`, a process that
    inherited its parent's mask), which would otherwise leave the run deaf to it."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


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
    from ..report.text import one_line  # no control or bidi characters from the output

    return one_line(f"{first.get('task_id')} ({first.get('arm')}): {text}{more}")


def note(message: str) -> None:
    click.echo(message, err=True)


def plan_of(kwargs: dict[str, Any], ctx: click.Context) -> RunPlan:
    """The plan of run's flags (standalone implied by --skill-path without --input)."""
    if kwargs["skill_path"] and not kwargs["input_"]:
        kwargs = {**kwargs, "standalone": True}  # a skill and no ranking: standalone mode
    return plan_from_command(kwargs, ctx)


def show_plan(plan: RunPlan) -> None:
    """--dry-run: the run's plan and price on stdout; no model call, no run directory."""
    from ..engine.dry_run import dry_run

    for line in dry_run(plan, note):
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


__all__ = [
    "CONFIG_META",
    "TABLES_META",
    "first_error",
    "note",
    "plan_from_command",
    "plan_of",
    "run_plan",
    "show_plan",
    "stop_on_signals",
    "summary",
]
