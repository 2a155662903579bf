"""Which OpenCode tools an attempt gets: the task's `allowed_tools` (else the run's), in Claude
Code's names, become OpenCode's permission rules: every tool denied (`"*": "deny"`, which
also takes it out of the request) but the ones allowed. Installed mode always offers the
skill tool (and, with no tool list, reads: Skill, Read, Glob, Grep, as Claude Code gets).

Measured with opencode-ai 1.18.33: a denied tool is not offered at all; `edit` covers its
`write` and `edit` tools alike (so allowing Write allows Edit too: said in the record).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..claude.tools import INSTALLED_DEFAULT, tool_name

# Claude Code's tool -> the OpenCode permission that offers it.
PERMISSIONS = {
    "Read": "read",
    "Write": "edit",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "list",
    "Bash": "bash",
    "Skill": "skill",
    "WebFetch": "webfetch",
    "WebSearch": "websearch",
    "Task": "task",
    "Agent": "task",
    "TodoWrite": "todowrite",
}


@dataclass(frozen=True)
class OpenCodeTools:
    """The tools of one attempt: `offered` (Claude Code's names, as asked), the OpenCode
    permissions allowed, and the names OpenCode has no tool for (not offered)."""

    offered: tuple[str, ...]
    allowed: tuple[str, ...]
    unknown: tuple[str, ...] = ()

    @property
    def bash(self) -> bool:
        return "bash" in self.allowed

    def permission(self) -> dict[str, str]:
        """OpenCode's `permission` config: everything denied but what is allowed."""
        return {"*": "deny", **{name: "allow" for name in self.allowed}}

    def isolation(self, bash: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "tools": list(self.offered),
            "opencode_permissions": list(self.allowed),
            "bash": bash if self.bash else "not offered",
        }
        if "edit" in self.allowed:
            record["edit"] = "OpenCode's edit permission offers both its write and edit tools"
        if self.unknown:
            record["not_offered"] = list(self.unknown)
        return record


def plan_tools(specs: tuple[str, ...] | None, *, installed: bool) -> OpenCodeTools:
    """The tools for `specs` (the task's allowed_tools, else the run's; none: no tool, or in
    installed mode Claude Code's INSTALLED_DEFAULT)."""
    names = [tool_name(s) for s in specs or () if s.strip()]
    if not names and installed:
        names = list(INSTALLED_DEFAULT)
    if installed and "Skill" not in names:
        names.append("Skill")
    names = list(dict.fromkeys(names))
    allowed = [PERMISSIONS[n] for n in names if n in PERMISSIONS]
    unknown = tuple(n for n in names if n not in PERMISSIONS)
    return OpenCodeTools(tuple(names), tuple(dict.fromkeys(allowed)), unknown)
