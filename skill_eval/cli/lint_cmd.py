"""`skill-eval lint SKILL_DIR...`"""

from __future__ import annotations

import click

from ..skills import lint_skill
from .common import EXIT_FAIL, EXIT_OK


@click.command("lint")
@click.argument("skills", nargs=-1, required=True, type=click.Path(path_type=str))
def command(skills: tuple[str, ...]) -> None:
    """Check skills against the Agent Skills format, as `skill-eval run` does before it runs.

    SKILLS are skill folders holding SKILL.md (or SKILL.md files). Prints each finding as
    `path:line: error|warning: message` on stdout, or `SKILL: ok` for a skill with none, and
    exits 1 when there is an error, else 0 (for authors and pre-commit hooks). A path with no
    readable SKILL.md (missing, unreadable, over 1 MiB) exits 2.

    \b
    Errors (a run refuses the skill): a SKILL.md that is not UTF-8, an empty SKILL.md, no
    frontmatter, frontmatter that is not valid YAML, a missing or empty `name` or
    `description`.
    Warnings (a run goes on and records them): a `name` that is not 1-64 lowercase letters,
    digits and single hyphens or does not match its folder, a description over 1,024
    characters, a body over 500 lines, unknown frontmatter keys, files SKILL.md links to
    that the folder lacks or spells in another letter case (`see REFERENCE.md` for
    reference.md opens on macOS, not on Linux), links in the folder that lead outside it
    (never followed), and `disable-model-invocation: true`. Where agents part ways the
    warning names them: Codex CLI cuts a description at 1,024 characters and skips a skill
    whose name is longer than 64; OpenCode and Codex ignore Claude Code's `when_to_use` and
    `disable-model-invocation`.
    """
    errors = 0
    for skill in skills:
        findings = lint_skill(skill)
        for finding in findings:
            click.echo(str(finding))
            errors += finding.severity == "error"
        if not findings:  # silence would not tell a clean skill from one never looked at
            click.echo(f"{skill}: ok")
    raise SystemExit(EXIT_FAIL if errors else EXIT_OK)
