"""`skill-eval review SKILL`: flags in, one call to run_review, the decision out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from click_option_group import OptionGroup

from ..errors import UsageError
from ..executors.base import DEFAULT_EXECUTOR, executor_names
from ..executors.base import OFFLINE_EXECUTOR as MOCK
from ..jail import NO_JAIL
from .choices import ModelServiceChoice, RegistryChoice, is_executor
from .run_flags import flag, plan_flags, section_flags, shared_flags

# The sections of `review --help`.
REVIEW = OptionGroup("Review", help="What the skill is for, and what the review leaves behind.")
ROLES = OptionGroup(
    "Role models", help="Who plays the orchestrator, the builder and the visionary."
)
QA = OptionGroup("QA runs", help="The draft suite run on the skill, as by `skill-eval run`.")
# More of run's flags, as they are: how the QA runs go, their judges, and the cost caps
# (the whole review's: role models and QA runs).
QA_SECTIONS = ("Execution", "Judging", "Cost")


@click.command("review")
@click.argument("skill_path", metavar="SKILL", type=click.Path(path_type=str))
@REVIEW.option(
    "--vision", metavar="FILE", help="What the skill is for (default: the SKILL.md description)."
)
@REVIEW.option(
    "--mock",
    is_flag=True,
    help="Offline: the QA runs on the mock executor, and the role models on mock (scripted "
    "replies) unless --executor names another.",
)
@REVIEW.option(
    "--max-rounds",
    type=int,
    default=3,
    show_default=True,
    metavar="N",
    help="Rounds at most (each refine_evaluation starts one more).",
)
@flag(
    "state-root",
    section=REVIEW,
    show_default=True,
    help="Directory for the review (<state-root>/reviews/<id>/) and QA runs.",
)
@REVIEW.option(
    "--output-suite",
    metavar="DIR",
    help="Where the final suite goes (default <review dir>/suite); must be new or empty.",
)
@ROLES.option(
    "--executor",
    "executor",
    type=ModelServiceChoice(),
    default=None,
    help="The model service of the review: the executor the three role models run on, and "
    "the QA runs too unless --qa-executor says otherwise (default: mock with --mock or "
    "--mock-replies, else claude-cli). Any executor that offers a text model (plugins "
    "too). mock without --mock-replies: built-in scripted replies (a dry run of the "
    "pipeline; no model reads the skill).",
)
@ROLES.option(
    "--models",
    metavar="ROLE=MODEL,...",
    help="Model per role: orchestrator=...,builder=...,visionary=...",
)
@ROLES.option(
    "--mock-replies",
    metavar="FILE",
    help="Scripted replies per role (YAML: role -> list of replies), for CI.",
)
@ROLES.option(
    "--roles-dir", metavar="DIR", help="Role prompts (<role>.md) that replace the shipped ones."
)
@ROLES.option("--base-url", metavar="URL", help="Messages API base URL for the role models.")
@flag("claude-bin", section=ROLES, help="The claude CLI (role models and QA).")
@QA.option(
    "--qa-executor",
    type=RegistryChoice(executor_names, is_executor),
    default=None,
    help="Executor of the QA runs when it is not --executor (mock runs the draft's "
    "mock_outputs.yaml).",
)
@flag("model", section=QA, help="Model of the QA runs [env SKILL_EVAL_MODEL].")
@flag("skill-mode", section=QA, help="How the QA runs deliver the skill (as for `skill-eval run`).")
@flag("samples", section=QA, default=2, show_default=True, help="Attempts per task and arm in QA.")
@flag(
    "executor-option",
    section=QA,
    help="KEY=VALUE, repeatable: an option of the QA runs' executor, as for `skill-eval run` "
    "(also read from [tool.skill-eval.executor.NAME] of the project config file).",
)
@shared_flags(*QA_SECTIONS, skip=("shard",))
@click.option(
    "--backend",
    type=ModelServiceChoice(),
    default=None,
    hidden=True,
    help="Deprecated: the old name of --executor for the role models.",
)
def command(
    skill_path: str,
    vision: str | None,
    state_root: str,
    executor: str | None,
    backend: str | None,
    models: str | None,
    mock_replies: str | None,
    roles_dir: str | None,
    qa_executor: str | None,
    mock: bool,
    model: str | None,
    skill_mode: str,
    samples: int,
    max_rounds: int,
    output_suite: str | None,
    claude_bin: str | None,
    base_url: str | None,
    executor_option: tuple[str, ...],
    **rest: Any,
) -> None:
    """Review a skill against its vision in four stages (orchestrator, builder, QA,
    visionary) and leave behind a validated suite that discriminates. See
    references/review.md.

    Prints the decision file's path on stdout and a summary on stderr. Exit codes: 0
    approved or approved_partial, 1 rejected (or still refine_evaluation after
    --max-rounds), 2 bad input, 3 error (a stage that never gave a usable reply, a model
    that cannot be reached).
    """
    from ..engine.spend import command_meter
    from ..plan.config import nearest_executor_tables
    from ..review import build_role_model, default_qa_fn, load_roles, parse_models, read_goal
    from ..review.pipeline import run_review

    roles_on, qa_on = _executors(executor, backend, qa_executor, mock, mock_replies)
    run_flags = plan_flags(rest, section_flags(*QA_SECTIONS, skip=("shard",)))
    if run_flags["no_jail"]:
        click.echo(f"WARNING: {NO_JAIL}", err=True)
    meter = command_meter(run_flags["max_cost_usd"], run_flags["max_tokens_total"])
    roles = load_roles(roles_dir)
    goal = read_goal(skill_path, vision)
    role_model = build_role_model(
        roles_on,
        models=parse_models(models),
        mock_replies=mock_replies,
        claude_bin=claude_bin,
        base_url=base_url,
        goal=goal,
        options={"jail": _jail(run_flags)},  # a claude-cli role model runs Claude Code jailed
        meter=meter,
    )
    root = Path(state_root)
    qa_fn = default_qa_fn(
        root.resolve(),
        executor=qa_on,
        model=model,
        claude_bin=claude_bin,
        skill_mode=skill_mode,
        log=lambda m: click.echo(f"qa: {m}", err=True),
        executor_options=executor_option,
        executor_tables=nearest_executor_tables(Path.cwd()),
        run_flags=run_flags,
        meter=meter,
    )
    outcome = run_review(
        goal,
        model=role_model,
        roles=roles,
        qa_fn=qa_fn,
        state_root=root,
        max_rounds=max_rounds,
        samples=samples,
        output_suite=Path(output_suite) if output_suite else None,
        log=lambda m: click.echo(m, err=True),
    )
    _print_outcome(outcome)


def _jail(run_flags: dict[str, Any]) -> str:
    """The jail the flags name for what the review runs (--no-jail: none)."""
    return "none" if run_flags["no_jail"] else run_flags["jail"] or "auto"


def _print_outcome(outcome: Any) -> None:
    """The decision on stderr, the decision file's path on stdout; then the exit code."""
    record = outcome.record
    click.echo(
        f"decision: {record['decision']} after {record['rounds']} round(s); suite "
        f"{outcome.suite}; QA report {outcome.qa_report}",
        err=True,
    )
    click.echo(str(outcome.decision_json))
    sys.exit(outcome.exit_code)


def _executors(
    executor: str | None,
    backend: str | None,
    qa_executor: str | None,
    mock: bool,
    mock_replies: str | None,
) -> tuple[str, str]:
    """(the role models' executor, the QA runs' executor) the flags ask for."""
    if backend is not None:
        if executor is not None:
            raise UsageError("--backend is the old name of --executor; give only --executor")
        click.echo("warning: --backend is deprecated; use --executor", err=True)
    if mock and qa_executor not in (None, MOCK):
        raise UsageError("--mock runs the QA on the mock executor; drop --mock or --qa-executor")
    roles = executor or backend or (MOCK if mock_replies or mock else DEFAULT_EXECUTOR)
    if mock_replies and roles != MOCK:
        raise UsageError(f"--mock-replies is for --executor mock, not {roles}")
    # --backend named the role models only: the QA runs kept their own default.
    qa = qa_executor or (MOCK if mock else (executor or DEFAULT_EXECUTOR))
    return roles, qa
