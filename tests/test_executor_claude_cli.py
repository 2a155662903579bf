"""The hand-written `claude -p` driver (what `claude-cli` runs when claude-agent-sdk is not
installed): pure parts, failure paths through a fake `claude`, and the real Claude Code CLI
against the loopback Messages API (skipped when the CLI is not installed). The SDK-based
executor has its own tests: tests/test_claude_code_executor.py."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, ExecutionResult, Skill, Task
from skill_eval.errors import ExecutorError
from skill_eval.executors.base import SKILL_BEGIN
from skill_eval.executors.claude_cli import (
    NO_AUTH,
    NOT_FOUND,
    ClaudeCliConfig,
    ClaudeCliExecutor,
    build_command,
    parse_envelope,
)
from tests.conftest import REPO

# Read at import: the isolation fixture clears SKILL_EVAL_* before each test.
REAL_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or str(
    REPO / ".tools" / "claude-cli" / "node_modules" / ".bin" / "claude"
)
FAKE_CLAUDE = REPO / "tests" / "fakes" / "fake_claude.py"
SKILL_TEXT = (
    "---\nname: shouter\ndescription: DESC-MARKER-91 use for every greeting\n---\n"
    "BODY-MARKER-91: always answer in capitals\n"
)


def make(**kw: Any) -> ClaudeCliExecutor:
    """The hand-written driver itself (the registry builds the SDK executor when installed)."""
    kw.setdefault("env", {"ANTHROPIC_API_KEY": "sk-test"})
    return ClaudeCliExecutor(ClaudeCliConfig(**kw))


def run(
    executor: ClaudeCliExecutor,
    prompt: str = "Say hello",
    skill: Skill | None = None,
    timeout: float = 60.0,
) -> ExecutionResult:
    task = Task(id="t1", prompt=prompt, judge={"type": "contains", "expected": ["x"]})
    return executor.run(
        ExecutionRequest(
            task=task,
            arm="candidate" if skill else "baseline",
            attempt=0,
            skill=skill,
            timeout_seconds=timeout,
        )
    )


# -- command, environment, envelope (pure) ------------------------------------------------------


def test_command_isolates_and_turns_tools_off() -> None:
    cmd = build_command("/bin/claude", ClaudeCliConfig(skill_mode="prepend"), None, None)
    assert cmd[:4] == ["/bin/claude", "-p", "--output-format", "json"]
    for flag in (
        "--no-session-persistence",
        "--strict-mcp-config",
        "--setting-sources=",
        '--mcp-config={"mcpServers":{}}',
        "--disable-slash-commands",
        "--tools=",
    ):
        assert flag in cmd
    assert not any(a.startswith("--allowedTools") for a in cmd)
    assert "--model" not in cmd and "--max-turns" not in cmd


def test_command_model_turns_tools_and_system_file(tmp_path: Path) -> None:
    config = ClaudeCliConfig(
        skill_mode="system", max_turns=3, allowed_tools=("Read", "Bash(git *)", "Bash(ls)")
    )
    cmd = build_command("claude", config, "claude-haiku-4-5", tmp_path / "s.md")
    assert cmd[cmd.index("--model") + 1] == "claude-haiku-4-5"
    assert cmd[cmd.index("--max-turns") + 1] == "3"
    assert "--tools=Read,Bash" in cmd and "--allowedTools=Read,Bash(git *),Bash(ls)" in cmd
    assert cmd[cmd.index("--append-system-prompt-file") + 1] == str(tmp_path / "s.md")


def test_command_installed_mode_loads_project_skills_only() -> None:
    cmd = build_command("claude", ClaudeCliConfig(skill_mode="installed"), None, None)
    assert "--setting-sources=project" in cmd and "--tools=Skill" in cmd
    assert "--disable-slash-commands" not in cmd


def test_child_environment_is_minimal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SOME_SECRET", "x")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    env = make(env={"ANTHROPIC_API_KEY": "sk-a", "EXTRA": "1"}).child_env(tmp_path)
    assert "SOME_SECRET" not in env and env["EXTRA"] == "1"
    assert env["ANTHROPIC_API_KEY"] == "sk-a" and env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["HOME"] == str(tmp_path) and env["CLAUDE_CONFIG_DIR"] == str(tmp_path / ".claude")
    assert env["DISABLE_TELEMETRY"] == env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] == "1"
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0"


def envelope(**kw: Any) -> str:
    data = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "hi",
        "total_cost_usd": 0.25,
        "num_turns": 1,
        "duration_api_ms": 10,
        "usage": {
            "input_tokens": 5,
            "output_tokens": 2,
            "cache_read_input_tokens": 7,
            "cache_creation_input_tokens": 1,
            "server_tool_use": {},
        },
        "modelUsage": {"claude-opus-5-5": {}},
    }
    data.update(kw)
    return json.dumps(data)


def test_envelope_success() -> None:
    result = parse_envelope(envelope(), "", 0)
    assert result.error is None and result.output == "hi" and result.cost_usd == 0.25
    assert (result.usage.input_tokens, result.usage.output_tokens) == (5, 2)
    assert result.usage.cache_read_input_tokens == 7
    assert result.meta["models"] == ["claude-opus-5-5"] and result.meta["num_turns"] == 1


@pytest.mark.parametrize(
    ("fields", "retryable"),
    [
        ({"result": "API Error: Request rejected (429)", "api_error_status": 429}, True),
        ({"result": "API Error: 529 overloaded", "api_error_status": 529}, True),
        ({"result": "API Error: 500 boom", "api_error_status": 500}, True),
        ({"result": "API Error: 400 bad", "api_error_status": 400}, False),
        ({"result": "Failed to authenticate. API Error: 401", "api_error_status": 401}, False),
        ({"result": "Overloaded, please retry"}, True),
        (
            {
                "result": None,
                "subtype": "error_max_turns",
                "errors": ["Reached maximum number of turns (1)"],
            },
            False,
        ),
        ({"result": "something odd"}, False),
    ],
)
def test_envelope_is_error(fields: dict[str, Any], retryable: bool) -> None:
    result = parse_envelope(envelope(is_error=True, **fields), "", 1)
    assert result.error and result.error.startswith("claude CLI error: ")
    assert result.retryable is retryable and result.output == ""


@pytest.mark.parametrize("stdout", ["", "not json {", "[1, 2]", '{"other": 1}'])
def test_no_envelope_is_an_error(stdout: str) -> None:
    result = parse_envelope(stdout, "boom\nlast words", 1)
    assert result.error and result.retryable and "last words" in result.error


def test_envelope_after_noise() -> None:
    assert parse_envelope("warning: something\n" + envelope(result="ok"), "", 0).output == "ok"


# -- preflight ----------------------------------------------------------------------------------


def test_preflight_missing_binary_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ExecutorError) as info:
        make().preflight()
    # The compatibility sentence comes first, word for word, then how to get the CLI.
    assert str(info.value).startswith(NOT_FOUND + " ")
    assert "bash scripts/install_claude_cli.sh" in str(info.value)
    assert "--executor anthropic" in str(info.value) and "--mock" in str(info.value)
    assert run(make()).error == str(info.value)


def test_missing_explicit_claude_bin_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = str(tmp_path / "nope" / "claude")
    message = f"claude CLI not found at {missing} (--claude-bin)"
    with pytest.raises(ExecutorError) as info:
        make(claude_bin=missing).preflight()
    assert str(info.value) == message
    assert run(make(claude_bin=missing)).error == message
    (tmp_path / "plain").write_text("")
    with pytest.raises(ExecutorError, match="is not executable \\(--claude-bin\\)"):
        make(claude_bin=str(tmp_path / "plain")).preflight()
    with pytest.raises(ExecutorError, match="no 'claude-beta' in PATH \\(--claude-bin\\)"):
        make(claude_bin="claude-beta").preflight()


@pytest.fixture
def fake_bin(tmp_path: Path) -> str:
    """An executable `claude` that runs tests/fakes/fake_claude.py with this Python."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_CLAUDE} "$@"\n')
    path.chmod(0o755)
    return str(path)


def test_preflight_needs_some_authentication(fake_bin: str) -> None:
    with pytest.raises(ExecutorError) as info:
        make(claude_bin=fake_bin, env={}).preflight()
    assert str(info.value) == NO_AUTH
    credentials = Path(os.environ["HOME"]) / ".claude" / ".credentials.json"
    credentials.parent.mkdir()
    credentials.write_text('{"claudeAiOauth": {}}')
    make(claude_bin=fake_bin, env={}).preflight()
    make(claude_bin=fake_bin).preflight()


# -- failure paths through the fake claude ------------------------------------------------------


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_fake_success_runs_isolated_and_cleans_up(fake_bin: str, tmp_path: Path) -> None:
    log = tmp_path / "argv.jsonl"
    executor = make(
        claude_bin=fake_bin, env={"ANTHROPIC_API_KEY": "k", "FAKE_CLAUDE_ARGV_LOG": str(log)}
    )
    result = run(executor, skill=Skill(name="s", content="SKILL-X"), prompt="hello")
    assert result.error is None and result.cost_usd == 0.0012 and result.usage.input_tokens == 10
    assert result.output == "echo: hello"  # system mode: the prompt is the task alone
    call = calls(log)[0]
    cwd = Path(call["cwd"])
    assert not cwd.exists() and cwd.parent.parent.name.startswith("skill-eval-claude-")
    assert not cwd.parent.parent.exists()  # the whole attempt directory is gone
    assert call["env"]["HOME"] != os.environ["HOME"]
    assert "--append-system-prompt-file" in call["argv"]
    assert executor.describe()["version"] == "0.0.0-fake (Claude Code)"


def test_fake_prepend_sends_skill_on_stdin(fake_bin: str) -> None:
    result = run(
        make(claude_bin=fake_bin, skill_mode="prepend"),
        prompt="hello",
        skill=Skill(name="s", content="SKILL-X"),
    )
    assert result.output.startswith(f"echo: {SKILL_BEGIN}\nSKILL-X")


def test_fake_installed_mode_copies_skill_directory(fake_bin: str, tmp_path: Path) -> None:
    skill_dir = tmp_path / "my skill"
    (skill_dir / "scripts").mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("old text")
    (skill_dir / "scripts" / "helper.py").write_text("print(1)")
    log = tmp_path / "argv.jsonl"
    executor = make(
        claude_bin=fake_bin,
        skill_mode="installed",
        env={"ANTHROPIC_API_KEY": "k", "FAKE_CLAUDE_ARGV_LOG": str(log)},
    )
    run(executor, skill=Skill(name="My Skill!", content="new text", directory=skill_dir))
    run(executor, skill=None)
    with_skill, without = calls(log)
    files = with_skill["cwd_files"]
    assert len(files) == 2 and all(f.startswith(".claude/skills/My_Skill-") for f in files)
    assert {Path(f).name for f in files} == {"SKILL.md", "helper.py"}
    assert without["cwd_files"] == []


def test_fake_installed_mode_never_copies_links_out(fake_bin: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.env").write_text("TOKEN=1")
    skill_dir = tmp_path / "skill"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text("old")
    (skill_dir / "out.env").symlink_to(outside / "secret.env")
    (skill_dir / "outdir").symlink_to(outside)
    (skill_dir / "dangling").symlink_to(tmp_path / "gone")
    os.mkfifo(skill_dir / "pipe")  # would block a copy that opened it
    log = tmp_path / "argv.jsonl"
    executor = make(
        claude_bin=fake_bin,
        skill_mode="installed",
        env={"ANTHROPIC_API_KEY": "k", "FAKE_CLAUDE_ARGV_LOG": str(log)},
    )
    result = run(executor, skill=Skill(name="s", content="new", directory=skill_dir))
    assert result.error is None, result.error
    # Links out of the folder (a file, a folder), the dangling link and the FIFO are left
    # out: a link that leaves the skill folder is never followed (skills/install.py).
    assert sorted(Path(f).name for f in calls(log)[0]["cwd_files"]) == ["SKILL.md"]


def test_fake_installed_skill_from_a_file_is_that_file_alone(fake_bin: str, tmp_path: Path) -> None:
    from skill_eval.skills import load_skill

    project = tmp_path / "proj"
    (project / "deep" / "secrets").mkdir(parents=True)
    (project / "SKILL.md").write_text("---\nname: proj\ndescription: d\n---\nbody\n")
    (project / "deep" / "secrets" / ".env").write_text("TOKEN=1")
    log = tmp_path / "argv.jsonl"
    executor = make(
        claude_bin=fake_bin,
        skill_mode="installed",
        env={"ANTHROPIC_API_KEY": "k", "FAKE_CLAUDE_ARGV_LOG": str(log)},
    )
    assert run(executor, skill=load_skill(project / "SKILL.md")).error is None
    assert calls(log)[0]["cwd_files"] == [".claude/skills/proj/SKILL.md"]


def test_fake_copies_only_the_credentials_file(fake_bin: str, tmp_path: Path) -> None:
    real = Path(os.environ["HOME"]) / ".claude"
    (real / "skills" / "mine").mkdir(parents=True)
    (real / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    (real / "CLAUDE.md").write_text("mine")
    (real / "settings.json").write_text("{}")
    log = tmp_path / "argv.jsonl"
    run(make(claude_bin=fake_bin, env={"FAKE_CLAUDE_ARGV_LOG": str(log)}))
    run(make(claude_bin=fake_bin, env={"FAKE_CLAUDE_ARGV_LOG": str(log), "ANTHROPIC_API_KEY": "k"}))
    subscription, api_key = calls(log)
    assert subscription["config_files"] == [".credentials.json"]
    assert api_key["config_files"] == []


def test_fake_crash(fake_bin: str) -> None:
    result = run(make(claude_bin=fake_bin), prompt="CRASH")
    assert result.error and result.retryable and "simulated crash" in result.error
    assert result.meta["exit_code"] == 1


def test_fake_garbage_stdout(fake_bin: str) -> None:
    result = run(make(claude_bin=fake_bin), prompt="GARBAGE")
    assert result.error and "no JSON result" in result.error and "not json" in result.error


def test_fake_is_error(fake_bin: str) -> None:
    result = run(make(claude_bin=fake_bin), prompt="IS_ERROR")
    assert result.error and result.retryable and "429" in result.error
    assert result.cost_usd == 0.0012


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except OSError:
        return True


def test_fake_hang_kills_the_process_group(fake_bin: str, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    started = time.monotonic()
    result = run(make(claude_bin=fake_bin), prompt=f"HANG pidfile={pidfile}", timeout=1.5)
    assert time.monotonic() - started < 15
    assert result.error and "timed out" in result.error and result.retryable
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    leftover = [p for p in pids if alive(p)]
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert leftover == []


def test_cancel_kills_running_attempts(
    fake_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    (Path(os.environ["HOME"]) / ".claude").mkdir()
    (Path(os.environ["HOME"]) / ".claude" / ".credentials.json").write_text("{}")
    pidfile = tmp_path / "pids"
    executor = make(claude_bin=fake_bin, env={})
    results: list[ExecutionResult] = []
    worker = threading.Thread(
        target=lambda: results.append(run(executor, prompt=f"HANG pidfile={pidfile}", timeout=60))
    )
    worker.start()
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and len(pidfile.read_text().split()) == 2):
        assert time.monotonic() < deadline, "the fake claude never started"
        time.sleep(0.05)
    (root,) = temp.iterdir()
    assert (root.stat().st_mode & 0o777) == 0o700
    assert (root / "home" / ".claude" / ".credentials.json").is_file()
    executor.cancel()
    assert list(temp.iterdir()) == []  # deleted by cancel() itself, before it returned
    worker.join(10)
    assert not worker.is_alive()
    assert results[0].error == "cancelled" and not results[0].retryable
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
    assert run(executor).error == "cancelled"
    assert list(temp.iterdir()) == []


INTERRUPTED_RUN = """
import os, sys, threading, time
from pathlib import Path
from skill_eval.executors.claude_cli import ClaudeCliConfig, ClaudeCliExecutor
from skill_eval.core.model import ExecutionRequest, Task
binary, pidfile, log = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
executor = ClaudeCliExecutor(ClaudeCliConfig(claude_bin=binary,
                                             env={"FAKE_CLAUDE_ARGV_LOG": log}))
task = Task(id="t1", prompt=f"HANG pidfile={pidfile}", judge={"type": "contains",
                                                              "expected": ["x"]})
request = ExecutionRequest(task=task, arm="baseline", attempt=0, skill=None,
                           timeout_seconds=60)
threading.Thread(target=executor.run, args=(request,), daemon=True).start()
deadline = time.monotonic() + 20
while not (pidfile.exists() and len(pidfile.read_text().split()) == 2):
    if time.monotonic() > deadline:
        os._exit(5)
    time.sleep(0.05)
executor.cancel()
os._exit(130)  # what the CLI does on Ctrl-C: no other thread's clean-up runs
"""


def test_interrupt_leaves_no_credentials_and_no_process(fake_bin: str, tmp_path: Path) -> None:
    import subprocess

    home, temp = tmp_path / "home", tmp_path / "tmp"
    temp.mkdir()
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    pidfile, log = tmp_path / "pids", tmp_path / "argv.jsonl"
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_RUN, fake_bin, str(pidfile), str(log)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130, done.stderr
    assert calls(log)[0]["config_files"] == [".credentials.json"]  # the copy existed
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    leftover = [p for p in pids if alive(p)]
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert leftover == []
    assert list(temp.iterdir()) == []


# -- the real Claude Code CLI against the loopback Messages API ---------------------------------

needs_cli = pytest.mark.skipif(
    not (os.path.isfile(REAL_CLAUDE) and os.access(REAL_CLAUDE, os.X_OK)),
    reason=f"Claude Code CLI not installed at {REAL_CLAUDE}: run scripts/install_claude_cli.sh "
    "or set SKILL_EVAL_CLAUDE_BIN",
)


@pytest.fixture
def fake_api() -> Iterator[Any]:
    from tests.fakes.anthropic_server import FakeAnthropic

    with FakeAnthropic(default="PONG") as server:
        yield server


def real(fake_api: Any, **kw: Any) -> ClaudeCliExecutor:
    kw.setdefault("base_url", fake_api.base_url)
    return make(claude_bin=REAL_CLAUDE, **kw)


def skill() -> Skill:
    return Skill(name="shouter", content=SKILL_TEXT)


def messages(fake_api: Any) -> list[Any]:
    return fake_api.requests_to("/v1/messages")


@needs_cli
def test_real_cli_output_usage_and_cost(fake_api: Any) -> None:
    executor = real(fake_api, model="claude-sonnet-4-5", max_turns=2)
    result = run(executor)
    assert result.error is None, result.error
    assert result.output == "PONG" and result.usage.output_tokens > 0 and result.cost_usd > 0
    body = messages(fake_api)[0].json
    assert body["model"] == "claude-sonnet-4-5" and body.get("tools", []) == []
    info = executor.describe()
    assert info["kind"] == "claude-cli" and "Claude Code" in info["version"]


@needs_cli
@pytest.mark.parametrize("mode", ["prepend", "system", "installed"])
def test_real_cli_skill_reaches_model_only_in_its_arm(fake_api: Any, mode: str) -> None:
    executor = real(fake_api, skill_mode=mode)
    assert run(executor, skill=skill()).error is None
    with_skill = messages(fake_api)
    fake_api.reset()
    assert run(executor, skill=None).error is None
    without = messages(fake_api)
    marker = "DESC-MARKER-91"
    assert with_skill and without
    assert any(marker in r.text for r in with_skill)
    assert not any(marker in r.text or "BODY-MARKER-91" in r.text for r in without)
    if mode == "system":
        assert marker in with_skill[0].system
    if mode == "prepend":
        assert marker in with_skill[0].messages_text and marker not in with_skill[0].system


@needs_cli
def test_real_cli_installed_skill_body_loads_when_invoked(fake_api: Any) -> None:
    fake_api.set_rules(
        [
            {
                "has_tools": True,
                "messages_not_contain": "BODY-MARKER-91",
                "tool_use": {"name": "Skill", "input": {"skill": "shouter"}},
            }
        ]
    )
    result = run(real(fake_api, skill_mode="installed"), skill=skill())
    assert result.error is None and result.output == "PONG"
    assert any("BODY-MARKER-91" in r.messages_text for r in messages(fake_api))


@needs_cli
@pytest.mark.parametrize("mode", ["system", "installed"])
def test_real_cli_user_and_project_setup_do_not_leak(
    fake_api: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    def plant(root: Path, tag: str) -> None:
        (root / ".claude" / "skills" / f"leak{tag}").mkdir(parents=True)
        (root / "CLAUDE.md").write_text(f"LEAK-{tag}-CLAUDE-MD")
        (root / ".claude" / "CLAUDE.md").write_text(f"LEAK-{tag}-DOT-CLAUDE-MD")
        (root / ".claude" / "skills" / f"leak{tag}" / "SKILL.md").write_text(
            f"---\nname: leak{tag}\ndescription: LEAK-{tag}-SKILL\n---\nLEAK-{tag}-BODY\n"
        )

    home = Path(os.environ["HOME"])  # the isolation fixture's fake HOME
    plant(home, "HOME")
    (home / ".claude" / ".credentials.json").write_text("{}")
    project = tmp_path / "project"
    plant(project, "PROJECT")
    monkeypatch.chdir(project)
    # The attempts' temp dirs live inside the project, below its CLAUDE.md and skills.
    monkeypatch.setattr(tempfile, "tempdir", str(project / "tmp"))
    (project / "tmp").mkdir()
    executor = real(fake_api, skill_mode=mode)
    assert run(executor, skill=skill()).error is None
    assert run(executor, skill=None).error is None
    seen = "\n".join(r.text + json.dumps(r.json.get("tools", [])) for r in messages(fake_api))
    assert "LEAK-" not in seen
    assert "DESC-MARKER-91" in seen
    assert list((project / "tmp").iterdir()) == []  # every attempt dir was deleted


@needs_cli
@pytest.mark.parametrize(
    ("fault", "retryable"), [("overloaded", True), ("rate_limit", True), ("api_error", True)]
)
def test_real_cli_api_errors_are_error_attempts(fake_api: Any, fault: str, retryable: bool) -> None:
    fake_api.set_faults([fault])
    result = run(real(fake_api))
    assert result.error and result.retryable is retryable and result.output == ""
    assert len(messages(fake_api)) == 1  # the CLI's own retries are off: the runner retries


@needs_cli
def test_real_cli_not_found_is_not_retryable(fake_api: Any) -> None:
    result = run(real(fake_api, base_url=fake_api.base_url + "/nowhere"))
    assert result.error and not result.retryable and "404" in result.error
