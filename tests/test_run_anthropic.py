"""Whole runs through the real anthropic SDK against the local Messages API: the skill reaches
the model only in its arm, faults are retried, persistent faults become an error verdict, a
killed run resumes without repeats, usage and cost land in the artifact, and a cached
baseline sends no baseline request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    REPO,
    contains_task,
    journal_records,
    read_json,
    run_cli,
    write_skill,
    write_suite,
)

SKILL_MARK = "SKILL-MARK-7f3a"
RULES = [
    {"system_contains": SKILL_MARK, "text": "alpha beta"},
    {"messages_contain": SKILL_MARK, "text": "alpha beta"},
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeAnthropic(rules=RULES, default="nothing useful") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake


def setup(tmp_path: Path, tasks: int = 3) -> list[str]:
    suite = write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(tasks)])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {SKILL_MARK}")
    return [
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "anthropic",
        "--model",
        "test-model",
        "-q",
        "--policy",
        "delta",
    ]  # 3 tasks: the mechanics, not the policy


def has_skill(request) -> bool:
    return SKILL_MARK in json.dumps(request.body)


@pytest.mark.parametrize("mode", ["system", "prepend"])
def test_skill_reaches_only_its_arm(tmp_path: Path, server: FakeAnthropic, mode: str) -> None:
    code, out, err = run_cli(*setup(tmp_path), "--skill-mode", mode)
    assert code == 0, err
    data = read_json(out.strip())
    assert data["evaluation"]["execution_pass_rate"] == 1.0
    assert data["evaluation"]["baseline_pass_rate"] == 0.0
    with_skill = [r for r in server.requests if has_skill(r)]
    without = [r for r in server.requests if not has_skill(r)]
    assert len(with_skill) == 3 and len(without) == 3
    if mode == "system":
        assert all(SKILL_MARK in str(r.json.get("system")) for r in with_skill)
        assert all(not r.json.get("system") for r in without)
    else:
        assert all("---BEGIN SKILL.MD---" in str(r.json["messages"]) for r in with_skill)
        assert all("Task: Do t" in str(r.json["messages"]) for r in without)
    assert data["manifest"]["arms"]["baseline"]["skill_sha256"] is None
    assert data["manifest"]["executor"]["kind"] == "anthropic"


@pytest.mark.parametrize(
    "fault",
    [
        "rate_limit",
        "overloaded",
        "api_error",
        "drop_mid_stream",
        "drop_before_response",
        "malformed",
    ],
)
def test_transient_faults_are_retried_to_success(
    tmp_path: Path, server: FakeAnthropic, fault: str
) -> None:
    server.add_fault(fault, first=2, retry_after=0)
    code, out, err = run_cli(*setup(tmp_path, tasks=2))
    assert code == 0, err
    data = read_json(out.strip())
    assert data["errors"] == []
    attempts = [
        a for r in data["candidate_results"] + data["baseline_results"] for a in r["attempts"]
    ]
    assert sum(a["tries"] for a in attempts) == 4 + 2  # two failed tries, then success
    assert server.count == 6


def test_persistent_faults_become_errors_and_an_error_verdict(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    server.add_fault("overloaded", retry_after=0)
    code, out, err = run_cli(*setup(tmp_path, tasks=2), "--max-retries", "2")
    assert code == 3, err
    data = read_json(out.strip())
    assert data["evaluation"]["verdict"] == "error"
    assert data["evaluation"]["reason"].startswith("2 of 2 attempts of the candidate ended in")
    assert len(data["errors"]) == 4 and server.count == 4 * 3
    assert all(r["status"] == "error" for r in data["candidate_results"])


def test_usage_and_cost_are_summed_into_the_artifact(tmp_path: Path, server: FakeAnthropic) -> None:
    code, out, err = run_cli(*setup(tmp_path), "--model", "claude-sonnet-4-6")
    data = read_json(out.strip())
    usage = data["usage"]["candidate"]
    per_attempt = [
        a["usage"]["output_tokens"] for r in data["candidate_results"] for a in r["attempts"]
    ]
    assert usage["output_tokens"] == sum(per_attempt) > 0
    assert usage["input_tokens"] > 0 and usage["cost_usd"] > 0
    assert data["usage"]["baseline"]["attempts"] == 3


def test_a_full_cached_baseline_sends_no_baseline_request(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    """Baselines accumulate: each run until the cache holds a full pool (4 x --samples attempts
    a task) runs its own baseline and adds it, drawing nothing (a smaller pool would save no
    attempt); from then on the run makes only its fresh baseline attempts (at 2 samples, one a
    task) beside the cached ones, and the rest sent is the candidate's."""
    args = [*setup(tmp_path), "--baseline-cache-dir", str(tmp_path / "cache"), "--samples", "2"]
    for run in range(1, 5):  # 4 runs of 2: a pool of 8
        code, out, err = run_cli(*args)
        assert code == 0, err
        assert server.count == 12 * run  # both arms, 3 tasks x 2 samples
        data = read_json(out.strip())
        assert data["baseline_cache"]["attempts_from_cache"] == 0
        assert data["usage"]["baseline"]["output_tokens"] > 0  # this run paid for its own
    code, out, err = run_cli(*args)
    assert code == 0, err
    new = server.requests[48:]
    assert len(new) == 9 and sum(has_skill(r) for r in new) == 6
    data = read_json(out.strip())
    assert data["baseline_cache"]["hit"] is True and data["baseline_pool"]["smallest"] == 8
    assert data["baseline_cache"]["drift_guard"]["fresh_attempts"] == 3
    assert data["usage"]["baseline"]["from_cache"] == 21
    # the verdict's baseline is this run's own: one attempt a task
    assert [r["stats"]["n"] for r in data["baseline_results"]] == [1, 1, 1]
    # tokens and cost: the runs that made the cached attempts paid for them, this one for three
    assert data["usage"]["baseline"]["output_tokens"] > 0


@pytest.mark.slow
def test_a_killed_run_resumes_without_repeating_finished_attempts(tmp_path: Path) -> None:
    tasks = 6
    with FakeAnthropic(rules=RULES, default="nothing", latency=0.4) as fake:
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "k"}
        args = [*setup(tmp_path, tasks=tasks), "--concurrency", "1"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "skill_eval.cli", *args],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        journal = None
        deadline = time.monotonic() + 180  # polled: generous for a loaded machine
        while time.monotonic() < deadline:
            found = list((tmp_path / "state" / "runs").glob("*/attempts.jsonl"))
            if found and len(journal_records(found[0])) >= 4:
                journal = found[0]
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        assert journal is not None
        finished = len(journal_records(journal))
        assert finished < 2 * tasks
        before = fake.count
        resumed = subprocess.run(
            [sys.executable, "-m", "skill_eval.cli", *args, "--resume"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert resumed.returncode == 0, resumed.stderr
        assert fake.count - before == 2 * tasks - finished
        data = read_json(resumed.stdout.strip())
        assert data["manifest"]["run_dir"] == str(journal.parent)
        assert len(journal_records(journal)) == 2 * tasks
        assert data["evaluation"]["execution_pass_rate"] == 1.0


def _deaf_to_sigint() -> None:
    """The child starts with SIGINT ignored and blocked, as a shell's `&` or a parent whose
    thread blocked it would start it (both are inherited across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@pytest.mark.parametrize(
    ("sig", "deaf"),
    [
        pytest.param(signal.SIGINT, False, marks=pytest.mark.slow, id="sigint"),
        pytest.param(signal.SIGTERM, False, id="sigterm"),
        pytest.param(signal.SIGINT, True, id="sigint-started-ignored"),
    ],
)
def test_interrupt_saves_progress_and_says_how_to_resume(tmp_path: Path, sig, deaf) -> None:
    # Replies take ten minutes: a process that waited for the requests in flight would not exit
    # within communicate()'s timeout. What is asserted is what it said and saved, not speed.
    with FakeAnthropic(rules=RULES, default="nothing", latency=600.0) as fake:
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "k"}
        args = [*setup(tmp_path, tasks=4), "--concurrency", "2"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "skill_eval.cli", *args],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_deaf_to_sigint if deaf else None,
        )
        deadline = time.monotonic() + 180  # polled: generous for a loaded machine
        while fake.count < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 130 and out == ""
        run_dir = next((tmp_path / "state" / "runs").glob("*"))
        # it stopped with the two requests still unanswered: nothing finished, and it says so
        assert f"interrupted: 0 finished attempts are saved in {run_dir}" in err
        journal = run_dir / "attempts.jsonl"
        assert not journal.exists() or journal.read_text() == ""
        assert fake.count == 2 and all(r.status is None for r in fake.requests)
        assert f"continue with --resume {run_dir}" in err
        assert "Traceback" not in err
        assert not (run_dir / "run.lock").exists()  # let go of, and removed
