"""What a Claude Code process gets of the harness's environment: an allow-list (what a CLI
needs to run and reach the API), a throw-away HOME and CLAUDE_CONFIG_DIR, and ISOLATION_ENV,
so none of the user's CLAUDE.md files, skills, plugins, hooks, settings or MCP servers load.

In a jail the real credentials never go in: the API is the jail's forward to the harness's
proxy, and the variable that carries the key holds the proxy's placeholder. Only a
subscription login (a credentials file, no key or token exported) must be copied in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ...jail.api_proxy import FORWARD_PORT, ApiProxy

AUTH_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
CREDENTIALS_FILE = ".credentials.json"
# Passed through from our environment when set: what a CLI needs to run and reach the API.
PASS_VARS = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
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
# Reach the network directly: they cannot from a jail, whose only way out is the API forward.
NETWORK_VARS = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy")
# Other clouds' APIs, which the jail's forward does not serve.
CLOUD_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
# Always set in the child: no telemetry or updates, and none of the user's context.
ISOLATION_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",  # also CLAUDE.md files above the working dir
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
    "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "1",
    "CLAUDE_CODE_DISABLE_POLICY_SKILLS": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}
DEFAULT_API = "https://api.anthropic.com"

# Looks a variable up: the run's explicit environment first, then the process's.
EnvLookup = Callable[[str], "str | None"]


def credentials_source(lookup: EnvLookup) -> Path | None:
    """The subscription credentials file of the user's real config dir, when it exists."""
    root = lookup("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    path = Path(root) / CREDENTIALS_FILE
    return path if path.is_file() else None


def has_auth(lookup: EnvLookup) -> bool:
    return any(lookup(v) for v in AUTH_VARS) or credentials_source(lookup) is not None


def login_file(lookup: EnvLookup) -> bytes | None:
    """The subscription login to copy into the child's config dir: only when no key or
    token is exported (then it is the only way the CLI can authenticate)."""
    if any(lookup(v) for v in AUTH_VARS):
        return None
    source = credentials_source(lookup)
    return source.read_bytes() if source is not None else None


def api_credentials(lookup: EnvLookup) -> tuple[dict[str, str], str | None]:
    """(the headers a proxy adds, the variable that carries its placeholder in the child) for
    the credentials exported: a key (`x-api-key`) or a bearer token; ({}, None) for a
    subscription login, whose token the CLI sends itself."""
    if key := lookup("ANTHROPIC_API_KEY"):
        return {"x-api-key": key}, "ANTHROPIC_API_KEY"
    for name in ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        if token := lookup(name):
            return {"authorization": f"Bearer {token}"}, name
    return {}, None


def child_env(
    home: str,
    lookup: EnvLookup,
    *,
    max_retries: int,
    base_url: str | None = None,
    extra: Mapping[str, str] | None = None,
    proxy: ApiProxy | None = None,
    shell_prefix: str | None = None,
) -> dict[str, str]:
    """The whole environment of a CLI child: what it needs, and nothing of the user's set-up.
    HOME is `home` and CLAUDE_CONFIG_DIR is `home/.claude`. With `proxy` (a jail) the API is
    the jail's forward and no real credential is in it; `shell_prefix` wraps every Bash
    command of the agent (CLAUDE_CODE_SHELL_PREFIX)."""
    env = {k: v for k in PASS_VARS if (v := lookup(k))}
    env.update(ISOLATION_ENV)
    env["CLAUDE_CODE_MAX_RETRIES"] = str(max_retries)
    env["HOME"] = home
    env["CLAUDE_CONFIG_DIR"] = f"{home}/.claude"
    env["TMPDIR"] = "/tmp" if proxy is not None else env.get("TMPDIR", "/tmp")
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    for key, value in (extra or {}).items():
        env.setdefault(key, value)  # explicit extras (e.g. Bedrock settings) pass too
    if proxy is not None:
        _, variable = api_credentials(lookup)
        for name in (*AUTH_VARS, *NETWORK_VARS):
            env.pop(name, None)
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{FORWARD_PORT}"
        if variable is not None:
            env[variable] = proxy.placeholder
    if shell_prefix is not None:
        env["CLAUDE_CODE_SHELL_PREFIX"] = shell_prefix
        # Claude Code's cross-session inbox (an address and a token it gives every Bash
        # command): the prefix unsets them, so no command can reach it.
        env["SKILL_EVAL_UNSET"] = "CLAUDE_CODE_MESSAGING_SOCKET CLAUDE_CODE_MESSAGING_TOKEN"
    return env


def upstream(lookup: EnvLookup, base_url: str | None) -> str:
    """Where a jail's API forward goes: the configured base URL, else the public API."""
    return base_url or lookup("ANTHROPIC_BASE_URL") or DEFAULT_API


def cloud_provider(lookup: EnvLookup, extra: Mapping[str, str] | None) -> str | None:
    """The other cloud the CLI is told to use (Bedrock, Vertex, Foundry), if any."""
    for name in CLOUD_VARS:
        if (extra or {}).get(name) or lookup(name):
            return name
    return None
