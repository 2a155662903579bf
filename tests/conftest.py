"""Test isolation: no test sees the user's keys, settings or home directory."""

from __future__ import annotations

import importlib.util
import os
import sys
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


# A jail provider from a plugin that logs each launch, then runs it in whatever provider runs
# here (tests/test_jail_providers.py, tests/test_commands_share_run_flags.py).
PLUGIN = """
from pathlib import Path
from skill_eval.jail.providers import ProviderBase, resolve

class Logged(ProviderBase):
    '''Whatever the first provider that runs here does, each launch counted in a file.'''
    name = "logged"

    def __init__(self):
        self.inner = resolve("auto")
        self.python = self.inner.python

    def problem(self):
        return self.inner.problem()

    def inside_fds(self, fds):
        return self.inner.inside_fds(fds)

    def launch(self, confinement, fds, timeout=None):
        with open(Path(__file__).parent / "launches", "a") as log:
            log.write(" ".join(confinement.argv[:1]) + "\\n")
        return self.inner.launch(confinement, fds, timeout)

PROVIDER = Logged
"""


@pytest.fixture
def logged_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Path:
    """The `logged` provider of PLUGIN installed as a plugin (a dist with its entry point on
    sys.path, the registry reloaded as in a new process); the file its launches go to."""
    from skill_eval.jail import providers

    try:
        providers.resolve("auto")
    except providers.JailUnavailable as exc:
        pytest.skip(str(exc))
    site = tmp_path / "site"
    dist = site / "logged_jail-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "logged_jail.py").write_text(PLUGIN, encoding="utf-8")
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: logged-jail\nVersion: 0.1\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[skill_eval.jail_providers]\nlogged = logged_jail:PROVIDER\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "logged_jail", raising=False)  # another test's copy
    providers.REGISTRY.reset()  # as in a new process: plugins load on first use
    providers.resolve.cache_clear()
    request.addfinalizer(providers.REGISTRY.reset)
    request.addfinalizer(providers.resolve.cache_clear)
    return site / "launches"
