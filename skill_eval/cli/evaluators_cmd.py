"""`skill-eval evaluators list | show NAME | validate PATH...`"""

from __future__ import annotations

from pathlib import Path

import click

from ..evaluators import EvaluatorSkill, load_registry, validate_evaluator_paths
from .common import EXIT_OK, EXIT_USAGE

EVALUATORS_DIR = click.option(
    "--evaluators-dir",
    "evaluators_dirs",
    multiple=True,
    type=click.Path(path_type=str, file_okay=False),
    help="Folder of evaluators (one sub-folder per evaluator); highest precedence. Repeatable.",
)
PROJECT_DIR = click.option(
    "--project-dir",
    type=click.Path(path_type=str, file_okay=False),
    default=None,
    help="Project root whose .agents/evaluators/ is searched (default: current directory).",
)
# The flag's old name: "workspace" now means an attempt's working directory.
WORKSPACE_ALIAS = click.option(
    "--workspace",
    "workspace_alias",
    type=click.Path(path_type=str, file_okay=False),
    default=None,
    hidden=True,
    help="Deprecated: use --project-dir.",
)


def _project_dir(project_dir: str | None, workspace_alias: str | None) -> str | None:
    if workspace_alias is not None:
        click.echo("warning: --workspace is deprecated; use --project-dir", err=True)
    return project_dir if project_dir is not None else workspace_alias


@click.group("evaluators")
def command() -> None:
    """Evaluator skills: rubrics with weighted dimensions used by the `rubric` judge.

    Sources, highest precedence first: --evaluators-dir, $XDG_DATA_HOME/skill-eval/evaluators/,
    the project's .agents/evaluators/ (--project-dir), bundled.
    """


def _dims(skill: EvaluatorSkill) -> str:
    return ", ".join(f"{d.name} {d.weight:g}" for d in skill.dimensions)


@command.command("list")
@EVALUATORS_DIR
@PROJECT_DIR
@WORKSPACE_ALIAS
def list_command(
    evaluators_dirs: tuple[str, ...], project_dir: str | None, workspace_alias: str | None
) -> None:
    """List the evaluators in effect, with where each comes from.

    Evaluators hidden by a same-named one of higher precedence are listed as shadowed; files
    that fail to load are reported on stderr (fix them with `evaluators validate`). A
    --evaluators-dir that does not exist is an error (exit 2), as it is for `run`.
    """
    registry = load_registry(evaluators_dirs, _project_dir(project_dir, workspace_alias))
    registry.raise_for_missing_dirs()
    rows = [
        (skill.name, source.kind, ", ".join(skill.categories) or "(fallback)", _dims(skill))
        for skill, source in registry.effective()
    ]
    width = max(len(r[0]) for r in rows)
    swidth = max(len(r[1]) for r in rows)
    for name, kind, cats, dims in rows:
        click.echo(f"{name:<{width}}  {kind:<{swidth}}  categories: {cats}  [{dims}]")
    for skill, source in registry.shadowed():
        click.echo(f"shadowed: {skill.name} ({source.kind}: {skill.path})")
    for problem in registry.problems:
        click.echo(f"warning: {problem}", err=True)


@command.command("show")
@click.argument("name")
@EVALUATORS_DIR
@PROJECT_DIR
@WORKSPACE_ALIAS
def show_command(
    name: str,
    evaluators_dirs: tuple[str, ...],
    project_dir: str | None,
    workspace_alias: str | None,
) -> None:
    """Show one evaluator: source, categories, dimensions and its rubric."""
    registry = load_registry(evaluators_dirs, _project_dir(project_dir, workspace_alias))
    registry.raise_for_missing_dirs()
    skill = registry.get(name)
    source = registry.source_of(skill)
    click.echo(f"name: {skill.name}")
    click.echo(f"source: {source.kind}")
    click.echo(f"path: {skill.path}")
    click.echo(f"description: {skill.description}")
    click.echo(f"categories: {', '.join(skill.categories) or '(none: fallback evaluator)'}")
    click.echo("dimensions:")
    width = max(len(d.name) for d in skill.dimensions)
    for dim in skill.dimensions:
        click.echo(f"  {dim.name:<{width}}  {dim.weight:<5g} {dim.description}")
    click.echo("")
    click.echo(skill.body.rstrip())


@command.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate_command(paths: tuple[Path, ...]) -> None:
    """Validate evaluator SKILL.md files. A folder means its SKILL.md, or every SKILL.md below.

    Exits 0 when all are valid, 2 otherwise; every problem goes to stderr, one line each.
    """
    valid, problems = validate_evaluator_paths(list(paths))
    for problem in problems:
        click.echo(str(problem), err=True)
    for skill in valid:
        click.echo(f"ok: {skill.path} ({skill.name})")
    raise SystemExit(EXIT_OK if not problems else EXIT_USAGE)
