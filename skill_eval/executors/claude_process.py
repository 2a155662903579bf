"""The Claude Code plumbing shared by the `claude-cli` executor and the `claude-cli` grader:
finding the binary, the child's isolated environment, killing its process group and reading
its `--output-format json` reply (the envelope). One copy of each, so an attempt and a
judgement run the CLI the same way.

The child gets an allow-list of our environment (what a CLI needs to run and authenticate),
a throw-away HOME and CLAUDE_CONFIG_DIR, and ISOLATION_ENV: none of the user's CLAUDE.md
files, skills, plugins, hooks, settings or MCP servers load.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.model import ExecutionResult, Usage
from .base import env_lookup
from .errors_map import fatal_status, retryable_message, retryable_status

__all__ = [
    "AUTH_VARS",
    "ISOLATION_ENV",
    "NOT_FOUND",
    "PASS_VARS",
    "copy_credentials",
    "credentials_source",
    "env_lookup",
    "find_claude",
    "has_auth",
    "isolated_env",
    "kill_group",
    "not_found_message",
    "parse_envelope",
]

NOT_FOUND = "claude CLI not found in PATH. Install it or use --mock for testing."
# What a new user needs next, after the sentence above (kept word for word for compatibility).
INSTALL_HINT = (
    "To install the pinned version: pip install 'skill-eval[agent]' (claude-agent-sdk "
    "bundles it), or bash scripts/install_claude_cli.sh (from a skill-eval "
    "checkout); or call the API directly with --executor anthropic (needs "
    "ANTHROPIC_API_KEY)."
)
AUTH_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
CREDENTIALS_FILE = ".credentials.json"
# Passed through from our environment when set: what a CLI needs to run and reach the API.
PASS_VARS = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "SHELL",
    "ANTHROPIC_BASE_URL",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    *AUTH_VARS,
)
# Always set in the child: no telemetry or updates, and none of the user's context.
ISOLATION_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",  # also CLAUDE.md files above the temp dir
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
    "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "1",
    "CLAUDE_CODE_DISABLE_POLICY_SKILLS": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}
EMPTY_MCP = '{"mcpServers":{}}'
NO_HOOKS = '{"disableAllHooks":true}'

# Looks a variable up: the run's explicit environment first, then the process's.
EnvLookup = Callable[[str], "str | None"]


def find_claude(claude_bin: str | None) -> str | None:
    """The absolute path of the CLI: `claude_bin` (a path or a name on PATH) or `claude`."""
    name = claude_bin or "claude"
    if os.sep in name or (os.altsep and os.altsep in name):
        path = Path(name).expanduser()
        return str(path.resolve()) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(name)


def not_found_message(claude_bin: str | None) -> str:
    """Why `find_claude(claude_bin)` found nothing. The PATH case keeps the exact message of
    the original tool; an explicit `--claude-bin` is named as given."""
    if not claude_bin or claude_bin == "claude":
        return f"{NOT_FOUND} {INSTALL_HINT}"
    if os.sep in claude_bin or (os.altsep and os.altsep in claude_bin):
        path = Path(claude_bin).expanduser()
        if path.is_file():
            return f"claude CLI at {claude_bin} is not executable (--claude-bin)"
        return f"claude CLI not found at {claude_bin} (--claude-bin)"
    return f"claude CLI not found: no {claude_bin!r} in PATH (--claude-bin)"


def credentials_source(lookup: EnvLookup) -> Path | None:
    """The subscription credentials file of the user's real config dir, when it exists."""
    root = lookup("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    path = Path(root) / CREDENTIALS_FILE
    return path if path.is_file() else None


def has_auth(lookup: EnvLookup) -> bool:
    return any(lookup(v) for v in AUTH_VARS) or credentials_source(lookup) is not None


def copy_credentials(lookup: EnvLookup, config_dir: Path) -> None:
    """A subscription login lives in <config dir>/.credentials.json: copy only that file into
    the throw-away config dir, and only when no key or token is exported."""
    if any(lookup(v) for v in AUTH_VARS):
        return
    source = credentials_source(lookup)
    if source is not None:
        target = config_dir / CREDENTIALS_FILE
        shutil.copyfile(source, target)
        target.chmod(0o600)


def isolated_env(
    home: Path,
    lookup: EnvLookup,
    *,
    max_retries: str,
    base_url: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of a CLI child: what it needs, and nothing of the user's set-up.
    HOME is `home` and CLAUDE_CONFIG_DIR is `home/.claude`."""
    env = {k: v for k in PASS_VARS if (v := lookup(k))}
    env.update(ISOLATION_ENV)
    env["CLAUDE_CODE_MAX_RETRIES"] = max_retries
    env["HOME"] = str(home)
    env["CLAUDE_CONFIG_DIR"] = str(home / ".claude")
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    for key, value in (extra or {}).items():
        env.setdefault(key, value)  # explicit extras (e.g. Bedrock settings) pass too
    return env


def kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the child's whole process group (the CLI and anything it started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def parse_envelope(stdout: str, stderr: str, returncode: int | None) -> ExecutionResult:
    """The result from the CLI's JSON envelope (`result`, `is_error`, `usage`,
    `total_cost_usd`), or an error result when there is no readable envelope."""
    envelope = _load_envelope(stdout)
    tail = " | ".join(stderr.strip().splitlines()[-3:])[:500]
    if envelope is None:
        shown = stdout.strip()[:200] or "(empty)"
        why = f"exit code {returncode}" if returncode else "exit code 0"
        return ExecutionResult(
            error=f"claude CLI gave no JSON result ({why}); stdout: {shown}"
            + (f"; stderr: {tail}" if tail else ""),
            retryable=True,
            meta={"exit_code": returncode, "error_type": "no_envelope"},
        )
    meta = {
        k: envelope.get(k)
        for k in (
            "subtype",
            "session_id",
            "num_turns",
            "duration_ms",
            "duration_api_ms",
            "stop_reason",
            "api_error_status",
        )
        if envelope.get(k) is not None
    }
    meta["exit_code"] = returncode
    models = envelope.get("modelUsage")
    if isinstance(models, Mapping) and models:
        meta["models"] = sorted(models)
    usage = Usage.from_dict(
        envelope.get("usage") if isinstance(envelope.get("usage"), Mapping) else None
    )
    cost = float(envelope.get("total_cost_usd") or 0.0)
    result = envelope.get("result")
    if envelope.get("is_error"):
        errors = envelope.get("errors")
        message = (
            result
            if isinstance(result, str) and result
            else "; ".join(map(str, errors))
            if isinstance(errors, list) and errors
            else str(envelope.get("subtype") or "is_error")
        )
        status = envelope.get("api_error_status")
        fatal = False
        if isinstance(status, int):
            retryable, fatal = retryable_status(status), fatal_status(status)
            message = f"(HTTP {status}) {message}"
        else:
            retryable = envelope.get("subtype") != "error_max_turns" and retryable_message(message)
        # Stopping at --max-turns is the agent's own doing: a failure of the attempt.
        max_turns = envelope.get("subtype") == "error_max_turns"
        return ExecutionResult(
            error=f"claude CLI error: {message}",
            retryable=retryable,
            fatal=fatal,
            usage=usage,
            cost_usd=cost,
            meta=meta,
            output_caused=max_turns,
        )
    return ExecutionResult(
        output=result if isinstance(result, str) else "", usage=usage, cost_usd=cost, meta=meta
    )


def _load_envelope(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.startswith("{")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and ("result" in data or "is_error" in data):
            return data
    return None
