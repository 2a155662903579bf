"""Which `claude` binary runs, and its version.

`--claude-bin` (a path or a name on PATH) when given; else the CLI bundled in the
claude-agent-sdk wheel (the `agent` extra: the pinned version, no npm step; found without
importing the SDK); else `claude` on PATH. `claude --version` costs a Node or Bun start-up
(0.3-1 s) and is part of every run's fingerprint, so it is remembered in the state root by the
binary's real path, modification time and size: an upgrade in place changes them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ...core.paths import atomic_write_text

NOT_FOUND = "claude CLI not found in PATH. Install it or use --mock for testing."
# What a new user needs next, after the sentence above (kept word for word for compatibility).
INSTALL_HINT = (
    "To install the pinned version: pip install 'skill-eval[agent]' (claude-agent-sdk "
    "bundles it), or bash scripts/install_claude_cli.sh (from a skill-eval "
    "checkout); or call the API directly with --executor anthropic (needs "
    "ANTHROPIC_API_KEY)."
)
VERSION_CACHE_NAME = "claude-versions.json"
_MAX_ENTRIES = 32  # binaries come and go (npm upgrades); the file stays small


def bundled_cli() -> str | None:
    """The Claude Code binary the claude-agent-sdk wheel ships, when there is one."""
    spec = importlib.util.find_spec("claude_agent_sdk")  # finds, does not import
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"
    return str(binary) if binary.is_file() else None


def find_claude(claude_bin: str | None) -> str | None:
    """The absolute path of the CLI: `claude_bin` (a path or a name on PATH) or `claude`."""
    name = claude_bin or "claude"
    if os.sep in name or (os.altsep and os.altsep in name):
        path = Path(name).expanduser()
        return str(path.resolve()) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(name)


def resolve(claude_bin: str | None) -> str | None:
    """The binary an attempt runs: `--claude-bin`, else the bundled one, else PATH's."""
    if claude_bin:
        return find_claude(claude_bin)
    return bundled_cli() or find_claude(None)


def not_found_message(claude_bin: str | None) -> str:
    """Why `resolve(claude_bin)` found nothing. The PATH case keeps the exact message of
    the original tool; an explicit `--claude-bin` is named as given."""
    if not claude_bin or claude_bin == "claude":
        return f"{NOT_FOUND} {INSTALL_HINT}"
    if os.sep in claude_bin or (os.altsep and os.altsep in claude_bin):
        path = Path(claude_bin).expanduser()
        if path.is_file():
            return f"claude CLI at {claude_bin} is not executable (--claude-bin)"
        return f"claude CLI not found at {claude_bin} (--claude-bin)"
    return f"claude CLI not found: no {claude_bin!r} in PATH (--claude-bin)"


def program_dir(binary: str) -> Path:
    """The folder a jail must show for `binary` to run: its real location's parent (a
    package folder for an npm-installed CLI, whose launcher is a script beside its code)."""
    return Path(os.path.realpath(binary)).parent


def _stamp(binary: str) -> tuple[str, list[int]] | None:
    try:
        real = os.path.realpath(binary)
        info = os.stat(real)
    except OSError:
        return None
    return real, [info.st_mtime_ns, info.st_size]


def _read(cache_file: Path) -> dict[str, Any]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent or damaged: probe again, rewrite it
        return {}
    return data if isinstance(data, dict) else {}


def version(binary: str, cache_file: Path | None, env: dict[str, str]) -> str:
    """`binary --version`: from `cache_file` when the binary is unchanged since it was
    stored, else probed (with `env`, in an empty temporary HOME) and stored."""
    stamp = _stamp(binary)
    entries = _read(cache_file) if cache_file is not None and stamp is not None else {}
    if stamp is not None:
        entry = entries.get(stamp[0])
        if isinstance(entry, dict) and entry.get("stamp") == stamp[1]:
            if isinstance(entry.get("version"), str):
                return str(entry["version"])
    found = _probe(binary, env)
    if cache_file is None or stamp is None or found.startswith("unknown"):
        return found  # a failed probe is not remembered
    entries.pop(stamp[0], None)
    entries[stamp[0]] = {"stamp": stamp[1], "version": found}
    kept = dict(list(entries.items())[-_MAX_ENTRIES:])
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_file, json.dumps(kept, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only state root: the run goes on, the next one probes again
    return found


def _probe(binary: str, env: dict[str, str]) -> str:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skill-eval-claude-version-") as home:
        (Path(home) / ".claude").mkdir()
        try:
            done = subprocess.run(
                [binary, "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=home,
                env={**env, "HOME": home, "CLAUDE_CONFIG_DIR": f"{home}/.claude"},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"unknown ({type(exc).__name__})"
    return done.stdout.strip() or done.stderr.strip() or f"unknown (exit {done.returncode})"
