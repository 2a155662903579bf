"""`skill-eval run --resume RUN_DIR` alone: the run directory's `run.json` holds the plan the
run started with (plan/stored.py reads it), so nothing else needs repeating.

The stored plan is used as it is, its resume pointed at RUN_DIR. Of the flags given beside
it, those that leave the results alone apply (--concurrency, --max-retries, --quiet) and the
caps on spending (--max-cost-usd, --max-tokens-total); any other
is ignored with a warning, since a plan with other inputs would be a new run, not this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import click

from ..errors import UsageError
from ..plan.run_plan import RunPlan

# Flags that may differ on a resume: how fast the rest runs, what it may spend, the console.
APPLIED = ("concurrency", "max_retries", "max_cost_usd", "max_tokens_total", "quiet")
IGNORED_QUIETLY = frozenset({"resume", "config", "no_config", "state_root", "skill_dirs"})


def resumed_plan(run_dir: str, ctx: click.Context, warn: Callable[[str], None]) -> RunPlan:
    """The plan stored in RUN_DIR/run.json, set to resume RUN_DIR."""
    from ..engine.rundir import load_manifest  # the engine loads after the flags parse

    path = Path(run_dir)
    if not path.is_dir():
        raise UsageError(f"--resume {run_dir}: no such run directory", path=run_dir)
    plan = load_manifest(path, warn=lambda m: warn(f"warning: {m}")).plan
    suite = Path(plan.inputs.task_suite)
    if not suite.exists():
        raise UsageError(
            f"--resume {run_dir}: its plan names the task suite {suite}, which is not there "
            "from here: run from the folder the run started in, or repeat the run's command "
            f"with --resume {run_dir}",
            path=run_dir,
        )
    given = {
        name
        for name in ctx.params
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    }
    ignored = sorted(given - set(APPLIED) - IGNORED_QUIETLY)
    if ignored:
        names = ", ".join("--" + n.replace("_", "-").rstrip("-") for n in ignored)
        warn(f"warning: --resume {run_dir}: ignoring {names}: the run's stored plan is used")
    execution = plan.execution
    for name in ("concurrency", "max_retries"):
        low = 1 if name == "concurrency" else 0
        if name in given and ctx.params[name] < low:
            raise UsageError(f"--{name.replace('_', '-')}: must be at least {low}")
    if "concurrency" in given:
        execution = replace(execution, concurrency=ctx.params["concurrency"])
    if "max_retries" in given:
        execution = replace(execution, max_retries=ctx.params["max_retries"])
    records = replace(plan.records, resume=str(path))
    if path.resolve().parent.name == "runs":  # <state-root>/runs/<run>: its own state root,
        # which a relative stored --state-root would miss from another folder
        records = replace(records, state_root=str(path.resolve().parent.parent))
    for name in ("max_cost_usd", "max_tokens_total"):  # a higher cap lets a stopped run finish
        if name in given:
            records = replace(records, **{name: ctx.params[name]})
    if "quiet" in given:
        records = replace(records, progress=not ctx.params["quiet"])
    return replace(plan, execution=execution, records=records)


__all__ = ["resumed_plan"]
