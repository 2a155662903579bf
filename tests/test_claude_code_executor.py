"""The `claude-cli` executor: the tool plan, the stream-json reader and the result classes
(pure); then the real Claude Code CLI (the one claude-agent-sdk bundles, or
SKILL_EVAL_CLAUDE_BIN) in its jail against the loopback Messages API, scripted to call tools:
files land in the attempt's workspace only, writes outside are refused, Bash runs in the jail
away from the harness, installed skills' files can be read, the user's set-up never leaks, API
errors keep their classes and a transient one is a resent request. Real-CLI tests skip without
the CLI or without bubblewrap. A stand-in CLI for crashes and hangs:
tests/test_executor_claude_cli.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, Skill, Task
from skill_eval.core.work import ToolCall
from skill_eval.core.workspace import AttemptWorkspace
from skill_eval.executors.catalog import skill_invocations
from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.executors.claude.stream import StreamReader, from_result
from skill_eval.executors.claude.tools import (
    INSTALLED_DEFAULT,
    BashConfinement,
    ToolPlanError,
    plan_tools,
)
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import jail_missing, journal_records, run_cli, write_suite

# Read at import: the isolation fixture clears SKILL_EVAL_* before each test.
CONFIGURED_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli()
needs_cli = pytest.mark.skipif(
    CONFIGURED_CLAUDE is None or jail_missing() is not None,
    reason=str(jail_missing() or "claude-agent-sdk not installed: pip install -e '.[agent]'"),
)
SKILL_MD = (
    "---\nname: demo\ndescription: DEMO-DESC turns CSV files into Markdown reports\n"
    "---\n# Demo\nDEMO-BODY: write report.md. Details in reference.md.\n"
)
JAILED = BashConfinement(jailed=True, landlock=True)


# -- the tool plan (pure) -----------------------------------------------------------------------


def test_installed_mode_defaults_to_skill_and_read_only_file_tools() -> None:
    plan = plan_tools(None, installed=True, bash=JAILED)
    assert plan.tools == INSTALLED_DEFAULT == ("Skill", "Read", "Glob", "Grep")
    assert plan.allowed == ("Skill",)  # file tools are never pre-approved: acceptEdits confines
    assert plan_tools(None, installed=False, bash=JAILED).tools == ()


def test_task_tools_are_offered_and_file_tools_stay_unapproved() -> None:
    plan = plan_tools(("Write", "Edit", "Read", "WebFetch"), installed=True, bash=JAILED)
    assert plan.tools == ("Write", "Edit", "Read", "WebFetch", "Skill")
    assert plan.allowed == ("WebFetch", "Skill")
    assert json.loads(plan.settings()) == {"disableAllHooks": True}


def test_bash_runs_in_the_jail_or_needs_a_sandbox_or_an_explicit_flag() -> None:
    jailed = plan_tools(("Bash(ls *)",), installed=False, bash=JAILED)
    assert jailed.bash == "jail" and jailed.allowed == ("Bash(ls *)",)
    assert "Landlock" in jailed.isolation()["bash"]
    assert json.loads(jailed.settings()) == {"disableAllHooks": True}  # no nested sandbox
    no_landlock = BashConfinement(jailed=True, landlock=False)
    with pytest.raises(ToolPlanError, match="task 't9' allows Bash.*Landlock.*--no-jail"):
        plan_tools(("Bash",), installed=False, bash=no_landlock, task_id="t9")
    # without a jail (--no-jail): Claude Code's own sandbox, or --unsandboxed-bash
    with pytest.raises(ToolPlanError, match="task 't9' allows Bash.*--unsandboxed-bash"):
        plan_tools(("Bash",), installed=False, bash=BashConfinement(), task_id="t9")
    boxed = plan_tools(("Bash(ls *)",), installed=False, bash=BashConfinement(sandbox="bwrap"))
    assert boxed.bash == "sandbox" and boxed.allowed == ()  # the sandbox approves Bash
    assert json.loads(boxed.settings())["sandbox"]["allowUnsandboxedCommands"] is False
    assert boxed.isolation()["bash"] == "Claude Code's sandbox (bwrap)"
    loose = plan_tools(("Bash(ls *)",), installed=False, bash=BashConfinement(unsandboxed=True))
    assert loose.bash == "unsandboxed" and loose.allowed == ("Bash(ls *)",)


# -- the stream (pure) ----------------------------------------------------------------------------


def feed(*events: dict[str, Any], stop_at: str | None = None) -> StreamReader:
    reader = StreamReader(stop_at_skill=stop_at)
    for event in events:
        if not reader.feed(json.dumps(event).encode()):
            break
    return reader


def use(call_id: str, name: str, msg: str = "m1", **tool_input: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
    usage = {"input_tokens": 7, "output_tokens": 2}
    message = {"id": msg, "model": "claude-x", "content": [block], "usage": usage}
    return {"type": "assistant", "message": message}


def answer(call_id: str, content: Any, is_error: bool | None = None) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return {"type": "user", "message": {"content": [{**block, "is_error": is_error}]}}


def test_tool_calls_pair_results_in_order_trim_and_count_only_completed_ones() -> None:
    reader = feed(
        use("a", "Skill", skill="demo"),
        answer("a", "Launching skill: demo"),
        use("b", "Write", file_path="/w/r.md", content="x" * 5000),
        answer("b", [{"type": "text", "text": "denied"}], True),
        use("c", "Read", msg="m2", file_path="/w/x"),
        answer("nobody", "a result for a call never made"),
    )
    calls = reader.transcript()
    assert [(c.name, c.ok, c.completed) for c in calls] == [
        ("Skill", True, True),
        ("Write", False, True),
        ("Read", False, False),  # no tool_result came back: counts for no judge
    ]
    assert calls[0].output == "Launching skill: demo" and calls[1].output == "denied"
    assert calls[1].input["content"].startswith("x" * 2000 + "... [3000 more")
    usage, model = reader.usage()
    assert (usage.input_tokens, usage.output_tokens, model) == (14, 4, "claude-x")  # m1 once


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


def test_a_trigger_attempt_stops_at_the_skills_invocation() -> None:
    reader = feed(
        use("a", "Read", file_path="/w/notes.md"),
        use("b", "Skill", skill="pdf"),
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "never"}]}},
        stop_at="pdf",
    )
    result = reader.result(None, "")
    assert result.failure is None and result.meta["stopped"] == "skill invoked"
    assert [c.name for c in result.transcript] == ["Read", "Skill"]
    assert result.usage.input_tokens == 7  # summed from the replies: no result message


@pytest.mark.parametrize(
    ("status", "retryable", "fatal"),
    [
        (529, True, False),
        (429, True, False),
        (500, True, False),
        (401, False, True),
        (403, False, True),
        (404, False, True),
        (400, False, False),
    ],
)
def test_api_errors_keep_their_classes(status: int, retryable: bool, fatal: bool) -> None:
    final = {"type": "result", "is_error": True, "result": "API Error", "api_error_status": status}
    result = from_result(final)
    assert (
        result.failure.message
        and f"HTTP {status}" in result.failure.message
        and result.output == ""
    )
    assert (result.failure.retry, result.failure.stops_run) == (retryable, fatal)
    assert result.failure.ends_as != "failed"


def test_max_turns_is_the_outputs_own_failure_and_a_message_may_say_overloaded() -> None:
    turns = from_result({"subtype": "error_max_turns", "is_error": True, "result": ""})
    assert turns.failure.message and turns.failure.ends_as == "failed" and not turns.failure.retry
    other = from_result({"subtype": "error_during_execution", "is_error": True})
    assert other.failure.message and other.failure.ends_as != "failed"
    assert from_result({"is_error": True, "result": "Overloaded, please retry"}).failure.retry
    assert not from_result({"is_error": True, "result": "something odd"}).failure.retry


def test_a_retry_of_an_error_no_retry_heals_stops_the_cli() -> None:
    reader = StreamReader()
    retry = {"type": "system", "subtype": "api_retry", "error_status": 529, "error": "overloaded"}
    assert reader.feed(json.dumps(retry).encode())  # worth the CLI's own retry
    fatal = {**retry, "error_status": 401, "error": "authentication_failed"}
    assert not reader.feed(json.dumps(fatal).encode())
    result = reader.result(None, "")
    assert result.failure.stops_run and not result.failure.retry and result.meta["api_retries"] == 2
    assert result.failure.message.startswith("claude CLI error: (HTTP 401) authentication_failed")


def test_a_stream_without_a_result_is_a_retryable_error_naming_the_retries() -> None:
    reader = feed(
        {"type": "system", "subtype": "api_retry", "error_status": 529},
        {"type": "system", "subtype": "api_retry", "error_status": 529},
    )
    reader.feed(b"not json")
    result = reader.result(1, "first\nboom\n")
    assert result.failure.retry and "exit code 1; 2 API retries, the last HTTP 529" in (
        result.failure.message or ""
    )
    assert "stderr: first | boom" in result.failure.message
    assert result.meta["api_retries"] == 2 and result.meta["unreadable_lines"] == 1


# -- the real Claude Code CLI against the loopback Messages API ---------------------------------


def real_executor(server: FakeAnthropic, **kw: Any) -> ClaudeCodeExecutor:
    kw.setdefault("env", {"ANTHROPIC_API_KEY": "sk-test"})
    return ClaudeCodeExecutor(
        ClaudeCliConfig(claude_bin=CONFIGURED_CLAUDE, base_url=server.base_url, **kw)
    )


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


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_use": {"name": "Write", "input": {"file_path": path, "content": content}}}


def skill_folder(tmp_path: Path) -> Skill:
    folder = tmp_path / "skills" / "demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / "reference.md").write_text("REFERENCE-CONTENT-7f3a\n", encoding="utf-8")
    return Skill(name="demo", content=SKILL_MD, directory=folder)


@needs_cli
def test_output_usage_cost_and_the_model_asked_for(tmp_path: Path) -> None:
    with FakeAnthropic(default="PONG") as server:
        executor = real_executor(server, model="claude-sonnet-4-5", max_turns=2)
        ws = AttemptWorkspace.create(tmp_path)
        result = executor.run(request(workspace=ws.path))
        (body,) = [r.json for r in server.requests_to("/v1/messages")]
    assert result.failure is None, result.failure.message
    assert result.output == "PONG" and result.usage.output_tokens > 0 and result.cost_usd > 0
    assert body["model"] == "claude-sonnet-4-5" and body.get("tools", []) == []
    assert result.meta["api_retries"] == 0 and result.meta["num_turns"] == 1
    info = executor.describe()
    assert info["kind"] == "claude-cli" and "Claude Code" in info["version"]


@needs_cli
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
    assert result.failure is None, result.failure.message
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
    assert sorted(p.name for p in ws.root.iterdir()) == ["work"]


@needs_cli
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
    assert result.failure is None, result.failure.message
    (read,) = result.transcript
    assert read.name == "Read" and read.ok and "REFERENCE-CONTENT-7f3a" in read.output
    assert "REFERENCE-CONTENT-7f3a" in result.output
    # (the CLI adds a placeholder of its own for tools it defers)
    offered = {t["name"] for t in first["tools"]} - {"DeferredToolPlaceholder"}
    assert offered == {"Glob", "Grep", "Read", "Skill"}
    assert not (ws.path / ".claude").exists()  # the installed copy is taken back


@needs_cli
@pytest.mark.parametrize("mode", ["prepend", "system", "installed", "context"])
def test_the_skill_reaches_the_model_only_in_its_arm(tmp_path: Path, mode: str) -> None:
    with FakeAnthropic(default="PONG") as server:
        executor = real_executor(server, skill_mode=mode)
        seen = []
        for skill in (skill_folder(tmp_path), None):
            ws = AttemptWorkspace.create(tmp_path)
            assert executor.run(request(skill=skill, workspace=ws.path)).failure is None
            seen.append(server.requests_to("/v1/messages"))
            server.reset()
    with_skill, without = seen
    assert any("DEMO-DESC" in r.text for r in with_skill)
    assert not any("DEMO-DESC" in r.text or "DEMO-BODY" in r.text for r in without)
    if mode == "system":
        assert "DEMO-DESC" in with_skill[0].system
    if mode in ("prepend", "context"):  # context: CLAUDE.md's text opens the first message
        assert "DEMO-DESC" in with_skill[0].messages_text
        assert "DEMO-DESC" not in with_skill[0].system
    if mode == "context":
        assert "Contents of /workspace/CLAUDE.md" in with_skill[0].messages_text
        assert "CLAUDE.md" not in without[0].text


@needs_cli
def test_an_installed_skills_body_loads_when_invoked(tmp_path: Path) -> None:
    rules = [
        {
            "has_tools": True,
            "messages_not_contain": "DEMO-BODY",
            "tool_use": {"name": "Skill", "input": {"skill": "demo"}},
        }
    ]
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(rules=rules, default="PONG") as server:
        executor = real_executor(server, skill_mode="installed")
        result = executor.run(request(skill=skill_folder(tmp_path), workspace=ws.path))
        requests = server.requests_to("/v1/messages")
    assert result.failure is None and result.output == "PONG"
    assert any("DEMO-BODY" in r.messages_text for r in requests)
    assert [(c.name, c.completed) for c in result.transcript] == [("Skill", True)]
    assert result.meta["skill_invocations"] == 1


@needs_cli
def test_bash_runs_in_the_jail_and_cannot_reach_out(tmp_path: Path) -> None:
    outside = tmp_path / "bash-escape.txt"
    command = (
        f"echo escaped > {outside}; echo in > inside.txt; "
        "ls /proc | grep -c '^[0-9]' > procs.txt; "
        "(exec 3<>/dev/tcp/127.0.0.1/8790 && echo connected || echo no-tcp) > tcp.txt 2>&1; "
        "echo ran"
    )
    rules = [
        {
            "name": "agent",
            "steps": [
                {"tool_use": {"name": "Bash", "input": {"command": command}}},
                {"text": "ok"},
            ],
        }
    ]
    ws = AttemptWorkspace.create(tmp_path)
    with FakeAnthropic(rules=rules) as server:
        result = real_executor(server).run(request(workspace=ws.path, allowed_tools=("Bash",)))
    assert result.failure is None, result.failure.message
    assert "Landlock" in result.meta["isolation"]["bash"]
    assert (ws.path / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    # the jail's own processes only (bwrap's init, the holder, the CLI, this shell ...)
    assert int((ws.path / "procs.txt").read_text()) < 15
    # the model API the jail forwards is the CLI's: the agent's tools get no TCP
    assert "no-tcp" in (ws.path / "tcp.txt").read_text()
    (bash,) = result.transcript
    assert bash.name == "Bash" and bash.completed and "ran" in bash.output


@needs_cli
@pytest.mark.parametrize("mode", ["system", "installed", "context"])
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
            assert result.failure is None, result.failure.message
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


@needs_cli
@pytest.mark.parametrize(
    ("fault", "retryable", "fatal"),
    [
        ("overloaded", True, False),
        ("rate_limit", True, False),
        ("api_error", True, False),
        ("authentication", False, True),
        ("permission", False, True),
        ("not_found", False, True),
    ],
)
def test_api_errors_from_the_real_cli_keep_their_classes(
    tmp_path: Path, fault: str, retryable: bool, fatal: bool
) -> None:
    with FakeAnthropic(default="PONG", faults=[fault]) as server:
        ws = AttemptWorkspace.create(tmp_path)
        result = real_executor(server, claude_max_retries=0).run(request(workspace=ws.path))
        count = len(server.requests_to("/v1/messages"))
    assert result.failure.message and result.output == ""
    assert (result.failure.retry, result.failure.stops_run) == (retryable, fatal), (
        result.failure.message
    )
    if retryable:
        assert count == 1  # the CLI's own retries off (claude_max_retries 0): one request


@needs_cli
@pytest.mark.parametrize("fault", ["authentication", "permission"])
def test_the_cli_is_stopped_at_its_first_retry_of_an_error_no_retry_heals(
    tmp_path: Path, fault: str
) -> None:
    """Claude Code retries a 401 like a 529 (17 s of back-off at 5 retries): the reader
    stops it at the first `api_retry` with such a status."""
    with FakeAnthropic(default="PONG", faults=[fault]) as server:
        ws = AttemptWorkspace.create(tmp_path)
        result = real_executor(server, claude_max_retries=5).run(request(workspace=ws.path))
        count = len(server.requests_to("/v1/messages"))
    # one request: stopped before its first resend, whatever the machine's load
    assert result.failure.stops_run and not result.failure.retry and count == 1
    if fault == "authentication":  # (it does not retry a 403)
        assert "stopped at the CLI's first retry" in result.failure.message


@needs_cli
def test_a_transient_error_is_one_resent_request_counted_in_the_record(tmp_path: Path) -> None:
    with FakeAnthropic(default="PONG", faults=[{"kind": "529", "nth": 1}]) as server:
        ws = AttemptWorkspace.create(tmp_path)
        result = real_executor(server, claude_max_retries=2).run(request(workspace=ws.path))
        count = len(server.requests_to("/v1/messages"))
    assert (result.failure, result.output) == (None, "PONG")
    assert result.meta["api_retries"] == 1 and count == 2


@needs_cli
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
        code, _, err = run_cli(
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
            "--claude-bin",
            str(CONFIGURED_CLAUDE),
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
        )
    assert code in (0, 4), err  # one task: a pass, or not enough evidence for one
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
