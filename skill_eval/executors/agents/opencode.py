"""`opencode`: each attempt is one `opencode run --format json` (opencode-ai, pinned 1.18.33 by
scripts/install_agents.sh) in a jail of its own (agents/executor.py), against an OpenAI-style
Chat Completions API through its bundled openai-compatible provider.

Isolated as references/agents.md verified: the whole config in OPENCODE_CONFIG_CONTENT (one
provider, the run's model, the tools as permissions, no formatter, LSP, snapshots, MCP or
plugins), HOME and XDG folders empty per attempt, `--pure`, the OPENCODE_DISABLE_* switches
(autoupdate, model list, LSP downloads, sharing, default plugins, Claude Code's and `.agents`
skills and prompts: only `.opencode/skills` counts), the npm registry off; `--title` spares
the title request. The project's own OpenCode config cannot be switched off without its
skills (OPENCODE_DISABLE_PROJECT_CONFIG hides `.opencode/skills` too), so a task whose files
hold `opencode.json(c)` or `.opencode/` is refused. OpenCode's skill tool needs `rg`: one is
shown read-only in the jail. Its bash tool runs each command through $SHELL, which in the
jail is agent_shell_c.sh: a Landlock domain of its own per command (no TCP, OpenCode and the
holder out of reach), as Claude Code's Bash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...core.model import ExecutionRequest
from ...errors import ExecutorError
from ...jail import Mount
from ...jail.providers import isolated
from ...jail.session import RUN_DIR, JailedCommand
from ..agent_launch import Start
from ..base import ExecutorSpec
from . import binaries
from .chat_dialect import CHAT
from .config import OPENCODE_SCHEMA, OpenCodeConfig
from .delivery import Delivered
from .executor import AgentCliExecutor
from .opencode_events import OpenCodeReader
from .opencode_tools import OpenCodeTools, plan_tools

PROVIDER = "skill-eval"
TOOLS_DIR = "/opt/skill-eval/bin"  # rg, inside the jail
SYSTEM_FILE = "skill-eval-instructions.md"  # in HOME: system mode's skill text
# A project's own OpenCode config: never in a task's files (see the module's docstring).
PROJECT_CONFIG = ("opencode.json", "opencode.jsonc", ".opencode")
OPENCODE_SWITCHES = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",  # no CLAUDE.md, no .claude/skills
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",  # no .agents/skills: only .opencode/skills
    "npm_config_offline": "true",  # else it fetches plugin metadata from npm at every start
}


class OpenCodeExecutor(AgentCliExecutor):
    """One jailed OpenCode run per attempt. Thread-safe."""

    name = "opencode"
    cli = "opencode"
    package = "opencode-ai@1.18.33"  # scripts/install_agents.sh installs this pin
    dialect = CHAT
    skills_dir = ".opencode/skills"

    def __init__(self, config: OpenCodeConfig) -> None:
        super().__init__(config, config.opencode_bin)
        self.config: OpenCodeConfig = config
        self.rg = binaries.find_rg()

    def preflight(self) -> None:
        super().preflight()
        if self.rg is None and not self.in_image():  # (the agent image holds its own rg)
            raise ExecutorError(
                "OpenCode's skill tool needs ripgrep (rg) on PATH, and offline it cannot "
                "download one: apt-get install ripgrep, or scripts/install_agents.sh (Codex's "
                "package bundles one, found there)"
            )

    def mounts(self) -> list[Mount]:
        mounts = super().mounts()
        if self.rg is not None and not self.in_image():
            mounts.append(Mount("ro", f"{TOOLS_DIR}/rg", Path(self.rg)))
        return mounts

    def tools(self, request: ExecutionRequest) -> OpenCodeTools:
        settings = request.settings  # the task's tools, else --allowed-tools
        specs = settings.tools if settings.tools is not None else self.config.allowed_tools
        return plan_tools(specs, installed=settings.mode(self.config.skill_mode) == "installed")

    def check_request(self, request: ExecutionRequest) -> str | None:
        root = Path(request.workspace) if request.workspace is not None else None
        for name in PROJECT_CONFIG:
            if root is not None and ((root / name).exists() or (root / name).is_symlink()):
                return (
                    f"task {request.task.id!r}: its files hold {name}, which would configure "
                    "OpenCode (its tools, permissions, agents) in one arm's favour or both: "
                    "the opencode executor refuses a task that configures it"
                )
        if isolated(self.jail) and self.tools(request).bash and not self.confined:
            return (
                f"task {request.task.id!r} allows Bash, but this kernel has no Landlock "
                "(Linux 5.13 or newer), which the jail needs to keep OpenCode's bash away from "
                "OpenCode; drop Bash, or pass --no-jail (then bash runs unconfined)"
            )
        return None

    def opencode_config(self, request: ExecutionRequest, home: str, system: bool) -> dict[str, Any]:
        base_url, key = self.api()
        model = str(self.model)
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                PROVIDER: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": PROVIDER,
                    "options": {"baseURL": base_url, "apiKey": key},
                    "models": {model: {"name": model}},
                }
            },
            "model": f"{PROVIDER}/{model}",
            "autoupdate": False,
            "share": "disabled",
            "formatter": False,
            "lsp": False,
            "snapshot": False,
            "mcp": {},
            "plugin": [],
            "permission": self.tools(request).permission(),
        }
        if (turns := request.settings.turns(self.config.max_turns)) is not None:
            config["agent"] = {"build": {"steps": turns}}
        if system:
            config["instructions"] = [f"{home}/{SYSTEM_FILE}"]
        return config

    def start(self, jail: JailedCommand, request: ExecutionRequest, delivery: Delivered) -> Start:
        jailed = isolated(self.jail)
        path = f"{TOOLS_DIR}:/usr/local/bin:/usr/bin:/bin" if jailed else _host_path(self.rg)
        env = self.base_env(jail.home, path)
        config = self.opencode_config(request, jail.home, delivery.system is not None)
        env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
        env.update(OPENCODE_SWITCHES)
        if self.confined:  # each bash command in a Landlock domain of its own
            env["SHELL"] = f"{RUN_DIR}/agent_shell_c.sh"
            env["SKILL_EVAL_PYTHON"] = jail.python
        files = {}
        if delivery.system is not None:
            files[f"{jail.home}/{SYSTEM_FILE}"] = delivery.system.encode("utf-8")
        # --title: no title-generation request; --pure: no external plugins; the prompt on
        # stdin (no argv limit).
        argv = [str(self.command()), "run", "--pure", "--format", "json", "--title", "skill-eval"]
        return Start(argv, env, files)

    def reader(self, stop_at_skill: str | None) -> OpenCodeReader:
        return OpenCodeReader(stop_at_skill=stop_at_skill)

    def tools_record(self, request: ExecutionRequest) -> dict[str, Any]:
        if not isolated(self.jail):
            bash = "unconfined (--no-jail)"
        else:
            bash = "in the jail, each command in its own Landlock domain (no network)"
        return self.tools(request).isolation(bash)

    def _ripgrep(self) -> str:
        if self.in_image():
            return "the jail image's own"
        return "shown read-only" if self.rg else "missing"

    def describe(self) -> dict[str, Any]:
        mode = self.config.skill_mode
        planned = plan_tools(self.config.allowed_tools, installed=mode == "installed")
        return {
            "kind": "opencode",
            "driver": "run --format json",
            "version": self.version(),
            "model": self.model,
            "base_url": self.base_url,
            "skill_mode": mode,
            "skill_folder": mode in ("installed", "context"),
            "isolation": {
                **self.isolation(None, mode),
                "env": dict(OPENCODE_SWITCHES),
                "skills": ".opencode/skills in the workspace only (installed mode)",
                "context_file": "AGENTS.md in the workspace (context mode)",
                "permission": planned.permission(),
                "max_turns": self.config.max_turns,
                "ripgrep": self._ripgrep(),
            },
        }


def _host_path(rg: str | None) -> str:
    folders = [str(Path(rg).parent)] if rg else []
    return ":".join([*folders, "/usr/local/bin", "/usr/bin", "/bin"])


SPEC = ExecutorSpec(
    name="opencode",
    package=OpenCodeExecutor.package,
    skill_roots=(OpenCodeExecutor.skills_dir, ".opencode/skill"),  # the singular, too
    summary="one jailed OpenCode run per attempt (opencode-ai on PATH, or the pinned one "
    "scripts/install_agents.sh installs) against an OpenAI-style Chat Completions API",
    config_cls=OpenCodeConfig,
    schema=OPENCODE_SCHEMA,
    build=OpenCodeExecutor,
)
