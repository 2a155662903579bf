"""`codex`: each attempt is one `codex exec --json` (@openai/codex, pinned 0.171.0 by
scripts/install_agents.sh; its native binary, not the node launcher) in a jail of its own
(agents/executor.py), against an OpenAI-style Responses API (`wire_api = "responses"`).

Isolated as references/agents.md verified: CODEX_HOME, HOME and the XDG folders empty per
attempt, `--ignore-user-config` and `--strict-config`, one model provider given with `-c`
(the forward's base URL, the placeholder key's variable, its own retries), no analytics, no
update check, no bundled skills, no web search. Codex's own sandbox (a bundled bubblewrap)
cannot nest in ours, so it runs with `-s danger-full-access`: its commands are confined by
skill-eval's jail and the Landlock domain Codex itself runs in (no TCP but to the forward,
the holder out of reach); they can reach Codex itself (its commands run in a shell the model
may choose, so no wrapper could hold them). Codex has no tool switches: `allowed_tools` is
not enforced (its shell reads, writes and loads skills); the record says so. A prompt that
names the skill as `$name` makes Codex load it before the model decides anything: a trigger
query doing so is refused, any other attempt's record says so (`skill_loaded_by_prompt`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...core.model import ExecutionRequest
from ...jail.session import JailedCommand
from ..agent_launch import Start
from ..base import ExecutorSpec
from .codex_events import CodexReader
from .config import CODEX_SCHEMA, CodexConfig
from .delivery import Delivered
from .executor import INSIDE_KEY, AgentCliExecutor
from .responses_dialect import RESPONSES

PROVIDER = "skill-eval"
ISOLATION_CONFIG = (
    "analytics.enabled=false",  # else an offline start waits about 5 s
    "check_for_update_on_startup=false",
    "skills.bundled.enabled=false",  # its six bundled skills would be in every request
    'web_search="disabled"',
)


def names_skill(prompt: str, name: str) -> bool:
    """Whether `prompt` mentions the skill as `$name`, which makes Codex put the skill's text
    into the model's context itself, before the model's first turn (observed on 0.171.0:
    `$notes-skill` did, `notes-skill` and `$notes-skillful` did not)."""
    return re.search(rf"\${re.escape(name)}(?![A-Za-z0-9_-])", prompt) is not None


def toml_string(text: str) -> str:
    """`text` as a TOML basic string (JSON's escapes are TOML's, but for DEL)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


class CodexExecutor(AgentCliExecutor):
    """One jailed Codex run per attempt. Thread-safe."""

    name = "codex"
    cli = "codex"
    package = "@openai/codex@0.171.0"  # scripts/install_agents.sh installs this pin
    dialect = RESPONSES
    skills_dir = ".agents/skills"

    def __init__(self, config: CodexConfig) -> None:
        super().__init__(config, config.codex_bin)
        self.config: CodexConfig = config

    def check_request(self, request: ExecutionRequest) -> str | None:
        skill = request.skill
        if (
            skill
            and request.settings.stop_on_skill
            and names_skill(request.task.prompt, skill.name)
        ):
            return (
                f"trigger task {request.task.id!r}: its query names ${skill.name}, which makes "
                "Codex load the skill itself before the model decides anything; a trigger "
                "query must not name the skill that way"
            )
        return None

    def request_meta(self, request: ExecutionRequest) -> dict[str, Any]:
        skill = request.skill
        if skill is None or not names_skill(request.task.prompt, skill.name):
            return {}
        return {
            "skill_loaded_by_prompt": f"the prompt names ${skill.name}: Codex put the "
            "skill into the model's context before its first turn (no Skill call is recorded)"
        }

    def provider(self) -> str:
        base_url, _ = self.api()
        retries = self.config.api_retries
        return (
            f"{{name={toml_string(PROVIDER)},base_url={toml_string(base_url)},"
            f'env_key="{INSIDE_KEY}",wire_api="responses",'
            f"request_max_retries={retries},stream_max_retries={retries}}}"
        )

    def start(self, jail: JailedCommand, request: ExecutionRequest, delivery: Delivered) -> Start:
        env = self.base_env(jail.home)
        env["CODEX_HOME"] = f"{jail.home}/.codex"
        env[INSIDE_KEY] = self.api()[1]
        argv = [
            str(self.command()),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--ignore-user-config",
            "--strict-config",
            "-s",
            "danger-full-access",  # its sandbox cannot nest in the jail: ours confines it
            "-c",
            f"model_provider={PROVIDER}",
            "-c",
            f"model_providers.{PROVIDER}={self.provider()}",
        ]
        for setting in ISOLATION_CONFIG:
            argv += ["-c", setting]
        if delivery.system is not None:
            argv += ["-c", f"developer_instructions={toml_string(delivery.system)}"]
        argv += ["-m", str(self.model), "-"]  # the prompt on stdin (no argv limit)
        return Start(argv, env, {f"{jail.home}/.codex/.skill-eval": b""})

    def reader(self, stop_at_skill: str | None) -> CodexReader:
        return CodexReader(stop_at_skill=stop_at_skill)

    def tools_record(self, request: ExecutionRequest) -> dict[str, Any]:
        asked = request.settings.tools if request.settings.tools is not None else ()
        return {
            "tools": "Codex's own (a shell; apply_patch where the model has it)",
            "allowed_tools": list(asked),
            "allowed_tools_enforced": False,
            "max_turns": request.settings.max_turns,
            "max_turns_enforced": False,  # Codex exec has no turn limit; the timeout holds
            "sandbox": "danger-full-access (Codex's own cannot nest): commands confined by "
            "the jail and the CLI's Landlock domain",
        }

    def describe(self) -> dict[str, Any]:
        mode = self.config.skill_mode
        return {
            "kind": "codex",
            "driver": "exec --json",
            "version": self.version(),
            "model": self.model,
            "base_url": self.base_url,
            "skill_mode": mode,
            "skill_folder": mode in ("installed", "context"),
            "isolation": {
                **self.isolation(None, mode),
                "sandbox": "danger-full-access inside skill-eval's jail (Codex's own "
                "bubblewrap cannot nest)",
                "config": ["--ignore-user-config", "--strict-config", *ISOLATION_CONFIG],
                "api_retries": self.config.api_retries,
                "skills": ".agents/skills in the workspace only (installed mode)",
                "context_file": "AGENTS.md in the workspace (context mode)",
                "allowed_tools_enforced": False,
            },
        }


SPEC = ExecutorSpec(
    name="codex",
    package=CodexExecutor.package,
    skill_roots=(CodexExecutor.skills_dir, ".codex/skills"),
    summary="one jailed Codex CLI run per attempt (@openai/codex on PATH, or the pinned one "
    "scripts/install_agents.sh installs) against an OpenAI-style Responses API",
    config_cls=CodexConfig,
    schema=CODEX_SCHEMA,
    build=CodexExecutor,
)
