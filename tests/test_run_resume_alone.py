"""`skill-eval run --resume RUN_DIR` alone: the run directory's run.json holds the plan, so an
interrupted run continues with nothing repeated, only its missing attempts made."""

from __future__ import annotations

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

MARK = "SKILL-MARK-42"
RULES = [{"system_contains": MARK, "text": "alpha"}]


def test_an_interrupted_run_resumes_from_its_directory_alone(tmp_path: Path) -> None:
    tasks = 4
    suite = write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(tasks)])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {MARK}")
    state = tmp_path / "state"
    first = ["run", "--task-suite", str(suite), "--skill-path", str(skill), "--state-root"]
    first += [str(state), "--executor", "anthropic", "--model", "m", "-q", "--concurrency", "1"]
    first += ["--policy", "delta"]
    with FakeAnthropic(rules=RULES, default="nothing", latency=0.3) as fake:
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "k"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "skill_eval.cli", *first],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        journal = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and journal is None:
            found = list((state / "runs").glob("*/attempts.jsonl"))
            if found and len(journal_records(found[0])) >= 2:
                journal = found[0]
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert journal is not None and proc.returncode == 130, err
        run_dir = journal.parent
        assert f"continue with --resume {run_dir}" in err
        finished = len(journal_records(journal))
        assert finished < 2 * tasks
        before = fake.count
        resumed = subprocess.run(
            [sys.executable, "-m", "skill_eval.cli", "run", "--resume", str(run_dir), "-q"],
            env=env,
            cwd=tmp_path,  # another folder: the stored plan's paths are absolute
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resume: {finished} finished attempts kept from {run_dir}" in resumed.stderr
    assert fake.count - before == 2 * tasks - finished  # only the missing attempts ran
    data = read_json(Path(resumed.stdout.strip()))
    assert data["manifest"]["run_dir"] == str(run_dir)
    assert data["evaluation"]["execution_pass_rate"] == 1.0
    assert len(journal_records(journal)) == 2 * tasks


def test_resume_alone_says_what_it_needs(tmp_path: Path) -> None:
    code, out, err = run_cli("run", "--resume", str(tmp_path))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert f"{tmp_path}: not a run directory made by this version of skill-eval" in err
    code, _, err = run_cli("run", "--resume", str(tmp_path / "nope"))
    assert code == 2 and f"--resume {tmp_path / 'nope'}: no such run directory" in err
    code, _, err = run_cli("run", "--mock")
    assert code == 2 and "Missing option '--task-suite' (or give SKILL_DIR" in err


def test_resume_alone_names_a_suite_it_cannot_find(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t0", "alpha")])
    skill = write_skill(tmp_path / "skill")
    state = tmp_path / "state"
    code, _, err = run_cli(
        "run", "--task-suite", str(suite), "--skill-path", str(skill), "--mock",
        "--state-root", str(state), "-q",
    )  # fmt: skip
    assert code in (0, 1), err
    run_dir = next((state / "runs").iterdir())
    suite.unlink()
    code, _, err = run_cli("run", "--resume", str(run_dir), "--samples", "3")
    assert code == 2 and err.count("\n") == 1, err
    assert f"its plan names the task suite {suite}, which is not there" in err


def test_a_skill_dir_run_resumes_alone_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite made from evals.json, the skill and a relative --state-root are all found
    again: the plan stores absolute paths, and the run directory names its state root."""
    skill = write_skill(tmp_path / "start" / "notes")
    (skill / "evals").mkdir()
    (skill / "evals" / "evals.json").write_text(
        '{"skill_name": "notes", "evals": [{"id": 1, "prompt": "p", "assertions": ["ok"]}]}',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path / "start")
    code, _, err = run_cli("run", "notes", "--mock", "--state-root", "state", "-q")
    assert code in (0, 1, 4), err
    run_dir = next((tmp_path / "start" / "state" / "runs").iterdir())
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, out, err = run_cli("run", "--resume", str(run_dir), "-q")
    assert code in (0, 1, 4), err
    assert "finished attempts kept from" in err and not (tmp_path / "elsewhere" / "state").exists()
    assert read_json(Path(out.strip()))["manifest"]["run_dir"] == str(run_dir)
