"""`skill-eval gate [SKILL_DIR]...`: the offline pull-request gate (interop/offline_gate.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ..errors import UsageError
from .choices import Choice


@click.command("gate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str), metavar="[SKILL_DIR]...")
@click.option(
    "--changed-since",
    metavar="REF",
    help="Check only the skills whose folder changed since REF (committed since the merge "
    "base of REF and HEAD, uncommitted or untracked): what a pull request touched.",
)
@click.option(
    "--evals-from",
    type=Choice(["head", "base"]),
    default="head",
    show_default=True,
    help="base: judge each changed skill by the evals REF holds for it, where it has any (a "
    "pull request cannot weaken the evals it is judged by; a new skill uses its own). Needs "
    "--changed-since.",
)
@click.option(
    "--allow-unjudged",
    is_flag=True,
    help="A changed skill with no evals at all does not fail the gate (it is listed as not "
    "judged either way).",
)
@click.option("--summary", metavar="FILE", help="Append the report as markdown to FILE.")
@click.option(
    "--jail",
    metavar="NAME",
    default="auto",
    show_default=True,
    help="Where the evals' code (python and pytest judges) runs: auto (the first of "
    "bubblewrap, container, docker that runs here), bubblewrap, container, docker, or a "
    "plugin's provider.",
)
def command(
    paths: tuple[str, ...],
    changed_since: str | None,
    evals_from: str,
    allow_unjudged: bool,
    summary: str | None,
    jail: str,
) -> None:
    """The offline pull-request gate: check that the changed skills' evals are sound, with
    no model and no key. It says nothing of whether a skill is better or worse.

    SKILL_DIR is a skill folder or a folder searched for them at any depth (default: the
    current folder). For each skill that changed: the evals it is judged by must load as
    written, every deterministic judge must pass its task's reference (where there is one)
    and fail an empty output, and SKILL.md must lint without errors; model-graded checks and
    trigger queries are listed as not checked offline. A skill whose evals this change
    removed or emptied fails; one with no evals at all is not judged, which, when a change
    is judged (--changed-since), fails unless --allow-unjudged. Code the evals name runs
    only in the jail, with no secret.

    \b
    Exit codes:
    0  every changed skill's evals are sound (or there is no changed skill)
    1  some are not, or were removed, or a changed skill is not judged (--changed-since,
       without --allow-unjudged)
    3  a check could not run here (no jail for the evals' code)
    2  bad input or usage
    """
    from ..interop.offline_gate import offline_gate
    from ..report.gate_report import gate_markdown, gate_text

    if evals_from == "base" and not changed_since:
        raise UsageError("--evals-from base needs --changed-since REF (the base)")
    with tempfile.TemporaryDirectory(prefix="skill-eval-gate-") as work:
        report = offline_gate(
            paths or (".",),
            Path(work),
            changed_since=changed_since,
            evals_from="base" if evals_from == "base" else "head",
            allow_unjudged=allow_unjudged,
            jail=jail,
        )
    click.echo(gate_text(report), nl=False)
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(gate_markdown(report))
        except OSError as exc:
            raise UsageError(f"--summary {summary}: cannot write: {exc.strerror or exc}") from None
    raise SystemExit(report.exit_code)
