"""The `claude-cli` executor's own settings (`--executor-option KEY=VALUE`, the config file's
`[tool.skill-eval.executor.claude-cli]`, and the shorthand flags named after them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..base import ExecutorConfig, config_schema


@dataclass(frozen=True)
class ClaudeCliConfig(ExecutorConfig):
    claude_bin: str | None = None  # a path or a name on PATH; default: the bundled CLI
    max_turns: int | None = None
    # The model of trigger tasks' attempts (a query, a look, maybe the Skill call): None is
    # SKILL_EVAL_TRIGGER_MODEL, else CHEAP_MODEL, not --model (references/cost.md).
    trigger_model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    base_url: str | None = None  # the API the CLI talks to (through the jail's forward)
    env: Mapping[str, str] | None = None  # read before the process environment; passed on
    # The CLI's own retries of one API request (429, 529, 5xx): a transient error costs a
    # resent request, counted in the attempt's `api_retries`, not a new attempt.
    claude_max_retries: int = 5
    version_cache: str | None = None  # JSON file remembering `claude --version` per binary
    unsandboxed_bash: bool = False  # without a jail: Bash without Claude Code's sandbox
    jail: str = "auto"  # a jail provider (jail/providers.py); "none" only with --no-jail
    price_file: str | None = None  # prices per model over the built-in table (pricing.py)


SCHEMA: dict[str, Any] = config_schema(
    ClaudeCliConfig,
    {
        "claude_bin": {"type": ["string", "null"], "format": "command"},
        "max_turns": {"type": ["integer", "null"], "minimum": 1},
        "trigger_model": {"type": ["string", "null"], "minLength": 1},
        "allowed_tools": {"type": "array", "items": {"type": "string"}},
        "base_url": {"type": ["string", "null"]},
        "env": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
        "claude_max_retries": {"type": "integer", "minimum": 0},
        "version_cache": {"type": ["string", "null"], "format": "path"},
        "unsandboxed_bash": {"type": "boolean"},
        "jail": {"type": "string", "minLength": 1},
        "price_file": {"type": ["string", "null"], "format": "path"},
    },
)
