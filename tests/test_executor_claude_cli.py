"""The `claude-cli` executor around a stand-in `claude` (tests/fakes/fake_claude.py) for what the
real CLI cannot be made to do: the child's whole environment and argv, the skill delivered in
each mode, what goes into the jail's HOME, crashes, garbage, is_error results, hangs (the jail
killed at the timeout, on cancel, when the harness dies), preflight messages and the version
probe. The stand-in runs in the attempt's jail as the real CLI does, a self-contained copy
beside nothing else of the repository; it leaves its record in its working directory, which
comes back to the runner's workspace. The real CLI: tests/test_claude_code_executor.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, ExecutionResult, Skill, Task, Usage
from skill_eval.core.workspace import AttemptWorkspace
from skill_eval.errors import ExecutorError
from skill_eval.executors.base import SKILL_BEGIN, create_executor
from skill_eval.executors.claude.binary import NOT_FOUND
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.environment import ISOLATION_ENV
from skill_eval.executors.claude.executor import NO_AUTH, ClaudeCodeExecutor
from skill_eval.jail.api_proxy import FORWARD_PORT
from tests.conftest import REPO
from tests.fakes.fake_claude import install
from tests.helpers import jail_missing

needs_jail = pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))
LOG = ".fake-claude.jsonl"  # the stand-in's record, in its working directory


@pytest.fixture
def fake_bin(tmp_path: Path) -> str:
    return install(tmp_path / "bin")


def make(fake: str, **kw: Any) -> ClaudeCodeExecutor:
    kw.setdefault("env", {"ANTHROPIC_API_KEY": "sk-test", "FAKE_CLAUDE_LOG": LOG})
    return ClaudeCodeExecutor(ClaudeCliConfig(claude_bin=fake, **kw))


def request(
    prompt: str = "hello",
    *,
    skill: Skill | None = None,
    workspace: Path | None = None,
    timeout: float = 60.0,
) -> ExecutionRequest:
    task = Task(id="t1", prompt=prompt, judge={"type": "contains", "expected": ["x"]})
    return ExecutionRequest(
        task=task,
        arm="candidate" if skill else "baseline",
        attempt=0,
        skill=skill,
        timeout_seconds=timeout,
        workspace=workspace,
    )


def calls(workspace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (workspace / LOG).read_text().splitlines()]


def attempt(
    executor: ClaudeCodeExecutor, tmp_path: Path, prompt: str = "hello", **kw: Any
) -> tuple[ExecutionResult, AttemptWorkspace]:
    ws = AttemptWorkspace.create(tmp_path)
    return executor.run(request(prompt, workspace=ws.path, **kw)), ws


def processes_with(marker: str) -> list[int]:
    """Host pids whose command line holds `marker` (zombies are dead for our purposes)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[1][0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def gone(marker: str, within: float = 30.0) -> bool:  # polled: generous costs nothing
    deadline = time.monotonic() + within
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not processes_with(marker)


def wait_for(marker: str, within: float = 120.0) -> None:  # polled, as gone()
    deadline = time.monotonic() + within
    while not processes_with(marker):
        assert time.monotonic() < deadline, f"no process of {marker} ever started"
        time.sleep(0.05)


# -- what the child gets ----------------------------------------------------------------------


@needs_jail
def test_the_child_gets_the_allow_list_a_placeholder_key_and_isolating_flags(
    fake_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_MODEL", "AWS_SECRET_ACCESS_KEY", "PYTHONPATH", "CI_TOKEN"):
        monkeypatch.setenv(name, "user-value")
    executor = create_executor(
        "claude-cli",
        {"claude_bin": fake_bin, "env": {"ANTHROPIC_API_KEY": "sk-real", "FAKE_CLAUDE_LOG": LOG}},
    )
    assert isinstance(executor, ClaudeCodeExecutor)
    skill = Skill(name="s", content="SKILL-X")
    result, ws = attempt(executor, tmp_path, skill=skill)
    assert result.failure is None and result.output == "echo: hello", result.failure
    # the fake CLI's result line claims $0.0012 and 10 tokens; it sent no request through the
    # forward, and an attempt costs what the forward relayed (issue 49)
    assert result.cost_usd == 0 and result.usage == Usage()
    assert result.meta["session_id"] == "fake-session" and result.meta["api_retries"] == 0
    assert result.meta["isolation"]["jail"] == "bubblewrap"
    (call,) = calls(ws.path)
    env = call["env"]
    assert {k for k, v in env.items() if v == "user-value"} == set()
    assert {k: env[k] for k in ISOLATION_ENV} == ISOLATION_ENV
    # the real key stays with the harness's proxy; the child holds a placeholder
    assert "sk-real" not in json.dumps(call)
    assert env["ANTHROPIC_API_KEY"].startswith("sk-ant-jail-")
    assert env["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{FORWARD_PORT}"
    assert (call["cwd"], env["HOME"], env["CLAUDE_CONFIG_DIR"]) == (
        "/workspace",
        "/home/agent",
        "/home/agent/.claude",
    )
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "5"
    argv = call["argv"]
    assert argv[:4] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert "--setting-sources=" in argv and "--tools=" in argv
    assert argv[argv.index("--permission-mode") + 1] == "acceptEdits"
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv
    assert "--disable-slash-commands" in argv
    # system mode: the skill is a file in the jail's HOME, the prompt is the task alone
    assert argv[argv.index("--append-system-prompt-file") + 1].startswith("/home/agent/")
    assert executor.describe()["version"] == "0.0.0-fake (Claude Code)"


def test_without_a_jail_the_child_runs_in_host_temp_folders_removed_after(
    fake_bin: str, tmp_path: Path
) -> None:
    executor = make(fake_bin, jail="none")
    result, ws = attempt(executor, tmp_path)
    assert result.failure is None and result.meta["isolation"]["jail"] == "none"
    (call,) = calls(ws.path)
    home = Path(call["env"]["HOME"])
    assert home.name == "home" and home.parent.name.startswith("skill-eval-unjailed-")
    assert Path(call["cwd"]) == home.parent / "workspace"
    assert call["env"]["ANTHROPIC_API_KEY"] == "sk-test"  # no jail, no proxy: said in the docs
    assert not home.parent.exists()


@needs_jail
def test_prepend_mode_sends_the_skill_on_stdin(fake_bin: str, tmp_path: Path) -> None:
    executor = make(fake_bin, skill_mode="prepend")
    result, _ = attempt(executor, tmp_path, skill=Skill(name="s", content="SKILL-X"))
    assert result.output.startswith(f"echo: {SKILL_BEGIN}\nSKILL-X")


@needs_jail
def test_installed_mode_copies_the_skill_folder_and_takes_it_back(
    fake_bin: str, tmp_path: Path
) -> None:
    skill_dir = tmp_path / "my skill"
    (skill_dir / "scripts").mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("old text")
    (skill_dir / "scripts" / "helper.py").write_text("print(1)")
    executor = make(fake_bin, skill_mode="installed")
    skill = Skill(name="My Skill!", content="new text", directory=skill_dir)
    with_skill, ws = attempt(executor, tmp_path, "WRITE_FILE", skill=skill)
    without, bare = attempt(executor, tmp_path, skill=None)
    assert with_skill.failure is None and without.failure is None
    files = calls(ws.path)[0]["cwd_files"]
    assert len(files) == 2 and all(f.startswith(".claude/skills/My_Skill-") for f in files)
    assert {Path(f).name for f in files} == {"SKILL.md", "helper.py"}
    assert calls(bare.path)[0]["cwd_files"] == []
    assert sorted(p.name for p in ws.root.iterdir()) == ["work"]  # no config dir, no login
    assert sorted(p.name for p in ws.path.iterdir()) == [LOG, "notes"]  # the install is gone


@needs_jail
def test_installed_mode_never_copies_links_out(fake_bin: str, tmp_path: Path) -> None:
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
    executor = make(fake_bin, skill_mode="installed")
    result, ws = attempt(executor, tmp_path, skill=Skill("s", "new", directory=skill_dir))
    assert result.failure is None, result.failure.message
    # Links out of the folder (a file, a folder), the dangling link and the FIFO are left
    # out: a link that leaves the skill folder is never followed (skills/install.py).
    assert sorted(Path(f).name for f in calls(ws.path)[0]["cwd_files"]) == ["SKILL.md"]


@needs_jail
def test_a_skill_given_as_a_file_is_installed_alone(fake_bin: str, tmp_path: Path) -> None:
    from skill_eval.skills import load_skill

    project = tmp_path / "proj"
    (project / "deep" / "secrets").mkdir(parents=True)
    (project / "SKILL.md").write_text("---\nname: proj\ndescription: d\n---\nbody\n")
    (project / "deep" / "secrets" / ".env").write_text("TOKEN=1")
    executor = make(fake_bin, skill_mode="installed")
    result, ws = attempt(executor, tmp_path, skill=load_skill(project / "SKILL.md"))
    assert result.failure is None
    assert calls(ws.path)[0]["cwd_files"] == [".claude/skills/proj/SKILL.md"]


@needs_jail
def test_only_a_subscription_login_goes_into_the_jail(fake_bin: str, tmp_path: Path) -> None:
    real = Path(os.environ["HOME"]) / ".claude"
    (real / "skills" / "mine").mkdir(parents=True)
    (real / ".credentials.json").write_text('{"claudeAiOauth": {"token": "LOGIN-7c1"}}')
    (real / "CLAUDE.md").write_text("mine")
    (real / "settings.json").write_text("{}")
    subscription, ws1 = attempt(make(fake_bin, env={"FAKE_CLAUDE_LOG": LOG}), tmp_path)
    api_key, ws2 = attempt(make(fake_bin), tmp_path)
    assert subscription.failure is None and api_key.failure is None
    assert calls(ws1.path)[0]["config_files"] == [".credentials.json"]
    assert calls(ws2.path)[0]["config_files"] == []


# -- failures ---------------------------------------------------------------------------------


@needs_jail
def test_a_crash_is_a_retryable_error_with_its_stderr(fake_bin: str, tmp_path: Path) -> None:
    result, _ = attempt(make(fake_bin), tmp_path, "CRASH")
    assert (
        result.failure.message
        and result.failure.retry
        and "simulated crash" in result.failure.message
    )
    assert "gave no result (exit code 1" in result.failure.message and result.meta["exit_code"] == 1


@needs_jail
def test_garbage_on_stdout_is_counted_and_never_trusted(fake_bin: str, tmp_path: Path) -> None:
    result, _ = attempt(make(fake_bin), tmp_path, "GARBAGE")
    assert (
        result.failure.message
        and result.failure.retry
        and "gave no result" in result.failure.message
    )
    assert result.meta["unreadable_lines"] == 1 and result.output == ""


@needs_jail
def test_an_is_error_result_keeps_its_class_and_costs_what_its_replies_cost(
    fake_bin: str, tmp_path: Path
) -> None:
    """The fake CLI claims $0.0012 in its result line but sent no request through the
    forward: the attempt costs what the forward relayed, nothing (issue 49)."""
    result, _ = attempt(make(fake_bin), tmp_path, "IS_ERROR")
    assert result.failure.message and result.failure.retry and "429" in result.failure.message
    assert result.cost_usd == 0 and not result.failure.stops_run


@needs_jail
def test_a_timeout_kills_everything_in_the_jail(fake_bin: str, tmp_path: Path) -> None:
    marker = f"hang-{uuid.uuid4().hex}"
    started = time.monotonic()
    # 10 s: time for the jail and the fake CLI to start its grandchild on a loaded machine
    result, _ = attempt(make(fake_bin), tmp_path, f"HANG marker={marker}", timeout=10)
    assert time.monotonic() - started < 120  # a missed timeout would wait out its sleep
    assert (
        result.failure.message
        and "timed out after 10s" in result.failure.message
        and result.failure.retry
    )
    assert result.meta["error_type"] == "timeout"
    assert gone(marker)


@needs_jail
def test_cancel_kills_running_attempts_and_refuses_new_ones(fake_bin: str, tmp_path: Path) -> None:
    marker = f"hang-{uuid.uuid4().hex}"
    executor = make(fake_bin)
    results: list[ExecutionResult] = []
    worker = threading.Thread(
        target=lambda: results.append(
            attempt(executor, tmp_path, f"HANG marker={marker}", timeout=600)[0]
        )
    )
    worker.start()
    wait_for(marker)
    executor.cancel()
    worker.join(120)  # at once; uncancelled, it would wait out its 600 s
    assert not worker.is_alive()
    assert results[0].failure.message == "cancelled" and not results[0].failure.retry
    assert gone(marker)
    assert attempt(executor, tmp_path)[0].failure.message == "cancelled"


HARNESS_DIES = """
import os, sys, threading, time
from pathlib import Path
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.executor import ClaudeCodeExecutor
from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.core.workspace import AttemptWorkspace
binary, parent, how = sys.argv[1], sys.argv[2], sys.argv[3]
marker = os.environ["HANG_MARKER"]  # (not in our own argv: we look for it in /proc)
executor = ClaudeCodeExecutor(ClaudeCliConfig(claude_bin=binary, env={"ANTHROPIC_API_KEY": "k"}))
task = Task(id="t1", prompt=f"HANG marker={marker}", judge={"type": "contains", "expected": ["x"]})
ws = AttemptWorkspace.create(Path(parent))
request = ExecutionRequest(task=task, arm="baseline", attempt=0, skill=None, timeout_seconds=60,
                           workspace=ws.path)
threading.Thread(target=executor.run, args=(request,), daemon=True).start()
def seen():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            own = int(pid) == os.getpid()
            if not own and marker.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                return True
        except OSError:
            pass
    return False
if how == "starting":  # leave while the jail is being built
    time.sleep(float(os.environ["DELAY"]))
else:
    deadline = time.monotonic() + 120
    while not seen():
        if time.monotonic() > deadline:
            os._exit(5)
        time.sleep(0.05)
if how == "cancel":
    executor.cancel()  # what the CLI does on Ctrl-C before it leaves
os._exit(130)  # no other thread's clean-up runs
"""


@needs_jail
@pytest.mark.parametrize(
    "how", ["cancel", "killed", pytest.param("starting", marks=pytest.mark.slow)]
)
def test_nothing_of_an_attempt_outlives_the_harness(
    fake_bin: str, tmp_path: Path, how: str
) -> None:
    """The harness cancels, or dies with the attempt running, or dies while its jail is being
    built: no process of the jail is left (not the agent's, not bwrap's, not the holder's)."""
    marker = f"hang-{uuid.uuid4().hex}"
    # Leaving while the jail is built is a race (bwrap's first process once waited forever
    # for a parent that died between its clone and the uid map): 30 exits, 0-58 ms in.
    delays = [i * 0.002 for i in range(30)] if how == "starting" else [0.0]
    for delay in delays:
        done = subprocess.run(
            [sys.executable, "-c", HARNESS_DIES, fake_bin, str(tmp_path), how],
            cwd=REPO,
            env={**os.environ, "HOME": str(tmp_path), "HANG_MARKER": marker, "DELAY": str(delay)},
            capture_output=True,
            text=True,
            timeout=180,  # (the script waits up to 120 s for the agent to start)
        )
        assert done.returncode == 130, done.stderr
    assert gone(marker)
    assert gone(fake_bin), "a process of the jail (bwrap, the holder) outlived the harness"


# -- before the run ---------------------------------------------------------------------------


def test_a_missing_cli_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    executor = ClaudeCodeExecutor(ClaudeCliConfig(claude_bin="claude", jail="none"))
    with pytest.raises(ExecutorError) as info:
        executor.preflight()
    # The compatibility sentence comes first, word for word, then how to get the CLI.
    assert str(info.value).startswith(NOT_FOUND + " ")
    assert "bash scripts/install_claude_cli.sh" in str(info.value)
    assert "--executor anthropic" in str(info.value) and "--mock" in str(info.value)
    # preflight lists every reason (no key here either); an attempt names the missing CLI
    assert executor.run(request()).failure.message == str(info.value).splitlines()[0]


def test_a_missing_explicit_claude_bin_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = str(tmp_path / "nope" / "claude")
    message = f"claude CLI not found at {missing} (--claude-bin)"
    with pytest.raises(ExecutorError) as info:
        make(missing).preflight()
    assert str(info.value) == message
    assert make(missing).run(request()).failure.message == message
    (tmp_path / "plain").write_text("")
    with pytest.raises(ExecutorError, match="is not executable \\(--claude-bin\\)"):
        make(str(tmp_path / "plain")).preflight()
    with pytest.raises(ExecutorError, match="no 'claude-beta' in PATH \\(--claude-bin\\)"):
        make("claude-beta").preflight()


def test_preflight_needs_some_authentication(fake_bin: str) -> None:
    # (jail "none": this is about credentials; the jail's own check is in test_agent_attacks)
    with pytest.raises(ExecutorError) as info:
        make(fake_bin, env={}, jail="none").preflight()
    assert str(info.value) == NO_AUTH
    credentials = Path(os.environ["HOME"]) / ".claude" / ".credentials.json"
    credentials.parent.mkdir()
    credentials.write_text('{"claudeAiOauth": {}}')
    make(fake_bin, env={}, jail="none").preflight()
    make(fake_bin, jail="none").preflight()


def test_another_clouds_api_cannot_go_through_the_jail(fake_bin: str) -> None:
    executor = make(fake_bin, env={"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_USE_BEDROCK": "1"})
    if jail_missing() is None:
        with pytest.raises(ExecutorError, match="CLAUDE_CODE_USE_BEDROCK is set.*--no-jail"):
            executor.preflight()
    bedrock = {"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_USE_BEDROCK": "1"}
    make(fake_bin, env=bedrock, jail="none").preflight()


def test_cancel_without_a_jail_deletes_the_login_copy_before_it_returns(
    fake_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--no-jail: the attempt's HOME is a host folder holding a copy of the subscription
    login; the harness may leave with os._exit right after cancel(), so cancel() deletes it."""
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    login = Path(os.environ["HOME"]) / ".claude" / ".credentials.json"
    login.parent.mkdir()
    login.write_text('{"claudeAiOauth": {}}')
    marker = f"hang-{uuid.uuid4().hex}"
    executor = make(fake_bin, env={}, jail="none")
    results: list[ExecutionResult] = []
    worker = threading.Thread(
        target=lambda: results.append(executor.run(request(f"HANG marker={marker}")))
    )
    worker.start()
    wait_for(marker)
    (folder,) = temp.glob("skill-eval-unjailed-*")
    assert (folder / "home" / ".claude" / ".credentials.json").is_file()
    executor.cancel()
    assert list(temp.iterdir()) == []  # deleted by cancel() itself, before it returned
    worker.join(10)
    assert results[0].failure.message == "cancelled" and gone(marker)
