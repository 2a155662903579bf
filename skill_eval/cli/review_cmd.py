"""`skill-eval review SKILL`: flags in, one call to run_review, the decision out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import SkillEvalError
from .common import EXIT_ERROR, exit_code, fail
from .run_flags import flag


@click.command("review")
@click.argument("skill_path", metavar="SKILL", type=click.Path(path_type=str))
@click.option(
    "--vision", metavar="FILE", help="What the skill is for (default: the SKILL.md description)."
)
@flag(
    "state-root",
    show_default=True,
    help="Directory for the review (<state-root>/reviews/<id>/) and QA runs.",
)
@click.option(
    "--backend",
    type=click.Choice(["anthropic", "claude-cli", "mock"]),
    help="Where the role models run (default: mock with --mock or --mock-replies, "
    "else claude-cli). mock without --mock-replies: built-in scripted replies "
    "(a dry run of the pipeline; no model reads the skill).",
)
@click.option(
    "--models",
    metavar="ROLE=MODEL,...",
    help="Model per role: orchestrator=...,builder=...,visionary=...",
)
@click.option(
    "--mock-replies",
    metavar="FILE",
    help="Scripted replies per role (YAML: role -> list of replies), for CI.",
)
@click.option(
    "--roles-dir", metavar="DIR", help="Role prompts (<role>.md) that replace the shipped ones."
)
@flag(
    "executor",
    help="Executor of the QA runs (default claude-cli; mock runs the draft's mock_outputs.yaml).",
)
@flag(
    "mock",
    help="Offline: --executor mock for the QA runs, and "
    "--backend mock for the role models unless --backend says otherwise.",
)
@flag("model", help="Model of the QA runs [env SKILL_EVAL_MODEL].")
@flag("skill-mode", help="How the QA runs deliver the skill (as for `skill-eval run`).")
@flag("samples", default=2, show_default=True, help="Attempts per task and arm in QA.")
@click.option(
    "--max-rounds",
    type=int,
    default=3,
    show_default=True,
    help="Rounds at most (each refine_evaluation starts one more).",
)
@click.option(
    "--output-suite",
    metavar="DIR",
    help="Where the final suite goes (default <review dir>/suite); must be new or empty.",
)
@flag("claude-bin", help="The claude CLI (role models and QA).")
@click.option("--base-url", metavar="URL", help="Messages API base URL for the role models.")
def command(
    skill_path: str,
    vision: str | None,
    state_root: str,
    backend: str | None,
    models: str | None,
    mock_replies: str | None,
    roles_dir: str | None,
    executor: str | None,
    mock: bool,
    model: str | None,
    skill_mode: str,
    samples: int,
    max_rounds: int,
    output_suite: str | None,
    claude_bin: str | None,
    base_url: str | None,
) -> None:
    """Review a skill against its vision in four stages (orchestrator, builder, QA,
    visionary) and leave behind a validated suite that discriminates. See
    references/review.md.

    Prints the decision file's path on stdout and a summary on stderr. Exit codes: 0
    approved or approved_partial, 1 rejected (or still refine_evaluation after
    --max-rounds), 2 bad input, 3 error (a stage that never gave a usable reply, a model
    that cannot be reached).
    """
    from ..review import build_role_model, default_qa_fn, load_roles, parse_models, read_goal
    from ..review.pipeline import run_review
    from ..review.stages import ReviewError

    if mock and executor not in (None, "mock"):
        fail("--mock means --executor mock; drop one of them")
    try:
        role_models = parse_models(models)
        chosen = backend or ("mock" if mock_replies or mock else "claude-cli")
        if mock_replies and chosen != "mock":
            fail(f"--mock-replies is for --backend mock, not {chosen}")
        roles = load_roles(roles_dir)
        goal = read_goal(skill_path, vision)
        role_model = build_role_model(
            chosen,
            models=role_models,
            mock_replies=mock_replies,
            claude_bin=claude_bin,
            base_url=base_url,
            goal=goal,
        )
        root = Path(state_root)
        qa_fn = default_qa_fn(
            root.resolve(),
            executor="mock" if mock else (executor or "claude-cli"),
            model=model,
            claude_bin=claude_bin,
            skill_mode=skill_mode,
            log=lambda m: click.echo(f"qa: {m}", err=True),
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
    except ReviewError as exc:
        fail(str(exc), EXIT_ERROR)
    except SkillEvalError as exc:
        lines = str(exc).splitlines() or [type(exc).__name__]
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        fail(lines[0] + more, exit_code(exc))
    record = outcome.record
    click.echo(
        f"decision: {record['decision']} after {record['rounds']} round(s); suite "
        f"{outcome.suite}; QA report {outcome.qa_report}",
        err=True,
    )
    click.echo(str(outcome.decision_json))
    sys.exit(outcome.exit_code)
