"""Which Claude Code tools an attempt gets, which run without asking, and how they are confined.

Measured with Claude Code 2.1.330 (tests/test_claude_code_executor.py pins each point):
- `--permission-mode acceptEdits` with the file tools offered (`tools`) but NOT pre-approved
  (`allowed_tools`) runs them inside the working directory and refuses them outside it (an
  absolute path, `../`, a symlink pointing out). A file tool in `allowed_tools` would run
  anywhere, so file tools are never pre-approved.
- `Skill` must be pre-approved: a skill whose frontmatter has `allowed-tools` is refused
  otherwise. Its `allowed-tools` then pre-approve tools the way Claude Code does, but only
  among the tools offered, and a `Write` outside the working directory stays refused.
- `Bash` is confined only by Claude Code's own sandbox (bubblewrap + socat on Linux,
  sandbox-exec on macOS): offered only when the sandbox is available, or when the user says
  `--unsandboxed-bash`.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import UsageError

# Installed mode without a tool list: load the skill and read its files, change nothing.
INSTALLED_DEFAULT = ("Skill", "Read", "Glob", "Grep")
# Tools whose path is checked against the working directory under acceptEdits.
FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
SANDBOX_SETTINGS = {
    "enabled": True,
    "autoAllowBashIfSandboxed": True,
    "allowUnsandboxedCommands": False,
    "failIfUnavailable": True,
}
BashIsolation = Literal["none", "sandbox", "unsandboxed"]


def tool_name(spec: str) -> str:
    """`Bash(git *)` -> `Bash`."""
    return spec.split("(", 1)[0].strip()


def sandbox_available() -> str | None:
    """What Claude Code's sandbox would run on here, or None when it cannot run."""
    if sys.platform.startswith("linux"):
        bwrap, socat = shutil.which("bwrap"), shutil.which("socat")
        return "bubblewrap" if bwrap and socat else None
    if sys.platform == "darwin":
        return "seatbelt" if shutil.which("sandbox-exec") else None
    return None


@dataclass(frozen=True)
class ToolPlan:
    """The tools of one attempt: `tools` offered, `allowed` pre-approved, how Bash is run."""

    tools: tuple[str, ...]
    allowed: tuple[str, ...]
    bash: BashIsolation = "none"
    sandbox: str | None = None  # the sandbox's kind when Bash runs in it

    def settings(self) -> str:
        """The `--settings` JSON: no hooks at all, and the sandbox when Bash runs in it."""
        settings: dict[str, Any] = {"disableAllHooks": True}
        if self.bash == "sandbox":
            settings["sandbox"] = SANDBOX_SETTINGS
        return json.dumps(settings, separators=(",", ":"))

    def isolation(self) -> dict[str, Any]:
        """What the attempt's record says about its confinement."""
        return {
            "tools": list(self.tools),
            "allowed_tools": list(self.allowed),
            "files": "working directory only (acceptEdits, file tools not pre-approved)",
            "bash": self.bash if self.bash != "sandbox" else f"sandbox ({self.sandbox})",
        }


class ToolPlanError(UsageError, ValueError):
    """The task asks for a tool this run cannot confine."""


def plan_tools(
    specs: tuple[str, ...] | None,
    *,
    installed: bool,
    unsandboxed_bash: bool,
    sandbox: str | None,
    task_id: str = "",
) -> ToolPlan:
    """The tool plan for `specs` (the task's `allowed_tools`, else the run's; None or empty:
    none, or `INSTALLED_DEFAULT` in installed mode, where `Skill` is always offered)."""
    specs = tuple(s.strip() for s in specs or () if s.strip())
    if not specs and installed:
        specs = INSTALLED_DEFAULT
    names = list(dict.fromkeys(tool_name(s) for s in specs))
    if installed and "Skill" not in names:
        names.append("Skill")
    allowed = [s for s in specs if tool_name(s) not in FILE_TOOLS and tool_name(s) != "Bash"]
    if installed and not any(tool_name(s) == "Skill" for s in allowed):
        allowed.append("Skill")
    bash: BashIsolation = "none"
    if "Bash" in names:
        if sandbox is not None:
            bash = "sandbox"  # autoAllowBashIfSandboxed approves it inside the sandbox
        elif unsandboxed_bash:
            bash = "unsandboxed"
            allowed += [s for s in specs if tool_name(s) == "Bash"]
        else:
            where = f"task {task_id!r}" if task_id else "--allowed-tools"
            raise ToolPlanError(
                f"{where} allows Bash, but Claude Code's sandbox cannot run here (Linux needs "
                "bwrap and socat: apt-get install bubblewrap socat); install it, or pass "
                "--unsandboxed-bash to run Bash without confinement"
            )
    return ToolPlan(
        tools=tuple(names),
        allowed=tuple(dict.fromkeys(allowed)),
        bash=bash,
        sandbox=sandbox if bash == "sandbox" else None,
    )
