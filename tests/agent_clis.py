"""The pinned agent CLIs (scripts/install_agents.sh: OpenCode and Codex from npm) run isolated
and offline against the fake OpenAI server, as references/agents.md describes: a temporary
HOME and XDG folders, the model and base URL given per run, every update check, model-list
fetch, telemetry and user-level skill or context folder switched off or left empty.

The command lines here are the ones the references verified; round 2's executors take theirs
from the same document.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skill_eval.executors.agents.codex import CodexExecutor
from skill_eval.executors.agents.opencode import OpenCodeExecutor
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import REPO

AGENTS_BIN = REPO / ".tools" / "agents" / "node_modules" / ".bin"
# The pins each executor declares (its `package`, named when the CLI is missing).
PINS = {
    executor.cli: executor.package.rpartition("@")[2]
    for executor in (OpenCodeExecutor, CodexExecutor)
}
MODEL = "fake-model"
DATA = REPO / "tests" / "data" / "agents"
# Codex's npm package bundles ripgrep; OpenCode needs an `rg` on PATH (offline it would try to
# download one, and its skill tool fails without it).
CODEX_VENDOR = (
    REPO / ".tools" / "agents" / "node_modules" / "@openai" / "codex-linux-x64" / "vendor"
)


def agent_bin(name: str) -> Path | None:
    """The installed CLI when it is the pinned version, else None."""
    path = AGENTS_BIN / name
    if not path.is_file():
        return None
    try:
        out = subprocess.run(
            [str(path), "--version"],
            capture_output=True,
            text=True,
            timeout=300,
            env={"PATH": f"{AGENTS_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"},
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return path if PINS[name] in out else None


def missing_reason(name: str) -> str:
    return (
        f"{name} {PINS[name]} not installed in {AGENTS_BIN}: run scripts/install_agents.sh "
        "(npm, about a minute)"
    )


def bundled_rg() -> Path | None:
    found = sorted(CODEX_VENDOR.glob("*/codex-path/rg")) if CODEX_VENDOR.is_dir() else []
    return found[0] if found else (Path(shutil.which("rg") or "") if shutil.which("rg") else None)


def base_env(home: Path, extra_path: Path | None = None) -> dict[str, str]:
    """A scrubbed environment: no user config, caches or keys; HOME and XDG in `home`."""
    home.mkdir(parents=True, exist_ok=True)
    path = [str(extra_path)] if extra_path else []
    return {
        "PATH": os.pathsep.join([*path, str(AGENTS_BIN), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
    }


def opencode_config(server: FakeOpenAI) -> dict[str, Any]:
    """OPENCODE_CONFIG_CONTENT: one openai-compatible provider at the fake, its one model."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "fake",
                "options": {"baseURL": server.v1_url, "apiKey": "dummy-key"},
                "models": {MODEL: {"name": MODEL}},
            }
        },
        "model": f"fake/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
    }


def opencode_run(server: FakeOpenAI, home: Path, prompt: str) -> tuple[list[str], dict[str, str]]:
    """(command, environment) of one non-interactive OpenCode run printing JSON events."""
    rg = bundled_rg()
    env = base_env(home, rg.parent if rg else None) | {
        "OPENCODE_CONFIG_CONTENT": json.dumps(opencode_config(server)),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        # Else it fetches @opencode-ai/plugin, @opentui/*, web-tree-sitter from the npm
        # registry into $XDG_CONFIG_HOME/opencode at every start (offline: silently skipped).
        "npm_config_offline": "true",
    }
    # --title: no extra title-generation request; --pure: no external plugins.
    command = ["opencode", "run", "--pure", "--format", "json", "--title", "eval", prompt]
    return command, env


def codex_run(
    server: FakeOpenAI, home: Path, prompt: str, *, retries: bool = True
) -> tuple[list[str], dict[str, str]]:
    """(command, environment) of one non-interactive Codex run printing JSON events. Its own
    sandbox is off (ours jails it); `retries` False: one request per turn, no reconnects."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    env = base_env(home) | {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": "dummy-key"}
    provider = (
        f'{{name="fake",base_url="{server.v1_url}",env_key="FAKE_OPENAI_KEY",wire_api="responses"'
        + ("" if retries else ",request_max_retries=0,stream_max_retries=0")
        + "}"
    )
    command = [
        "codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--ignore-user-config",
        "--strict-config",
        "-s",
        "danger-full-access",
        "-c",
        "model_provider=fake",
        "-c",
        f"model_providers.fake={provider}",
        "-c",
        "analytics.enabled=false",
        "-c",
        "check_for_update_on_startup=false",
        "-c",
        "skills.bundled.enabled=false",
        "-m",
        MODEL,
        prompt,
    ]
    return command, env


@dataclass(frozen=True)
class AgentRun:
    code: int
    events: list[dict[str, Any]]
    stderr: str

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]


def run_agent(command: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> AgentRun:
    proc = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return AgentRun(proc.returncode, events, proc.stderr)


def normalised(body: Any, replacements: dict[str, str]) -> Any:
    """A request body with run-specific paths, URLs, ids and dates replaced by placeholders,
    so the recording reads the same from any run."""
    text = json.dumps(body, ensure_ascii=False)
    for value, name in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(value, name)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{uuid}", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}|\w{3} \w{3} \d{2} \d{4}", "{date}", text)
    return json.loads(text)


def recorded(agent: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{agent}-{PINS[agent]}-request.json").read_text())
    return data


def record(agent: str, payload: dict[str, Any]) -> None:
    """Rewrite the recording (SKILL_EVAL_RECORD_AGENTS=1 when a pin moves)."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{agent}-{PINS[agent]}-request.json"
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
