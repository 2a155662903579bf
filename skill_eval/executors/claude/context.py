"""Context mode for Claude Code: the skill in the workspace's CLAUDE.md (skills/context.py),
and that file the only CLAUDE.md the CLI loads.

ISOLATION_ENV sets CLAUDE_CODE_DISABLE_CLAUDE_MDS, and a context attempt alone runs without it
(launch.Invocation.claude_md) and with `--setting-sources project`. Claude Code 2.1.330 then
reads the working directory's CLAUDE.md, .claude/CLAUDE.md and .claude/rules/, the same in
every folder above it, the CLAUDE.md of a sub-folder the agent works in, and the managed
policy file (/etc/claude-code/CLAUDE.md and its rules); the user's own (~/.claude/CLAUDE.md,
CLAUDE.local.md) need the `user` and `local` sources, which stay off. In the jail the working
directory is /workspace under an empty root and /etc/claude-code is not mounted, so only the
task's own files could bring another: a task whose files hold CLAUDE.md, CLAUDE.local.md or a
.claude folder anywhere is refused. Without the jail (--no-jail) the folders above the
attempt's temporary workspace and the managed folder are the host's: an attempt is refused
while any of them holds such a file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ...core.model import ExecutionRequest
from ...jail.providers import isolated
from ...skills.context import context_problem, remove_context, write_context

CONTEXT_FILE = "CLAUDE.md"
FOREIGN = ("CLAUDE.md", "CLAUDE.local.md", ".claude")  # anywhere in the task's files
ABOVE = ("CLAUDE.md", ".claude/CLAUDE.md", ".claude/rules")  # in a folder above the workspace
MANAGED = Path("/etc/claude-code")
DESCRIBED = (
    "the CLAUDE.md skill-eval writes (the skill) and no other: CLAUDE_CODE_DISABLE_CLAUDE_MDS "
    "unset for context attempts alone"
)


def place(request: ExecutionRequest, workspace: Path | None, jail: str) -> str | None:
    """Write the request's skill into `<workspace>/CLAUDE.md`; why not, when another
    CLAUDE.md would load beside it (nothing is written then)."""
    if request.skill is None or workspace is None:
        return None
    problem = context_problem(workspace, CONTEXT_FILE, FOREIGN)
    if problem is None and not isolated(jail):
        problem = host_problem(Path(tempfile.gettempdir()))
    if problem is None:
        write_context(request.skill, workspace, CONTEXT_FILE)
    return problem


def host_problem(temp: Path) -> str | None:
    """The first CLAUDE.md an unjailed attempt under `temp` would load besides its own."""
    folders = [temp.resolve(), *temp.resolve().parents]
    found = [folder / rel for folder in folders for rel in ABOVE]
    found += [MANAGED / "CLAUDE.md", MANAGED / ".claude" / "rules"]
    for path in found:
        if path.exists():
            return (
                f"{path} exists: Claude Code would load it beside the skill's CLAUDE.md in a "
                "context arm without the jail; remove it, or run in the jail"
            )
    return None


def remove(workspace: Path) -> None:
    """What `place` wrote goes: the judges see only the agent's work."""
    remove_context(workspace, CONTEXT_FILE)


__all__ = ["CONTEXT_FILE", "DESCRIBED", "host_problem", "place", "remove"]
