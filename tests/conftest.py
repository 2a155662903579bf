"""Test isolation: no test sees the user's keys, settings or home directory."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _default_claude_bin() -> None:
    """Without SKILL_EVAL_CLAUDE_BIN or the npm-installed CLI, the real-CLI tests use the one
    claude-agent-sdk bundles (`pip install -e '.[agent]'`). Set here, before the test modules
    read it at import."""
    npm = REPO / ".tools" / "claude-cli" / "node_modules" / ".bin" / "claude"
    if os.environ.get("SKILL_EVAL_CLAUDE_BIN") or npm.exists():
        return
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is not None and spec.submodule_search_locations:
        bundled = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"
        if bundled.is_file():
            os.environ["SKILL_EVAL_CLAUDE_BIN"] = str(bundled)


_default_claude_bin()


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(
            ("ANTHROPIC_", "SKILL_EVAL_", "CLAUDE_", "OPENAI_", "OPENCODE_", "CODEX_")
        ):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
