"""`skill-eval run` with a real agent CLI (Claude Code, OpenCode or Codex) against the fake
model API its protocol needs (Messages; Chat Completions; Responses), for the end-to-end
and attack tests: the process environment scrubbed and HOME, TMPDIR and cwd in tmp, the
fake's base URL given as the executor's, a real-looking key exported (the jail's proxy must
keep it outside).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.jail.bubblewrap import problem as jail_problem
from tests.agent_clis import agent_bin, missing_reason
from tests.agent_scripts import CODEX_MODEL
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import run_cli

AGENTS = ("claude", "opencode", "codex")
EXECUTOR = {"claude": "claude-cli", "opencode": "opencode", "codex": "codex"}
MODEL = {"claude": None, "opencode": "fake-model", "codex": CODEX_MODEL}
SCRUBBED = ("ANTHROPIC_", "SKILL_EVAL_", "CLAUDE_", "OPENAI_", "OPENCODE_", "CODEX_")


def missing(agent: str) -> str | None:
    """Why `agent` cannot run here (its CLI, the jail), or None."""
    if (problem := jail_problem()) is not None:
        return problem
    if agent == "claude":
        return (
            None if bundled_cli() else "claude-agent-sdk not installed: pip install -e '.[agent]'"
        )
    return None if agent_bin(agent) else missing_reason(agent)


def needs(agent: str) -> Any:
    return pytest.mark.skipif(missing(agent) is not None, reason=str(missing(agent)))


def agent_params() -> list[Any]:
    return [pytest.param(a, marks=needs(a), id=a) for a in AGENTS]


@dataclass
class AgentRun:
    """What one `skill-eval run` left behind."""

    tmp: Path
    code: int = -1
    out: str = ""
    err: str = ""
    seconds: float = 0.0
    requests: list[Any] = field(default_factory=list)

    @property
    def state(self) -> Path:
        return self.tmp / "state"

    @property
    def artifact(self) -> Path:
        return self.tmp / "artifact.json"

    def data(self) -> dict[str, Any]:
        return json.loads(self.artifact.read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def records(self) -> list[dict[str, Any]]:
        (journal,) = self.state.rglob("attempts.jsonl")
        lines = map(json.loads, journal.read_text().splitlines())
        return [r for r in lines if "arm" in r]

    def by_arm_task(self) -> dict[tuple[str, str], dict[str, Any]]:
        return {(r["arm"], r["task_id"]): r for r in self.records()}

    def kept(self, arm: str, task: str) -> Path:
        (journal,) = self.state.rglob("attempts.jsonl")
        return journal.parent / "workspaces" / arm / task / "0"


def run_agent(
    tmp: Path,
    agent: str,
    args: list[str],
    rules: list[Any],
    *,
    default: Any = "Sure, here you go.",
    faults: list[Any] | None = None,
    env: dict[str, str] | None = None,
    home: Path | None = None,
) -> AgentRun:
    """`skill-eval run --standalone ARGS` with `agent`, the fake scripted by `rules`."""
    run = AgentRun(tmp)
    for folder in ("temp", "cwd"):
        (tmp / folder).mkdir(parents=True, exist_ok=True)
    home = home or tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    fake = FakeAnthropic if agent == "claude" else FakeOpenAI
    with (
        pytest.MonkeyPatch.context() as mp,
        fake(rules=rules, default=default, faults=faults) as server,
    ):
        for name in list(os.environ):
            if name.startswith(SCRUBBED):
                mp.delenv(name)
        mp.setenv("HOME", str(home))
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
            mp.delenv(name, raising=False)
        mp.setenv("TMPDIR", str(tmp / "temp"))
        mp.setattr(tempfile, "tempdir", str(tmp / "temp"))
        mp.chdir(tmp / "cwd")
        executor = ["--executor", EXECUTOR[agent]]
        if agent == "claude":
            mp.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
            mp.setenv("ANTHROPIC_BASE_URL", server.base_url)
        else:
            mp.setenv("OPENAI_API_KEY", "sk-test-openai")
            executor += ["--model", str(MODEL[agent]), "--executor-option"]
            executor += [f"base_url={server.base_url}/v1"]
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        started = time.monotonic()
        run.code, run.out, run.err = run_cli(
            "run",
            "--standalone",
            *args,
            *executor,
            "--state-root",
            str(run.state),
            "--keep-workspaces",
            "all",
            "-q",
            "--output",
            str(run.artifact),
        )
        run.seconds = time.monotonic() - started
        run.requests = list(server.requests)
    return run
