"""The real Claude Code CLI runs the tools the fake server scripts: Write, Skill and Read land
in the agent's working directory, and the results come back in the next request. Also pins
where writes outside that directory are refused (`--permission-mode acceptEdits`) and where
they are not (`--allowedTools Write`).

Skipped when no `claude` binary is found: SKILL_EVAL_CLAUDE_BIN, the repo's
scripts/install_claude_cli.sh prefix, or the CLI bundled in the `claude-agent-sdk` wheel.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.conversation import last_tool_results

REPO = Path(__file__).resolve().parent.parent
# Read at import: the autouse isolation fixture clears SKILL_EVAL_* before each test runs.
CONFIGURED_CLAUDE_BIN = os.environ.get("SKILL_EVAL_CLAUDE_BIN")
SKILL_MD = """---
name: demo
description: DEMO-DESC turns CSV files into Markdown reports
---
# Demo skill
DEMO-BODY-MARKER: always write tables. Details in reference.md.
"""


def _sdk_bundled_cli() -> str | None:
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    bundled = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"
    return str(bundled) if bundled.exists() else None


def claude_bin() -> str | None:
    default = REPO / ".tools" / "claude-cli" / "node_modules" / ".bin" / "claude"
    for candidate in (CONFIGURED_CLAUDE_BIN, str(default), _sdk_bundled_cli()):
        if candidate and shutil.which(candidate):
            return candidate
    return None


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The agent's cwd, with the demo skill under .claude/skills/demo/ (seen only with
    `--setting-sources project`)."""
    skill = tmp_path / "work" / ".claude" / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (skill / "reference.md").write_text("REFERENCE-CONTENT-7f3a\n", encoding="utf-8")
    return tmp_path / "work"


def run_agent(server: FakeAnthropic, work: Path, *flags: str, sources: str = "") -> dict[str, Any]:
    """`claude -p` in `work`, offline and isolated, against the fake; the JSON envelope."""
    binary = claude_bin()
    if binary is None:
        pytest.skip(
            "claude CLI not installed: run scripts/install_claude_cli.sh, set "
            "SKILL_EVAL_CLAUDE_BIN, or pip install claude-agent-sdk (bundles the CLI)"
        )
    home, config = work.parent / "home", work.parent / "config"
    home.mkdir(exist_ok=True)
    config.mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "dummy-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }
    argv = [binary, "-p", "do the task", "--output-format", "json", "--setting-sources", sources]
    argv += ["--strict-mcp-config", "--no-session-persistence", "--max-turns", "4", *flags]
    proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert proc.stdout.startswith("{"), f"rc={proc.returncode} stderr={proc.stderr[-2000:]}"
    envelope: dict[str, Any] = json.loads(proc.stdout)
    envelope["_returncode"] = proc.returncode
    return envelope


CONFINED = ("--tools", "Write,Read,Skill", "--permission-mode", "acceptEdits")


def script(*steps: dict[str, Any], **conditions: Any) -> list[dict[str, Any]]:
    return [{"name": "agent", **conditions, "steps": list(steps)}]


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_use": {"name": "Write", "input": {"file_path": path, "content": content}}}


def test_scripted_write_lands_in_cwd_and_its_result_comes_back(work: Path) -> None:
    rules = script(write("{cwd}/out.md", "# Report\nrows: 3\n"), {"text": "wrote out.md"})
    with FakeAnthropic(rules=rules) as server:
        envelope = run_agent(server, work, *CONFINED)
        requests = server.requests
    assert (envelope["_returncode"], envelope["result"]) == (0, "wrote out.md")
    assert (work / "out.md").read_text(encoding="utf-8") == "# Report\nrows: 3\n"
    assert [r.rule for r in requests] == ["agent#1", "agent#2"]
    (result,) = last_tool_results(requests[1].json)
    assert result.name == "Write" and not result.is_error
    assert f"File created successfully at: {work / 'out.md'}" in result.content


def test_skill_call_brings_the_skill_body_into_the_next_request(work: Path) -> None:
    # The trigger-test pattern: call Skill only when the skill's description was offered.
    rules = script(
        {"tool_use": {"name": "Skill", "input": {"skill": "demo"}}},
        {"text": "used the skill"},
        request_contains="DEMO-DESC",
    )
    with FakeAnthropic(rules=rules, default="no skill here") as server:
        envelope = run_agent(server, work, *CONFINED, sources="project")
        requests = server.requests
    assert envelope["result"] == "used the skill"
    assert [r.rule for r in requests] == ["agent#1", "agent#2"]
    # Where the CLI lists installed skills: a `role: system` message, "- <name>: <description>".
    listing = [m for m in requests[0].json["messages"] if m["role"] == "system"]
    assert "- demo: DEMO-DESC turns CSV files" in json.dumps(listing)
    assert "DEMO-DESC" not in requests[0].system
    (result,) = last_tool_results(requests[1].json)
    assert (result.name, result.content) == ("Skill", "Launching skill: demo")
    last = requests[1].json["messages"][-1]["content"]
    assert any("DEMO-BODY-MARKER" in b.get("text", "") for b in last if b["type"] == "text")


def test_without_the_skill_installed_the_trigger_rule_stays_silent(work: Path) -> None:
    rules = script({"tool_use": {"name": "Skill", "input": {"skill": "demo"}}}, {"text": "x"})
    rules[0]["request_contains"] = "DEMO-DESC"
    with FakeAnthropic(rules=rules, default="no skill here") as server:
        envelope = run_agent(server, work, *CONFINED)  # --setting-sources "": skill not loaded
        assert [r.rule for r in server.requests] == ["default"]
    assert envelope["result"] == "no skill here"


def test_scripted_read_of_the_skill_reference_returns_its_content(work: Path) -> None:
    path = "{cwd}/.claude/skills/demo/reference.md"
    rules = script({"tool_use": {"name": "Read", "input": {"file_path": path}}}, {"text": "ok"})
    with FakeAnthropic(rules=rules) as server:
        run_agent(server, work, *CONFINED, sources="project")
        requests = server.requests
    (result,) = last_tool_results(requests[1].json)
    assert result.name == "Read" and not result.is_error
    assert "REFERENCE-CONTENT-7f3a" in result.content


@pytest.mark.parametrize("where", ["absolute", "dotdot", "symlink"])
def test_accept_edits_mode_refuses_writes_outside_cwd(work: Path, where: str) -> None:
    outside = work.parent / "outside"
    outside.mkdir()
    (work / "link").symlink_to(outside)
    target = {
        "absolute": str(outside / "x.txt"),
        "dotdot": "{cwd}/../outside/x.txt",
        "symlink": "{cwd}/link/x.txt",
    }[where]
    rules = script(write(target, "escaped"), {"text": "done"})
    with FakeAnthropic(rules=rules) as server:
        envelope = run_agent(server, work, *CONFINED)
        (result,) = last_tool_results(server.requests[1].json)
    assert not (outside / "x.txt").exists()
    assert result.is_error
    assert "requested permissions to write to" in result.content
    assert [d["tool_name"] for d in envelope["permission_denials"]] == ["Write"]


def test_accept_edits_mode_refuses_reads_outside_cwd(work: Path) -> None:
    secret = work.parent / "secret.txt"
    secret.write_text("SECRET-91c2", encoding="utf-8")
    read = {"tool_use": {"name": "Read", "input": {"file_path": str(secret)}}}
    rules = script(read, {"text": "done"})
    with FakeAnthropic(rules=rules) as server:
        run_agent(server, work, *CONFINED)
        (result,) = last_tool_results(server.requests[1].json)
        assert not server.requests_matching("SECRET-91c2")
    assert result.is_error and "requested permissions to read from" in result.content


def test_allowed_tools_write_is_not_confined_to_cwd(work: Path) -> None:
    # What the claude-cli executor does today (--allowedTools=<tools>): a pre-approved Write
    # runs anywhere the process may write. Pinned so a change in the CLI is noticed.
    outside = work.parent / "outside"
    outside.mkdir()
    rules = script(write(str(outside / "x.txt"), "escaped"), {"text": "done"})
    with FakeAnthropic(rules=rules) as server:
        envelope = run_agent(server, work, "--tools", "Write", "--allowedTools", "Write")
    assert (outside / "x.txt").read_text(encoding="utf-8") == "escaped"
    assert envelope["permission_denials"] == []


SANDBOX = {
    "sandbox": {
        "enabled": True,
        "autoAllowBashIfSandboxed": True,
        "allowUnsandboxedCommands": False,  # else the model may ask for dangerouslyDisableSandbox
        "failIfUnavailable": True,
    }
}


@pytest.mark.skipif(
    not (shutil.which("bwrap") and shutil.which("socat")),
    reason="Claude Code's Linux sandbox needs bubblewrap and socat (apt-get install bubblewrap "
    "socat)",
)
def test_sandboxed_bash_writes_inside_cwd_only(work: Path) -> None:
    outside = work.parent / "outside"
    outside.mkdir()

    def bash(command: str, **extra: Any) -> dict[str, Any]:
        return {"tool_use": {"name": "Bash", "input": {"command": command, **extra}}}

    rules = script(
        bash("echo in > inside.txt && echo OK-INSIDE"),
        bash(f"echo out > {outside}/a.txt; echo rc=$?"),
        bash(f"echo out > {outside}/b.txt; echo rc=$?", dangerouslyDisableSandbox=True),
        {"text": "done"},
    )
    with FakeAnthropic(rules=rules) as server:
        envelope = run_agent(
            server,
            work,
            "--tools",
            "Bash",
            "--permission-mode",
            "acceptEdits",
            "--settings",
            json.dumps(SANDBOX),
        )
        results = [last_tool_results(r.json)[0] for r in server.requests[1:]]
    assert envelope["result"] == "done"
    assert (work / "inside.txt").read_text(encoding="utf-8") == "in\n"
    assert results[0].content == "OK-INSIDE"
    assert "Read-only file system" in results[1].content
    assert "Read-only file system" in results[2].content
    assert list(outside.iterdir()) == []


def test_edit_path_rule_allows_writes_inside_cwd_only(work: Path) -> None:
    # The other way to confine file tools: a path-scoped permission rule (Edit rules cover Write).
    outside = work.parent / "outside"
    outside.mkdir()
    rules = script(
        {
            "tool_use": [
                {"name": "Write", "input": {"file_path": "{cwd}/in.txt", "content": "in"}},
                {"name": "Write", "input": {"file_path": str(outside / "x.txt"), "content": "x"}},
            ]
        },
        {"text": "done"},
    )
    with FakeAnthropic(rules=rules) as server:
        run_agent(server, work, "--tools", "Write", "--allowedTools", "Edit(./**)")
        results = last_tool_results(server.requests[1].json)
    assert [r.is_error for r in results] == [False, True]
    assert (work / "in.txt").read_text(encoding="utf-8") == "in"
    assert not (outside / "x.txt").exists()
