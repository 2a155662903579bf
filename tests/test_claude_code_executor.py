"""The `claude-cli` executor on claude-agent-sdk: the tool plan, the transcript, the result
classes (pure); then the real Claude Code CLI (the one the SDK bundles, or
SKILL_EVAL_CLAUDE_BIN) against the loopback Messages API, scripted to call tools: files land in
the attempt's workspace only, writes outside are refused, installed skills' files can be read,
the transcript reaches the journal and the artifact. Real-CLI tests skip without the SDK."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, Skill, Task
from skill_eval.core.transcript import NO_RESULT, skill_invocations, tool_calls
from skill_eval.core.work import ToolCall
from skill_eval.core.workspace import AttemptWorkspace
from skill_eval.executors.base import create_executor
from skill_eval.executors.claude_code import (
    ClaudeCodeConfig,
    ClaudeCodeExecutor,
    interpret,
    sdk_location,
)
from skill_eval.executors.claude_tools import (
    INSTALLED_DEFAULT,
    ToolPlanError,
    plan_tools,
    sandbox_available,
)
from tests.conftest import REPO
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import journal_records, run_cli, write_suite

# Read at import: the isolation fixture clears SKILL_EVAL_* before each test.
CONFIGURED_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN")
FAKE_CLAUDE = REPO / "tests" / "fakes" / "fake_claude.py"
needs_sdk = pytest.mark.skipif(
    sdk_location() is None, reason="claude-agent-sdk not installed: pip install -e '.[agent]'"
)
SKILL_MD = (
    "---\nname: demo\ndescription: DEMO-DESC turns CSV files into Markdown reports\n"
    "---\n# Demo\nDEMO-BODY: write report.md. Details in reference.md.\n"
)


# -- the tool plan (pure) -----------------------------------------------------------------------


def test_installed_mode_defaults_to_skill_and_read_only_file_tools() -> None:
    plan = plan_tools(None, installed=True, unsandboxed_bash=False, sandbox=None)
    assert plan.tools == INSTALLED_DEFAULT == ("Skill", "Read", "Glob", "Grep")
    assert plan.allowed == ("Skill",)  # file tools are never pre-approved: acceptEdits confines
    assert plan_tools(None, installed=False, unsandboxed_bash=False, sandbox=None).tools == ()


def test_task_tools_are_offered_and_file_tools_stay_unapproved() -> None:
    plan = plan_tools(
        ("Write", "Edit", "Read", "WebFetch"), installed=True, unsandboxed_bash=False, sandbox=None
    )
    assert plan.tools == ("Write", "Edit", "Read", "WebFetch", "Skill")
    assert plan.allowed == ("WebFetch", "Skill")
    assert json.loads(plan.settings()) == {"disableAllHooks": True}


def test_bash_needs_the_sandbox_or_an_explicit_flag() -> None:
    with pytest.raises(ToolPlanError, match="task 't9' allows Bash.*--unsandboxed-bash"):
        plan_tools(("Bash",), installed=False, unsandboxed_bash=False, sandbox=None, task_id="t9")
    boxed = plan_tools(
        ("Bash(ls *)",), installed=False, unsandboxed_bash=False, sandbox="bubblewrap"
    )
    assert boxed.bash == "sandbox" and boxed.allowed == ()  # the sandbox approves Bash
    assert json.loads(boxed.settings())["sandbox"]["allowUnsandboxedCommands"] is False
    assert boxed.isolation()["bash"] == "sandbox (bubblewrap)"
    loose = plan_tools(("Bash(ls *)",), installed=False, unsandboxed_bash=True, sandbox=None)
    assert loose.bash == "unsandboxed" and loose.allowed == ("Bash(ls *)",)


# -- the transcript (pure) ----------------------------------------------------------------------


def use(call_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {
        "kind": "AssistantMessage",
        "content": [{"block": "ToolUseBlock", "id": call_id, "name": name, "input": tool_input}],
    }


def answer(call_id: str, content: Any, is_error: bool | None = None) -> dict[str, Any]:
    return {
        "kind": "UserMessage",
        "content": [
            {
                "block": "ToolResultBlock",
                "tool_use_id": call_id,
                "content": content,
                "is_error": is_error,
            }
        ],
    }


def test_tool_calls_pair_results_in_order_and_trim() -> None:
    messages = [
        use("a", "Skill", skill="demo"),
        answer("a", "Launching skill: demo"),
        use("b", "Write", file_path="/w/r.md", content="x" * 5000),
        answer("b", [{"type": "text", "text": "denied"}], True),
        use("c", "Read", file_path="/w/x"),
    ]
    calls = tool_calls(messages, input_limit=100, output_limit=50)
    assert [(c.name, c.ok) for c in calls] == [("Skill", True), ("Write", False), ("Read", False)]
    assert calls[0].output == "Launching skill: demo" and calls[1].output == "denied"
    assert calls[1].input["content"].startswith("x" * 100 + "... [4900 more")
    assert calls[2].output == NO_RESULT


def test_skill_invocations_are_field_exact() -> None:
    calls = (
        ToolCall("Skill", {"skill": "pdf"}),
        ToolCall("Skill", {"skill": "plug:pdf"}),
        ToolCall("Read", {"file_path": "/w/.claude/skills/pdf/SKILL.md"}),
        ToolCall("Read", {"file_path": "/w/a.pdf"}),
        ToolCall("Skill", {"skill": "pdfx"}),
        ToolCall("Read", {"file_path": "/w/.claude/skills/pdf/reference.md"}),
        ToolCall("Write", {"file_path": "/w/.claude/skills/pdf/SKILL.md"}),
    )
    assert skill_invocations(calls, "pdf") == calls[:3]


@pytest.mark.parametrize(
    ("status", "retryable", "fatal"),
    [
        (529, True, False),
        (429, True, False),
        (500, True, False),
        (401, False, True),
        (404, False, True),
    ],
)
def test_api_errors_keep_their_classes(status: int, retryable: bool, fatal: bool) -> None:
    result = interpret(
        [
            {
                "kind": "ResultMessage",
                "subtype": "success",
                "is_error": True,
                "result": "API Error",
                "api_error_status": status,
                "num_turns": 1,
            }
        ],
        "",
        0,
    )
    assert result.error and f"HTTP {status}" in result.error
    assert (result.retryable, result.fatal) == (retryable, fatal)


def test_a_stream_without_a_result_is_a_retryable_error() -> None:
    result = interpret(
        [{"kind": "exception", "type": "ProcessError", "message": "exit 1"}], "boom\n", 1
    )
    assert result.retryable and "ProcessError: exit 1" in (result.error or "")
    assert "stderr: boom" in (result.error or "")


# -- through a fake `claude` that speaks the SDK's protocol -------------------------------------


@pytest.fixture
def fake_bin(tmp_path: Path) -> str:
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_CLAUDE} "$@"\n')
    path.chmod(0o755)
    return str(path)


def request(
    prompt: str = "do the task",
    *,
    skill: Skill | None = None,
    workspace: Path | None = None,
    timeout: float = 60.0,
    allowed_tools: tuple[str, ...] | None = None,
) -> ExecutionRequest:
    task = Task(
        id="t1",
        prompt=prompt,
        judge={"type": "contains", "expected": ["x"]},
        allowed_tools=allowed_tools,
    )
    return ExecutionRequest(
        task=task,
        arm="candidate" if skill else "baseline",
        attempt=0,
        skill=skill,
        timeout_seconds=timeout,
        workspace=workspace,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except (ProcessLookupError, OSError):
        return False


@needs_sdk
def test_the_registry_builds_the_sdk_executor_and_it_isolates_the_environment(
    fake_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK passes its whole environment on: the child process must start from ours.
    for name in (
        "ANTHROPIC_MODEL",
        "AWS_SECRET_ACCESS_KEY",
        "CLAUDE_CODE_USE_BEDROCK",
        "PYTHONPATH",
    ):
        monkeypatch.setenv(name, "user-value")
    log = tmp_path / "argv.jsonl"
    executor = create_executor(
        "claude-cli",
        {
            "claude_bin": fake_bin,
            "env": {"ANTHROPIC_API_KEY": "k", "FAKE_CLAUDE_ARGV_LOG": str(log)},
        },
    )
    assert isinstance(executor, ClaudeCodeExecutor)
    result = executor.run(request("hello"))
    assert result.error is None and result.output == "echo: hello"
    assert result.cost_usd == 0.0012 and result.usage.input_tokens == 10
    call = json.loads(log.read_text().splitlines()[-1])
    leaked = {k for k, v in call["env"].items() if v == "user-value"}
    assert leaked == set()
    assert call["env"]["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] == "1"
    argv = call["argv"]
    assert "--setting-sources=" in argv or argv[argv.index("--setting-sources") + 1] == ""
    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv


@pytest.mark.slow
@needs_sdk
def test_a_timeout_kills_the_whole_process_tree(fake_bin: str, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    executor = ClaudeCodeExecutor(
        ClaudeCodeConfig(claude_bin=fake_bin, env={"ANTHROPIC_API_KEY": "k"})
    )
    started = time.monotonic()
    result = executor.run(request(f"HANG pidfile={pidfile}", timeout=8))
    assert time.monotonic() - started < 20
    assert result.error and "timed out" in result.error and result.retryable
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    leftover = [p for p in pids if alive(p)]
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert leftover == []


# -- the real Claude Code CLI against the loopback Messages API ---------------------------------


def real_executor(server: FakeAnthropic, **kw: Any) -> ClaudeCodeExecutor:
    kw.setdefault("env", {"ANTHROPIC_API_KEY": "sk-test"})
    return ClaudeCodeExecutor(
        ClaudeCodeConfig(claude_bin=CONFIGURED_CLAUDE, base_url=server.base_url, **kw)
    )


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_use": {"name": "Write", "input": {"file_path": path, "content": content}}}


def skill_folder(tmp_path: Path) -> Skill:
    folder = tmp_path / "skills" / "demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / "reference.md").write_text("REFERENCE-CONTENT-7f3a\n", encoding="utf-8")
    return Skill(name="demo", content=SKILL_MD, directory=folder)


@needs_sdk
def test_writes_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    rules = [
        {
            "name": "agent",
            "steps": [
                write(str(outside), "escaped"),
                write("{cwd}/../escaped.md", "escaped"),
                write("{cwd}/inside.md", "inside"),
                {"text": "done"},
            ],
        }
    ]
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(rules=rules) as server:
        result = real_executor(server).run(request(workspace=ws.path, allowed_tools=("Write",)))
    assert result.error is None, result.error
    assert not outside.exists() and not (ws.root / "escaped.md").exists()
    assert (ws.path / "inside.md").read_text(encoding="utf-8") == "inside"
    assert [(c.name, c.ok) for c in result.transcript] == [
        ("Write", False),
        ("Write", False),
        ("Write", True),
    ]
    assert "permissions to write" in result.transcript[0].output
    assert result.meta["permission_denials"] == ["Write", "Write"]
    assert result.meta["isolation"]["allowed_tools"] == []
    assert sorted(p.name for p in ws.root.iterdir()) == ["work"]  # config dir taken back


@needs_sdk
def test_installed_mode_reads_the_skills_own_files(tmp_path: Path) -> None:
    rules = [
        {
            "name": "after-read",
            "tool_result": {"name": "Read", "contains": "REFERENCE"},
            "text": "The reference says: {tool_result}",
        },
        {
            "name": "first",
            "turn": 1,
            "tool_use": {
                "name": "Read",
                "input": {"file_path": "{cwd}/.claude/skills/demo/reference.md"},
            },
        },
    ]
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(rules=rules) as server:
        executor = real_executor(server, skill_mode="installed")
        result = executor.run(request(skill=skill_folder(tmp_path), workspace=ws.path))
        first = server.requests_to("/v1/messages")[0].json
    assert result.error is None, result.error
    (read,) = result.transcript
    assert read.name == "Read" and read.ok and "REFERENCE-CONTENT-7f3a" in read.output
    assert "REFERENCE-CONTENT-7f3a" in result.output
    # (the CLI adds a placeholder of its own for tools it defers)
    offered = {t["name"] for t in first["tools"]} - {"DeferredToolPlaceholder"}
    assert offered == {"Glob", "Grep", "Read", "Skill"}
    assert not (ws.path / ".claude").exists()  # the installed copy is taken back


@needs_sdk
def test_run_with_skill_then_write_lands_in_the_workspace_and_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`skill-eval run`, installed mode, Skill + Write allowed: the fake calls Skill and then
    Write only when the skill is offered (the candidate arm)."""
    skill = skill_folder(tmp_path)
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "report",
                "prompt": "make the report",
                "judge": {"type": "contains", "expected": ["wrote report"]},
            }
        ],
    )
    rules = [
        {
            "name": "agent",
            "request_contains": "DEMO-DESC",
            "steps": [
                {"tool_use": {"name": "Skill", "input": {"skill": "demo"}}},
                write("{cwd}/report.md", "# Report\n"),
                {"text": "wrote report.md"},
            ],
        }
    ]
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    with FakeAnthropic(rules=rules, default="no skill, no report") as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        args = [
            "run",
            "--standalone",
            "--task-suite",
            str(suite),
            "--skill-path",
            str(skill.directory),
            "--state-root",
            str(tmp_path / "state"),
            "--executor",
            "claude-cli",
            "--skill-mode",
            "installed",
            "--allowed-tools",
            "Skill,Write",
            "--concurrency",
            "1",
            "-q",
            "--policy",
            "delta",
            "--output",
            str(tmp_path / "artifact.json"),
        ]
        if CONFIGURED_CLAUDE:
            args += ["--claude-bin", CONFIGURED_CLAUDE]
        code, _, err = run_cli(*args)
    assert code == 0, err
    assert list(cwd.iterdir()) == [] and not (tmp_path / "report.md").exists()
    (journal,) = (tmp_path / "state").rglob("attempts.jsonl")
    records = {r["arm"]: r for r in journal_records(journal)}
    candidate, baseline = records["candidate"], records["baseline"]
    assert (candidate["status"], baseline["status"]) == ("passed", "failed")
    assert [(c["name"], c["ok"]) for c in candidate["transcript"]] == [
        ("Skill", True),
        ("Write", True),
    ]
    assert candidate["transcript"][0]["input"] == {"skill": "demo"}
    assert [f["path"] for f in candidate["files"]["files"]] == ["report.md"]
    assert candidate["meta"]["skill_invocations"] == 1
    assert candidate["meta"]["isolation"]["tools"] == ["Skill", "Write"]
    assert "transcript" not in baseline and "files" not in baseline
    artifact = json.loads((tmp_path / "artifact.json").read_text())
    (task,) = artifact["candidate_results"]
    assert task["attempts"][0]["transcript"] == candidate["transcript"]


def test_without_the_sdk_agent_tasks_are_refused(fake_bin: str) -> None:
    from skill_eval.executors.claude_code import NEEDS_SDK, _TextOnlyClaudeCli

    executor = _TextOnlyClaudeCli(
        ClaudeCodeConfig(claude_bin=fake_bin, env={"ANTHROPIC_API_KEY": "k"})
    )
    refused = executor.run(request(allowed_tools=("Write",)))
    assert refused.fatal and refused.error == f"task 't1': {NEEDS_SDK}"
    assert executor.run(request("hi")).output == "echo: hi"  # text tasks still run


@needs_sdk
@pytest.mark.skipif(
    sandbox_available() is None,
    reason="Claude Code's sandbox cannot run here (Linux: apt-get install bubblewrap socat)",
)
def test_bash_runs_in_the_sandbox_and_cannot_write_outside(tmp_path: Path) -> None:
    outside = tmp_path / "bash-escape.txt"
    rules = [
        {
            "name": "agent",
            "steps": [
                {
                    "tool_use": {
                        "name": "Bash",
                        "input": {
                            "command": f"echo escaped > {outside}; echo in > inside.txt; echo ran"
                        },
                    }
                },
                {"text": "done"},
            ],
        }
    ]
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(rules=rules) as server:
        result = real_executor(server).run(request(workspace=ws.path, allowed_tools=("Bash",)))
    assert result.error is None, result.error
    assert result.meta["isolation"]["bash"] == f"sandbox ({sandbox_available()})"
    assert (ws.path / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    (bash,) = result.transcript
    assert bash.name == "Bash" and "ran" in bash.output


@needs_sdk
@pytest.mark.parametrize("mode", ["system", "installed"])
def test_user_and_project_setup_do_not_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    def plant(root: Path, tag: str) -> None:
        (root / ".claude" / "skills" / f"leak{tag}").mkdir(parents=True)
        (root / "CLAUDE.md").write_text(f"LEAK-{tag}-CLAUDE-MD")
        (root / ".claude" / "CLAUDE.md").write_text(f"LEAK-{tag}-DOT-CLAUDE-MD")
        (root / ".claude" / "settings.json").write_text(
            json.dumps({"env": {"LEAKED": "1"}, "model": f"leak-{tag}-model"})
        )
        (root / ".claude" / "skills" / f"leak{tag}" / "SKILL.md").write_text(
            f"---\nname: leak{tag}\ndescription: LEAK-{tag}-SKILL\n---\nLEAK-{tag}-BODY\n"
        )

    plant(Path(os.environ["HOME"]), "HOME")  # the isolation fixture's fake HOME
    project = tmp_path / "project"
    plant(project, "PROJECT")
    monkeypatch.chdir(project)
    parent = project / "attempts"  # the workspaces sit below the project's CLAUDE.md/skills
    parent.mkdir()
    seen = []
    with FakeAnthropic(default="PONG") as server:
        executor = real_executor(server, skill_mode=mode)
        for skill in (skill_folder(tmp_path), None):
            ws = AttemptWorkspace.create(parent)
            result = executor.run(request(skill=skill, workspace=ws.path))
            assert result.error is None, result.error
            seen.append(
                "\n".join(
                    r.text + json.dumps(r.json.get("tools", [])) + r.model
                    for r in server.requests_to("/v1/messages")
                )
            )
            server.reset()
    assert not any("LEAK-" in s or "leak-" in s for s in seen)
    assert "DEMO-DESC" in seen[0]  # the skill under test reaches its arm, and only that one
    assert "DEMO-DESC" not in seen[1] and "DEMO-BODY" not in seen[1]


@needs_sdk
@pytest.mark.parametrize(
    ("fault", "retryable", "fatal"),
    [
        ("overloaded", True, False),
        ("rate_limit", True, False),
        ("api_error", True, False),
        ("authentication", False, True),
        ("not_found", False, True),
    ],
)
def test_api_errors_from_the_real_cli(fault: str, retryable: bool, fatal: bool) -> None:
    with FakeAnthropic(default="PONG", faults=[fault]) as server:
        result = real_executor(server).run(request())
        count = len(server.requests_to("/v1/messages"))
    assert result.error and result.output == ""
    assert (result.retryable, result.fatal) == (retryable, fatal), result.error
    if retryable:
        assert count == 1  # the CLI's own retries are off: the runner retries
