"""Issue 47: what a suite names never runs with the harness's secrets. A pull request's suite
names a standard-library callable that starts a program (`pty:spawn`, handed the task's
reference as its argv); in `run`, `run --dry-run --mock`, `validate` and the offline gate the
program starts in the jail, and neither it nor any process above it in the jail holds the
gate's token or model key. The test watches from outside: it finds the program through
/proc while it runs, reads the environments, and ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, jail_missing, write_skill

pytestmark = pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))

SECRETS = {"GH_TOKEN": "ghp_fake_gate_token", "ANTHROPIC_API_KEY": "sk-ant-fake-gate-key"}
WAIT_SECONDS = 240.0


def attack(tmp_path: Path) -> tuple[Path, Path, str]:
    """(a skill whose evals name `pty:spawn`, the folder its program lies in, a marker in
    the program's path). The folder is on PYTHONPATH, as a module the suite imports would be:
    the jail shows it (read-only), so the program can start there."""
    marker = f"gate-attack-{uuid.uuid4().hex}"
    tools = tmp_path / "tools"
    tools.mkdir()
    program = tools / f"{marker}.sh"
    program.write_text("#!/bin/sh\nsleep 600\n", encoding="utf-8")
    program.chmod(0o755)
    skill = write_skill(tmp_path / "repo" / "skills" / "spawner")
    (skill / "evals").mkdir()
    suite = {
        "skill_id": "spawner",
        "version": "1.0",
        "tasks": [
            {
                "id": "spawns",
                "prompt": "p",
                "reference": str(program),
                "judge": {"type": "python", "callable": "pty:spawn"},
            }
        ],
    }
    (skill / "evals" / "task_suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    return skill, tools, marker


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _jailed_line(pid: int) -> list[int]:
    """`pid` and its ancestors that share its PID namespace (the jail's processes)."""
    namespace = os.readlink(f"/proc/{pid}/ns/pid")
    line = []
    while pid > 1 and os.readlink(f"/proc/{pid}/ns/pid") == namespace:
        line.append(pid)
        status = Path(f"/proc/{pid}/status").read_text()
        pid = int(next(s for s in status.splitlines() if s.startswith("PPid:")).split()[1])
    return line


def _find(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def watch(args: list[str], marker: str, tools: Path, cwd: Path) -> tuple[list, str]:
    """Run `skill-eval ARGS` with the secrets in its environment; each time the suite's
    program starts, read its environment and its jailed ancestors', then end it. Returns
    (the environments seen, one list per program start; the command's stderr)."""
    env = {
        **os.environ,
        **SECRETS,
        "PYTHONPATH": os.pathsep.join([str(tools), str(REPO)]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "skill_eval.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[list[dict[str, str]]] = []
    deadline = time.monotonic() + WAIT_SECONDS
    while proc.poll() is None and time.monotonic() < deadline:
        found = _find(marker)
        # Read every line before ending any: a shell's child caught between fork and exec
        # still carries the program's name, and killing its parent first would show it under
        # the jail's init instead of the runner.
        for pid in found:
            try:
                seen.append([_environ(p) for p in _jailed_line(pid)])
            except (OSError, StopIteration):
                continue  # it ended between the scan and the read
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
    _, err = proc.communicate(timeout=60)
    return seen, err


def leaked(seen: list[list[dict[str, str]]]) -> list[str]:
    return [
        f"{name} in a jailed process"
        for line in seen
        for environ in line
        for name, value in SECRETS.items()
        if name in environ or any(value in v for v in environ.values())
    ]


@pytest.mark.parametrize(
    "command",
    [
        ["run", "{skill}", "--mock", "--state-root", "{state}", "-q"],
        ["run", "{skill}", "--dry-run", "--mock", "--state-root", "{state}"],
        ["validate", "{skill}"],
        ["gate", "{skill}"],
    ],
    ids=["run", "dry-run", "validate", "offline-gate"],
)
def test_a_program_a_suite_starts_never_sees_the_secrets(
    tmp_path: Path, command: list[str]
) -> None:
    skill, tools, marker = attack(tmp_path)
    args = [a.format(skill=skill, state=tmp_path / "state") for a in command]
    seen, err = watch(args, marker, tools, cwd=tmp_path / "repo")
    assert seen, f"the suite's program never started (so this test proves nothing): {err}"
    assert all(line for line in seen), "the program was found outside any jail"
    assert leaked(seen) == []
    for line in seen:  # the program and the runner that started it: the scrubbed environment
        assert [environ.get("HOME") for environ in line[:2]] == ["/pyjudge", "/pyjudge"], line
        # and every jailed process above them but the jail's own init (bubblewrap's, PATH alone)
        assert all(environ.get("HOME") == "/pyjudge" for environ in line[:-1]), line


def test_the_program_starts_outside_the_harness_process_tree_s_namespace(tmp_path: Path) -> None:
    """The program runs in a PID namespace of its own: the harness is not among the
    processes it can see (nor read /proc/PID/environ of)."""
    skill, tools, marker = attack(tmp_path)
    env = {**os.environ, **SECRETS, "PYTHONPATH": os.pathsep.join([str(tools), str(REPO)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skill_eval.cli", "validate", str(skill)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        pids: list[int] = []
        while not pids and time.monotonic() < deadline and proc.poll() is None:
            pids = _find(marker)
            time.sleep(0.05)
        assert pids, "the suite's program never started"
        mine = os.readlink("/proc/self/ns/pid")
        assert os.readlink(f"/proc/{pids[0]}/ns/pid") != mine
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=120)


@pytest.mark.parametrize("jail", ["auto", "none"])
def test_a_python_judge_reads_no_secret_even_without_the_jail(
    monkeypatch: pytest.MonkeyPatch, jail: str
) -> None:
    """`os:getenv` named as a judge, called with the output "GH_TOKEN": the process it runs
    in has no such variable (getenv hands back its default, the task), jailed or not
    (--no-jail keeps the scrubbed environment)."""
    from skill_eval.core.model import Task
    from skill_eval.core.work import Work
    from skill_eval.judges import JudgeContext, build_judge, run_judge

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    config = {"type": "python", "callable": "os:getenv"}
    for asked in SECRETS:
        result = run_judge(
            build_judge(config),
            Task(id="t", prompt="p", judge=config),
            Work(asked),
            JudgeContext(suite_dir=Path("/nonexistent"), jail=jail),
        )
        assert result.error is not None and "python judge returned Task" in result.error
