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


def _isolating_providers() -> tuple[str, ...]:
    """Every registered provider that confines (not `none`), from the registry itself: a new
    built-in (or a plugin installed here) is attacked without touching this file."""
    from skill_eval.jail.providers import REGISTRY

    found = [(name, REGISTRY.get(name)) for name in REGISTRY.names()]
    return tuple(name for name, provider in found if provider is not None and provider.isolated)


# The jail's providers an attack test runs against (#40): each, where it can start here.
JAIL_PROVIDERS = _isolating_providers()


def jail_params() -> list[object]:
    """JAIL_PROVIDERS as pytest params, each skipped with its provider's own problem() where
    it cannot start here (for tests that parametrize a name rather than take the fixture)."""
    from skill_eval.jail.providers import REGISTRY

    params = []
    for name in JAIL_PROVIDERS:
        provider = REGISTRY.get(name)
        why = "not registered" if provider is None else provider.problem()
        marks = [pytest.mark.skip(reason=f"{name}: {why}")] if why is not None else []
        params.append(pytest.param(name, marks=marks))
    return params


@pytest.fixture(params=JAIL_PROVIDERS)
def jail_provider(request: pytest.FixtureRequest) -> str:
    """Each jail provider in turn; a provider that cannot run here skips, with its own reason."""
    from skill_eval.jail.providers import REGISTRY

    provider = REGISTRY.get(request.param)
    why = "not registered" if provider is None else provider.problem()
    if why is not None:
        pytest.skip(f"{request.param}: {why}")
    return str(request.param)
