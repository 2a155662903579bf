"""Issue 17, "resume and cache keep their promises": one fingerprint for --resume and the
baseline cache, every fixture byte in it, exclusive artifacts and locked run directories."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from skill_eval.core.model import Attempt, JudgeResult
from skill_eval.engine.fingerprint import directory_digest
from skill_eval.engine.journal import Journal
from skill_eval.engine.rundir import _lock
from skill_eval.errors import UsageError
from tests.helpers import (
    DEMO_RANKING,
    DEMO_SUITE,
    read_json,
    run_cli,
    write_outputs,
    write_skill,
    write_suite,
)

FIXTURE_PASSES = "def test_out():\n    assert True\n"
FIXTURE_FAILS = "def test_out():\n    assert False\n"


def _pytest_suite(tmp_path: Path, fixture: str) -> Path:
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True, exist_ok=True)
    (suite_dir / "fixtures" / "test_out.py").write_text(fixture)
    return write_suite(
        suite_dir,
        [
            {
                "id": f"t{i}",
                "prompt": "p",
                "judge": {"type": "pytest", "test_file": "fixtures/test_out.py"},
            }
            for i in range(2)
        ],
    )


def _standalone(tmp_path: Path, suite: Path, *extra: str) -> tuple[int, str, str]:
    skill = write_skill(tmp_path / "skill")
    return run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
        "--baseline-cache-dir",
        str(tmp_path / "cache"),
        *extra,
    )


def test_resume_after_a_fixture_changed_is_refused_naming_it(tmp_path: Path) -> None:
    suite = _pytest_suite(tmp_path, FIXTURE_PASSES)
    code, out, err = _standalone(tmp_path, suite)
    run_dir = Path(read_json(out.strip())["manifest"]["run_dir"])
    assert "ingredients" in read_json(run_dir / "run.json")
    (suite.parent / "fixtures" / "test_out.py").write_text(FIXTURE_FAILS)
    code, out, err = _standalone(tmp_path, suite, "--resume", str(run_dir))
    assert code == 2 and out == "", err
    assert "that run used other inputs (changed: fixtures, fixtures_tree)" in err
    # a fresh run reads no stale 2/2 from the cache: its baseline fails, as it really does
    code, out, err = _standalone(tmp_path, suite)
    fresh = read_json(out.strip())
    assert fresh["baseline_cache"]["hit"] is False
    assert fresh["evaluation"]["baseline_pass_rate"] == 0.0


def test_every_fixture_file_counts_past_the_5000th(tmp_path: Path) -> None:
    tree = tmp_path / "fixtures"
    tree.mkdir()
    for i in range(5002):
        (tree / f"f{i:05d}.txt").write_text("x")
    before = directory_digest(tree)
    (tree / "f05001.txt").write_text("y")
    assert directory_digest(tree) != before


def _pipeline(tmp_path: Path) -> tuple[int, str, str]:
    return run_cli(
        "run",
        "--input",
        str(DEMO_RANKING),
        "--candidate-id",
        "cand-sections",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "-q",
    )


def test_two_identical_pipeline_runs_keep_both_artifacts(tmp_path: Path) -> None:
    _, out1, _ = _pipeline(tmp_path)
    _, out2, err = _pipeline(tmp_path)
    first, second = Path(out1.strip()), Path(out2.strip())
    assert first.name == "demo-run-001-cand-sections.json"  # the compatible default name
    assert second.name == "demo-run-001-cand-sections-2.json"
    assert f"{first} belongs to another run; this artifact is {second.name}" in err
    assert read_json(first)["manifest"]["run_dir"] != read_json(second)["manifest"]["run_dir"]


def test_a_resume_rewrites_its_own_artifact(tmp_path: Path) -> None:
    _, out1, _ = _pipeline(tmp_path)
    _, out2, _ = run_cli(
        "run",
        "--input",
        str(DEMO_RANKING),
        "--candidate-id",
        "cand-sections",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "-q",
        "--resume",
    )
    assert out2 == out1


def test_a_second_process_on_a_running_run_gets_a_one_line_error(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t1", "prompt": "p", "judge": {"type": "contains", "expected": ["alpha"]}}],
    )
    outputs = write_outputs(tmp_path / "out.yaml", {"t1": "alpha"})
    skill = write_skill(tmp_path / "skill")
    args = [
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
    ]
    _, out, _ = run_cli(*args)
    run_dir = Path(read_json(out.strip())["manifest"]["run_dir"])
    journal = (run_dir / "attempts.jsonl").read_text()
    with (run_dir / "run.lock").open("a") as held:  # another process mid-run
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, out, err = run_cli(*args, "--resume", str(run_dir))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "another skill-eval process is running this run" in lines[0]
    assert (run_dir / "attempts.jsonl").read_text() == journal  # nothing executed twice
    code, _, err = run_cli(*args, "--resume", str(run_dir))  # released: it continues
    # a fail verdict for lack of evidence (exit 4): 1 task cannot rule out a regression
    assert code == 4 and "finished attempts kept" in err


def test_a_finished_run_leaves_no_lock_and_a_resume_still_locks(tmp_path: Path) -> None:
    """run.lock goes when the run ends (removed while still held, see rundir.release); the
    next process locks a new one, which holds off another."""
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t1", "prompt": "p", "judge": {"type": "contains", "expected": ["alpha"]}}],
    )
    _, out, err = _standalone(tmp_path, suite)
    run_dir = Path(read_json(out.strip())["manifest"]["run_dir"])
    assert not (run_dir / "run.lock").exists(), err
    held = _lock(run_dir)
    try:
        assert os.fstat(held.fileno()).st_ino == os.stat(run_dir / "run.lock").st_ino
        with pytest.raises(UsageError, match="another skill-eval process"):
            _lock(run_dir)
    finally:
        held.close()


def test_the_interrupt_counts_what_resume_keeps(tmp_path: Path) -> None:
    """An interrupt that lands after a record is written but before the journal notes it in
    memory: the count is read back from disk, as --resume reads it."""
    journal = Journal(tmp_path / "attempts.jsonl")
    judged = JudgeResult(True, 1.0)
    journal.append(Attempt("candidate", "t1", 0, "passed", "out", judged, None, 5))
    written_behind = Journal(journal.path, key=journal.key)  # the bookkeeping it missed
    written_behind.append(Attempt("candidate", "t2", 0, "passed", "out", judged, None, 5))
    written_behind.close()
    assert len(journal.recorded()) == 1
    assert len(journal.saved()) == 2 == len(Journal(journal.path, key=journal.key).read())
