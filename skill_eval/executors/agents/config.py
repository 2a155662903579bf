"""The `opencode` and `codex` executors' own settings (`--executor-option KEY=VALUE`, the
config file's `[tool.skill-eval.executor.opencode]` / `[...codex]`, and the shorthand flags
named after them: `--max-turns`, `--allowed-tools` for OpenCode).

Both talk to an OpenAI-style API: `base_url` (default OPENAI_BASE_URL, else OpenAI's), the key
from the variable `api_key_env` names (default OPENAI_API_KEY; not needed for a server on
this machine). The key never goes into the jail: the harness's proxy adds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import ExecutorConfig, config_schema, env_lookup
from ..openai_http import DEFAULT_BASE_URL, is_local


@dataclass(frozen=True)
class AgentCliConfig(ExecutorConfig):
    """What both agent CLIs' configs have."""

    base_url: str | None = None  # where `/chat/completions` or `/responses` follows
    api_key_env: str = "OPENAI_API_KEY"  # the variable holding the key (never the key itself)
    env: Mapping[str, str] | None = None  # read before the process environment
    price_file: str | None = None  # prices per model (pricing.py): the agents report none
    version_cache: str | None = None  # JSON file remembering `--version` per binary
    jail: str = "auto"  # a jail provider (jail/providers.py); "none" only with --no-jail

    def resolved_base_url(self) -> str:
        return self.base_url or env_lookup(self.env)("OPENAI_BASE_URL") or DEFAULT_BASE_URL

    def api_key(self) -> str | None:
        return env_lookup(self.env)(self.api_key_env)

    def key_problem(self, executor: str) -> str | None:
        """Why the run has no key it needs (a remote API, no key set), or None."""
        base_url = self.resolved_base_url()
        if self.api_key() or is_local(base_url):
            return None
        return (
            f"{self.api_key_env} is not set, and {base_url} is not on this machine: export "
            f"{self.api_key_env}=... (or name another variable with --executor-option "
            f"api_key_env=NAME; a server on localhost needs no key) for the {executor} executor"
        )


@dataclass(frozen=True)
class OpenCodeConfig(AgentCliConfig):
    opencode_bin: str | None = None  # a path or a name on PATH; default `opencode`
    # OpenCode's agent `steps`: after this many model turns it must answer in text.
    max_turns: int | None = None
    # The tools offered, in Claude Code's names (Read, Write, Edit, Bash, Glob, Grep, Skill,
    # WebFetch, TodoWrite, Task); a task's allowed_tools win. OpenCode's others are denied.
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class CodexConfig(AgentCliConfig):
    codex_bin: str | None = None  # a path or a name on PATH; default `codex`
    # Codex's own resends of a failed request and of a cut stream (its provider's
    # request_max_retries and stream_max_retries); the runner retries the attempt after.
    api_retries: int = 2


COMMON: dict[str, Any] = {
    "base_url": {"type": ["string", "null"], "pattern": "^https?://"},
    "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
    "env": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
    "price_file": {"type": ["string", "null"], "format": "path"},
    "version_cache": {"type": ["string", "null"], "format": "path"},
    "jail": {"type": "string", "minLength": 1},
}
OPENCODE_SCHEMA: dict[str, Any] = config_schema(
    OpenCodeConfig,
    {
        **COMMON,
        "opencode_bin": {"type": ["string", "null"], "format": "command"},
        "max_turns": {"type": ["integer", "null"], "minimum": 1},
        "allowed_tools": {"type": "array", "items": {"type": "string"}},
    },
)
CODEX_SCHEMA: dict[str, Any] = config_schema(
    CodexConfig,
    {
        **COMMON,
        "codex_bin": {"type": ["string", "null"], "format": "command"},
        "api_retries": {"type": "integer", "minimum": 0, "maximum": 10},
    },
)
