"""`claude --version` is probed once per binary: later runs read it from the state root until
the binary changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from skill_eval.executors.claude.binary import VERSION_CACHE_NAME, version
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.plan.executor_options import executor_config
from skill_eval.plan.run_plan import RunPlan


def _counting_claude(tmp_path: Path, version: str) -> tuple[str, Path]:
    """A `claude` whose --version prints `version` and leaves one line per call in a log."""
    log = tmp_path / "calls.log"
    binary = tmp_path / "bin" / "claude"
    binary.parent.mkdir(exist_ok=True)
    binary.write_text(f"#!/bin/sh\necho probe >> {log}\necho '{version}'\n")
    binary.chmod(0o755)
    return str(binary), log


def _calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_second_executor_reads_the_cached_version(tmp_path: Path) -> None:
    binary, log = _counting_claude(tmp_path, "2.1.330 (Claude Code)")
    cache = tmp_path / "state" / VERSION_CACHE_NAME
    config = ClaudeCliConfig(claude_bin=binary, version_cache=str(cache))
    assert ClaudeCodeExecutor(config).version() == "2.1.330 (Claude Code)"
    assert ClaudeCodeExecutor(config).describe()["version"] == "2.1.330 (Claude Code)"
    assert _calls(log) == 1
    stored = json.loads(cache.read_text())
    assert stored[os.path.realpath(binary)]["version"] == "2.1.330 (Claude Code)"


def test_changed_binary_is_probed_again(tmp_path: Path) -> None:
    binary, log = _counting_claude(tmp_path, "1.0.0")
    cache = tmp_path / VERSION_CACHE_NAME
    config = ClaudeCliConfig(claude_bin=binary, version_cache=str(cache))
    assert ClaudeCodeExecutor(config).version() == "1.0.0"
    _counting_claude(tmp_path, "1.0.10")  # upgraded in place: new size
    assert ClaudeCodeExecutor(config).version() == "1.0.10"
    assert _calls(log) == 2


def test_failed_probe_and_damaged_cache_are_not_trusted(tmp_path: Path) -> None:
    cache = tmp_path / VERSION_CACHE_NAME
    cache.write_text("{not json")
    failing = tmp_path / "bin" / "claude"
    failing.parent.mkdir()
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin"}
    assert version(str(failing), cache, env) == "unknown (exit 3)"
    assert cache.read_text() == "{not json"  # a failed probe is not remembered
    binary, log = _counting_claude(tmp_path, "3.0.0")
    assert version(binary, cache, env) == "3.0.0"  # the damaged file is rewritten
    assert version(binary, cache, env) == "3.0.0" and _calls(log) == 1
    assert json.loads(cache.read_text())[os.path.realpath(binary)]["version"] == "3.0.0"


def test_the_run_plan_puts_the_cache_in_the_state_root(tmp_path: Path) -> None:
    plan = RunPlan.from_flags(
        task_suite="s.yaml",
        state_root=str(tmp_path / "st"),
        standalone=True,
        skill_path="skill",
        executor="claude-cli",
    )
    config = executor_config(plan)
    assert config.version_cache == str(tmp_path / "st" / VERSION_CACHE_NAME)
