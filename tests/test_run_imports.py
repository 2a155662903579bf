"""A run that never calls the Messages API from the harness never pays for `import anthropic`
(1.5-1.7 s of CPU, issue 29): `skill-eval run --mock`, and a claude-cli run whose attempts and
rubric judgements are Claude Code processes, import neither the anthropic SDK nor the agent SDK.

Each run is a whole `skill-eval run` in a fresh interpreter, as a user starts it; what it
imported is read from `sys.modules` as the command exits (its exit, not a timing)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.fakes.fake_claude import install
from tests.helpers import jail_missing

SDKS = ("anthropic", "claude_agent_sdk", "mcp")
# `skill-eval ARGV` as the console script runs it, then the SDK modules loaded by its exit
# (main_entry ends in sys.exit, so `finally` runs whatever the outcome).
RUNNER = """
import json, sys
from skill_eval.cli import cli
from skill_eval.cli.common import main_entry
try:
    main_entry(cli, args=sys.argv[2:])
finally:
    loaded = [m for m in json.loads(sys.argv[1]) if m in sys.modules]
    print("SDK-MODULES " + json.dumps(loaded), file=sys.stderr)
"""


def suite(folder: Path) -> Path:
    tasks = [
        {"id": "text", "prompt": "Say PONG.", "judge": {"type": "contains", "expected": ["PONG"]}},
        {
            "id": "rubric",
            "prompt": "Explain PONG.",
            "judge": {"type": "llm-rubric", "rubric": "Mentions PONG.", "pass_threshold": 0.5},
        },
    ]
    folder.mkdir(parents=True)
    path = folder / "task_suite.yaml"
    path.write_text(yaml.safe_dump({"skill_id": "demo", "version": "1.0", "tasks": tasks}))
    return path


def skill(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: demo\ndescription: says PONG\n---\nSay PONG.\n")
    return folder


def sdk_modules_after(tmp_path: Path, *flags: str, env: dict[str, str]) -> list[str]:
    """Run `skill-eval run` on a two-task suite (a contains judge, an llm-rubric judge) in a
    new interpreter; the SDK modules it had imported when it exited."""
    args = ["run", "--task-suite", str(suite(tmp_path / "suite")), "--skill-path"]
    args += [str(skill(tmp_path / "demo")), "--state-root", str(tmp_path / "state"), "-q"]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(SDKS), *args, *flags],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **env,
            "HOME": str(tmp_path),
            "PATH": os.environ.get("PATH", os.defpath),
            "PYTHONPATH": str(REPO),
        },
        timeout=300,
    )
    marker = [line for line in done.stderr.splitlines() if line.startswith("SDK-MODULES ")]
    assert done.returncode in (0, 1, 4) and marker, done.stderr[-3000:]
    (journal,) = (tmp_path / "state").rglob("attempts.jsonl")
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    statuses = {r["task_id"]: r["status"] for r in records if r.get("arm") == "candidate"}
    assert set(statuses) == {"text", "rubric"}, records  # every attempt ran and was judged
    assert set(statuses.values()) <= {"passed", "failed"}, records
    loaded: list[str] = json.loads(marker[-1].split(" ", 1)[1])
    return loaded


def test_a_mock_run_imports_no_sdk(tmp_path: Path) -> None:
    assert sdk_modules_after(tmp_path, "--mock", env={}) == []


@pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))
def test_a_claude_cli_run_imports_no_sdk(tmp_path: Path) -> None:
    claude = install(tmp_path / "bin")  # answers attempts, and the claude-cli grader's prompt
    # The fake calls no API; something must listen at the base URL all the same (preflight).
    with socket.create_server(("127.0.0.1", 0)) as nobody_answers:
        url = f"http://127.0.0.1:{nobody_answers.getsockname()[1]}"
        env = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": url}
        flags = ("--executor", "claude-cli", "--claude-bin", claude, "--no-baseline")
        assert sdk_modules_after(tmp_path, *flags, env=env) == []
