"""`skill-eval improve`: flags in (those it shares with `run` defined once, in
cli/run_flags.py), one call to improve.run.improve, the outcome out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click_option_group import OptionGroup

from ..errors import UsageError
from ..executors.base import DEFAULT_EXECUTOR
from ..executors.base import OFFLINE_EXECUTOR as MOCK
from ..executors.catalog import has_option, is_offline
from ..jail import NO_JAIL
from .choices import ModelServiceChoice
from .run_flags import flag, plan_flags, section_flags, shared_flags

if TYPE_CHECKING:
    from ..improve.run import ImproveRun


# The sections of `improve --help`.
INPUTS = OptionGroup("Inputs", help="The skill, its tasks, and the memory of past runs.")
LOOP = OptionGroup(
    "Stopping rules",
    help="Each iteration rewrites the skill from the failing train tasks and scores it; the "
    "first of these rules that holds, in this order, ends the loop.",
)
CONFIRM = OptionGroup(
    "Holdout and confirmation", help="Which tasks pick the best version, and the test it must pass."
)
# How every version is scored: run's own sections of flags, as they are (cli/run_flags.py).
EVALUATION_SECTIONS = ("Executor", "Executor option shorthands", "Execution", "Judging", "Cost")
# Not for improve: a shard or a batch of one version's tasks; the improver's claude-bin and
# base-url are its own (the evaluations take claude-bin too); mock rules are always on.
NOT_SHARED = ("shard", "batch", "base-url", "claude-bin", "mock-rules")
IMPROVER = OptionGroup("Improver", help="The model service that rewrites the skill.")
OUTPUT = OptionGroup("Output", help="Where the winner goes.")


@click.command("improve")
@flag(
    "skill-path",
    section=INPUTS,
    metavar="DIR",
    help="The skill folder (holding SKILL.md); required unless --history.",
)
@flag(
    "task-suite",
    section=INPUTS,
    required=False,
    metavar="FILE",
    help="Task suite YAML the versions are scored on; required unless --history.",
)
@flag(
    "state-root",
    section=INPUTS,
    show_default=True,
    help="Memory (improve.sqlite3) and runs (<state-root>/improve/<run>/).",
)
@INPUTS.option("--history", is_flag=True, help="Print the memory's runs and cycles, then exit.")
@LOOP.option(
    "--token-budget",
    type=int,
    default=200_000,
    show_default=True,
    metavar="N",
    help="Tokens per iteration (recall gets 10%); the run ends with AbortBudget past N x "
    "--iterate.",
)
@LOOP.option(
    "--timeout",
    "timeout_seconds",
    type=float,
    default=1800.0,
    show_default=True,
    metavar="SECONDS",
    help="Wall clock of the whole run past which it ends with AbortTimeout.",
)
@LOOP.option(
    "--regression-threshold",
    type=float,
    default=0.10,
    show_default=True,
    metavar="X",
    help="A train drop larger than X ends the loop with AbortRegression (the previous version "
    "is kept).",
)
@LOOP.option(
    "--abort-on-regression/--no-abort-on-regression",
    default=True,
    show_default=True,
    help="Whether a drop past --regression-threshold ends the loop.",
)
@LOOP.option(
    "--quality",
    type=float,
    default=0.8,
    show_default=True,
    metavar="X",
    help="A train pass rate of at least X ends the loop with Accept.",
)
@LOOP.option(
    "--iterate",
    type=int,
    default=3,
    show_default=True,
    metavar="N",
    help="Iterations at most; the last ends with AcceptBest.",
)
@LOOP.option(
    "--improvement-threshold",
    type=float,
    default=0.05,
    show_default=True,
    metavar="X",
    help="A train gain smaller than X ends the loop with AcceptBest.",
)
@CONFIRM.option(
    "--holdout",
    type=float,
    default=0.4,
    show_default=True,
    metavar="X",
    help="Fraction of tasks held out: they pick the best version, then confirm it on fresh "
    "samples (0 allowed, with a warning).",
)
@CONFIRM.option(
    "--seed", type=int, default=0, show_default=True, metavar="N", help="Seed of the split."
)
@CONFIRM.option(
    "--confirm-samples",
    type=int,
    default=3,
    show_default=True,
    metavar="N",
    help="Attempts a task and arm when the pick is confirmed on the tasks set apart.",
)
@flag(
    "policy",
    section=CONFIRM,
    # checked by improve itself, in one line (a click Choice answers with its usage text)
    type=click.STRING,
    default=None,
    show_default=False,
    metavar="NAME",
    help="Policy of the confirmation, on the held-out tasks set apart from those that picked "
    "the version (default superior: shown better than the original; no-regression asks only "
    "that it is not shown 10 points worse); its level is divided by the versions compared.",
)
@shared_flags(*EVALUATION_SECTIONS, skip=NOT_SHARED)
@IMPROVER.option(
    "--improver",
    type=ModelServiceChoice(),
    default=None,
    help="Who rewrites the skill: the executor whose model does (any that offers a text "
    "model, plugins too), or mock, a deterministic test double (default: mock with --mock, "
    "else claude-cli).",
)
@IMPROVER.option("--improver-model", metavar="MODEL", help="Model of the improver.")
@IMPROVER.option(
    "--base-url",
    metavar="URL",
    help="Messages API base URL for the improver (the evaluations': --executor-option "
    "base_url=URL).",
)
@flag("claude-bin", section=IMPROVER, help="The claude CLI (evaluations and improver).")
@OUTPUT.option(
    "--output-dir",
    metavar="DIR",
    help="Where the winner goes (default "
    "<run dir>/improved; never the skill folder unless --in-place).",
)
@OUTPUT.option("--in-place", is_flag=True, help="Write the winner over the skill folder.")
def command(
    skill_path: str | None,
    task_suite: str | None,
    state_root: str,
    policy: str | None,
    improver: str | None,
    improver_model: str | None,
    base_url: str | None,
    claude_bin: str | None,
    output_dir: str | None,
    in_place: bool,
    history: bool,
    confirm_samples: int,
    holdout: float,
    seed: int,
    **rest: Any,
) -> None:
    """Improve a skill: rewrite it from the failing train tasks, propose a version only if it
    is shown better than the original on held-out tasks. See references/improve.md.

    \b
    Three uses of the tasks, so the pick is not judged by the data that chose it:
      train     the improver sees these tasks' failures
      holdout   half the held-out tasks: the version with the best pass rate is picked
      confirm   the other half, seen by neither: the pick against the original under
                --policy (default superior: shown better) at its level / K, K the
                versions the pick was chosen from (Bonferroni)
    A suite too small for any outcome to pass is said before the first iteration. The
    ranking artifact's improve.confirmation records the split, K and the outcome.

    The evaluations take run's flags (executor, execution, judging, cost caps), with one
    meaning: --max-cost-usd and --max-tokens-total cap the whole command, improver included.

    Prints the ranking artifact's path on stdout, progress on stderr. Exit codes: 0 a better
    version is proposed (or the original is accepted as is), 1 none was shown better at this
    size (which is not "none is better"), 2 bad input, 3 error.
    """
    from ..improve.decide import IterationSettings
    from ..improve.run import history as show_history
    from ..improve.run import improve, plan_for_improve
    from ..plan.checks import executor_named
    from ..plan.config import nearest_executor_tables

    evaluations = plan_flags(rest, section_flags(*EVALUATION_SECTIONS, skip=NOT_SHARED))
    if evaluations["no_jail"]:
        click.echo(f"WARNING: {NO_JAIL}", err=True)
    if history:
        click.echo(show_history(state_root))
        return
    if not skill_path or not task_suite:
        raise UsageError("--skill-path and --task-suite are required (or --history)")
    try:  # the loop's flags (stopping rules, holdout and seed) are named after its settings
        settings = IterationSettings(
            confirm_samples=confirm_samples, holdout=holdout, seed=seed, **rest
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    name = executor_named(evaluations)
    plan = plan_for_improve(
        task_suite=task_suite,
        skill_path=skill_path,
        state_root=state_root,
        policy=policy,
        claude_bin=claude_bin if has_option(name, "claude_bin") else None,
        executor_tables=nearest_executor_tables(Path.cwd()),
        **evaluations,
    )
    outcome = improve(
        plan,
        settings=settings,
        improver=improver or (MOCK if is_offline(name) else DEFAULT_EXECUTOR),
        improver_model=improver_model,
        base_url=base_url,
        claude_bin=claude_bin,
        output_dir=output_dir,
        in_place=in_place,
        log=lambda line: click.echo(line, err=True),
    )
    _print_outcome(outcome)


def _print_outcome(outcome: ImproveRun) -> None:
    """What the improver said and the decision on stderr, the ranking artifact's path on
    stdout; then the exit code."""
    from ..improve.detect import NOT_SHOWN

    for note in outcome.notes:
        click.echo(f"improver: {note}", err=True)
    result = outcome.result
    where = f"; winner in {outcome.winner}" if outcome.winner else ""
    click.echo(
        f"{result.decision}: best {outcome.best_candidate}, "
        f"{'proposed' if result.proposed else f'not proposed ({NOT_SHOWN})'}{where}; "
        f"{result.tokens} tokens, ${result.cost_usd:.4f}",
        err=True,
    )
    click.echo(str(outcome.ranking))
    sys.exit(outcome.exit_code)
