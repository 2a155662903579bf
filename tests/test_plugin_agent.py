"""An agent CLI is its own module(s), its fake and one registry line (issue 52): a test agent
from outside the package (tests/fakes/turn_agent: a made-up CLI on a wire format of its own,
`POST /turns/v0/next` with its key in `x-turn-key`) is registered the way a plugin is, by an
entry point of a dist on the path, and runs attempts through the jail on each provider. The
forward speaks its dialect: the placeholder becomes the real key, its replies' calls are what
its transcript is checked against, and a request its CLI never sends (an MCP server) is
tampering. Nothing under skill_eval/ names it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors import base
from skill_eval.executors.base import executor_names
from tests.fakes.turn_agent.server import MODEL, TurnServer
from tests.helpers import REPO, journal_records, run_cli, write_suite

HERE = REPO / "tests" / "fakes" / "turn_agent"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The `turns` executor in a dist of its own (an entry point in `skill_eval.executors`),
    and its CLI installed as a plugin's user would have it: its path."""
    site = tmp_path / "site"
    dist = site / "turn_agent-0.1.dist-info"
    dist.mkdir(parents=True)
    shutil.copyfile(HERE / "plugin.py", site / "turn_agent.py")
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: turn-agent\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[skill_eval.executors]\nturns = turn_agent:SPEC\n")
    monkeypatch.syspath_prepend(str(site))
    base.REGISTRY.reset()  # as in a new process: plugins load on first use
    binary = tmp_path / "bin" / "turn-agent"
    binary.parent.mkdir()
    binary.write_text(f"#!{sys.executable}\n" + (HERE / "cli.py").read_text(), encoding="utf-8")
    binary.chmod(0o755)
    yield str(binary)
    base.REGISTRY.reset()


def run_turns(
    tmp_path: Path, binary: str, server: TurnServer, jail: str, prompt: str
) -> dict[tuple[str, str], dict[str, Any]]:
    workspace = tmp_path / "suite" / "inputs"
    workspace.mkdir(parents=True)
    (workspace / "secret.txt").write_text("workspace data")
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "report",
                "prompt": prompt,
                "files": ["inputs/secret.txt"],
                "judge": {"type": "file-exists", "paths": ["report.md"]},
            }
        ],
    )
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: d\n---\nWrite report.md.\n")
    code, out, err = run_cli(
        "run",
        "--standalone",
        *("--task-suite", str(suite), "--skill-path", str(skill), "--skill-mode", "system"),
        *("--executor", "turns", "--model", MODEL, "--jail", jail, "--max-retries", "0"),
        *("--executor-option", f"turn_bin={binary}", "--executor-option", f"base_url={server.url}"),
        *("--state-root", str(tmp_path / "state"), "-q"),
    )
    journals = list((tmp_path / "state" / "runs").glob("*/attempts.jsonl"))
    assert len(journals) == 1, out + err
    journal = journals[0]
    return {(r["arm"], r["task_id"]): r for r in journal_records(journal)}


def test_the_plugin_registers_from_its_entry_point(plugin: str) -> None:
    assert "turns" in executor_names()
    offenders = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "skill_eval").rglob("*"))
        if path.is_file()
        and any(mark in path.read_bytes() for mark in (b"/turns/v0", b"turn_agent", b"x-turn-key"))
    ]
    assert offenders == []  # the package knows nothing of it


def test_a_plugin_agent_runs_through_the_jail_on_its_own_dialect(
    tmp_path: Path, plugin: str, jail_provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURN_API_KEY", "sk-turn-REAL")
    with TurnServer() as server:
        records = run_turns(tmp_path, plugin, server, jail_provider, "Write report.md.")
        seen = list(server.requests)
    for arm in ("candidate", "baseline"):
        record = records[(arm, "report")]
        assert record["status"] == "passed", record
        assert [(c["name"], c["input"]["path"]) for c in record["transcript"]] == [
            ("Write", "report.md")
        ]
        assert record["usage"]["input_tokens"] == 24 and record["usage"]["output_tokens"] == 8
        assert (
            record["meta"]["api_requests"] == 2
            and record["meta"]["isolation"]["jail"] == jail_provider
        )
    assert len(seen) == 4 and {path for path, _, _ in seen} == {"/turns/v0/next"}
    for _, headers, body in seen:
        assert headers["x-turn-key"] == "sk-turn-REAL"  # the placeholder became the key
        assert set(body) <= {"prompt", "done"}


def test_a_request_the_plugins_cli_never_sends_is_tampering(
    tmp_path: Path, plugin: str, jail_provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURN_API_KEY", "sk-turn-REAL")
    with TurnServer() as server:
        records = run_turns(tmp_path, plugin, server, jail_provider, "TAMPER: write report.md.")
        assert server.requests == []  # the workspace's secret never left the jail
    for arm in ("candidate", "baseline"):
        record = records[(arm, "report")]
        assert record["status"] == "error"
        assert record["error"].startswith(
            "tampering: the API forward refused a request the agent's CLI never sends: "
            "POST /turns/v0/next: 400 (the body holds 'mcp_servers'"
        ), record["error"]
        assert record["meta"]["api_tampering"] == 1
