"""Which Claude Code tools an attempt gets, which run without asking, and how Bash is confined.

Measured with Claude Code 2.1.330 (tests/test_claude_code_executor.py pins each point):
- `--permission-mode acceptEdits` with the file tools offered (`tools`) but NOT pre-approved
  (`allowed_tools`) runs them inside the working directory and refuses them outside it (an
  absolute path, `../`, a symlink pointing out). A file tool in `allowed_tools` would run
  anywhere, so file tools are never pre-approved. (In a jail, "anywhere" is the jail anyway.)
- `Skill` must be pre-approved: a skill whose frontmatter has `allowed-tools` is refused
  otherwise. Its `allowed-tools` then pre-approve tools the way Claude Code does, but only
  among the tools offered, and a `Write` outside the working directory stays refused.
- `Bash` in a jail runs each command in a Landlock domain of its own (jail/confine.py, through
  CLAUDE_CODE_SHELL_PREFIX): it cannot touch Claude Code or the jail's holder, nor open a TCP
  connection. Claude Code's own sandbox cannot nest in the jail (it needs a fresh /proc).
  Without a jail (--no-jail) Bash runs in Claude Code's sandbox where that runs (bubblewrap and
  socat on Linux, sandbox-exec on macOS), or unconfined with --unsandboxed-bash.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from typing import Any, Literal

from ...errors import UsageError

# Installed mode without a tool list: load the skill and read its files, change nothing.
INSTALLED_DEFAULT = ("Skill", "Read", "Glob", "Grep")
# Tools Claude Code carries out with a server tool of the API (its WebSearch sends a request
# with `web_search_*`): the jail's forward refuses those (dialect.py), so a jailed run does not
# offer them.
SERVER_TOOLS = frozenset({"WebSearch"})
# Tools whose path is checked against the working directory under acceptEdits.
FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"})
SANDBOX_SETTINGS = {
    "enabled": True,
    "autoAllowBashIfSandboxed": True,
    "allowUnsandboxedCommands": False,
    "failIfUnavailable": True,
}
BashIsolation = Literal["none", "jail", "sandbox", "unsandboxed"]


def tool_name(spec: str) -> str:
    """`Bash(git *)` -> `Bash`."""
    return spec.split("(", 1)[0].strip()


def sandbox_available() -> str | None:
    """What Claude Code's own sandbox would run on here (outside a jail), or None."""
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
    sandbox: str | None = None  # Claude Code's sandbox's kind when Bash runs in it

    def settings(self) -> str:
        """The `--settings` JSON: no hooks at all, and the sandbox when Bash runs in it."""
        settings: dict[str, Any] = {"disableAllHooks": True}
        if self.bash == "sandbox":
            settings["sandbox"] = SANDBOX_SETTINGS
        return json.dumps(settings, separators=(",", ":"))

    def isolation(self) -> dict[str, Any]:
        """What the attempt's record says about its tools' confinement."""
        bash = {
            "jail": "in the jail, each command in its own Landlock domain (no network)",
            "sandbox": f"Claude Code's sandbox ({self.sandbox})",
        }.get(self.bash, self.bash)
        return {
            "tools": list(self.tools),
            "allowed_tools": list(self.allowed),
            "files": "working directory only (acceptEdits, file tools not pre-approved)",
            "bash": bash,
        }


class ToolPlanError(UsageError, ValueError):
    """The task asks for a tool this run cannot confine."""


@dataclass(frozen=True)
class BashConfinement:
    """How this run can confine Bash: in the jail (`jailed`, when Landlock works there),
    else Claude Code's `sandbox` kind, else only `unsandboxed` if the user said so."""

    jailed: bool = False
    landlock: bool = False
    sandbox: str | None = None
    unsandboxed: bool = False

    def mode(self, where: str) -> tuple[BashIsolation, str | None]:
        if self.jailed:
            if self.landlock:
                return "jail", None
            raise ToolPlanError(
                f"{where} allows Bash, but this kernel has no Landlock (Linux 5.13 or newer), "
                "which the jail needs to keep Bash away from Claude Code; drop Bash, or pass "
                "--no-jail (then Bash runs in Claude Code's own sandbox, or unconfined with "
                "--unsandboxed-bash)"
            )
        if self.sandbox is not None:
            return "sandbox", self.sandbox  # autoAllowBashIfSandboxed approves it in there
        if self.unsandboxed:
            return "unsandboxed", None
        raise ToolPlanError(
            f"{where} allows Bash, but Claude Code's sandbox cannot run here (Linux needs "
            "bwrap and socat: apt-get install bubblewrap socat); install it, or pass "
            "--unsandboxed-bash to run Bash without confinement"
        )


def plan_tools(
    specs: tuple[str, ...] | None,
    *,
    installed: bool,
    bash: BashConfinement,
    task_id: str = "",
) -> ToolPlan:
    """The tool plan for `specs` (the task's `allowed_tools`, else the run's; None or empty:
    none, or `INSTALLED_DEFAULT` in installed mode, where `Skill` is always offered)."""
    specs = tuple(s.strip() for s in specs or () if s.strip())
    if not specs and installed:
        specs = INSTALLED_DEFAULT
    names = list(dict.fromkeys(tool_name(s) for s in specs))
    if bash.jailed and (server := [n for n in names if n in SERVER_TOOLS]):
        where = f"task {task_id!r}" if task_id else "--allowed-tools"
        raise ToolPlanError(
            f"{where} allows {server[0]}, which Claude Code runs as a server tool on the API's "
            "side (a request the model's provider carries out on the web): the jail's forward "
            "never carries one; drop it, or pass --no-jail"
        )
    if installed and "Skill" not in names:
        names.append("Skill")
    allowed = [s for s in specs if tool_name(s) not in FILE_TOOLS and tool_name(s) != "Bash"]
    if installed and not any(tool_name(s) == "Skill" for s in allowed):
        allowed.append("Skill")
    isolation: BashIsolation = "none"
    sandbox = None
    if "Bash" in names:
        isolation, sandbox = bash.mode(f"task {task_id!r}" if task_id else "--allowed-tools")
        if isolation in ("jail", "unsandboxed"):
            allowed += [s for s in specs if tool_name(s) == "Bash"]
    return ToolPlan(tuple(names), tuple(dict.fromkeys(allowed)), isolation, sandbox)
