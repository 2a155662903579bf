"""The journal's MAC chain (engine/journal.py, engine/journal_key.py) on its own: what the
harness may write twice, and the key file. The attacks on it are in test_attack_journal.py."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from skill_eval.core.model import Attempt
from skill_eval.engine.journal import Journal
from skill_eval.engine.journal_key import JournalKey
from skill_eval.errors import JournalError


def test_an_attempt_recorded_twice_is_refused_even_when_signed(tmp_path: Path) -> None:
    key = JournalKey.for_state_root(tmp_path)
    journal = Journal(tmp_path / "attempts.jsonl", key=key)
    journal.append(Attempt("candidate", "t0", 0, "passed", "DONE", None, None, 1))
    journal.append(Attempt("candidate", "t0", 0, "error", "", None, "boom", 1))
    journal.close()
    with pytest.raises(
        JournalError, match=r"attempts.jsonl:3: attempt candidate/t0/0 is recorded twice"
    ):
        Journal(tmp_path / "attempts.jsonl", key=key).read()


def test_a_rerun_after_an_error_is_no_repeat(tmp_path: Path) -> None:
    key = JournalKey.for_state_root(tmp_path)
    journal = Journal(tmp_path / "attempts.jsonl", key=key)
    journal.append(Attempt("candidate", "t0", 0, "error", "", None, "HTTP 529", 1))
    journal.close()
    again = Journal(tmp_path / "attempts.jsonl", key=key)  # --resume runs it again
    assert [a.status for a in again.read()] == ["error"]
    again.append(Attempt("candidate", "t0", 0, "passed", "DONE", None, None, 1))
    again.close()
    assert [a.status for a in Journal(tmp_path / "attempts.jsonl", key=key).read()] == ["passed"]


def test_the_state_roots_key_is_private_and_made_once(tmp_path: Path) -> None:
    first = JournalKey.for_state_root(tmp_path / "state")
    path = tmp_path / "state" / "journal.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert JournalKey.for_state_root(tmp_path / "state").secret == first.secret
    assert first.secret not in repr(first).encode()


def test_a_bad_journal_key_stops_the_run_before_anything_runs(tmp_path: Path) -> None:
    from tests.helpers import DEMO_OUTPUTS, DEMO_SKILL, DEMO_SUITE, run_cli

    short = tmp_path / "short.key"
    short.write_text("too-short\n")
    for key, message in (
        (tmp_path / "missing.key", "cannot read the journal key"),
        (short, "a journal key is 32 to 4096 characters"),
    ):
        code, out, err = run_cli(
            "run",
            "--standalone",
            "--task-suite",
            str(DEMO_SUITE),
            "--skill-path",
            str(DEMO_SKILL),
            "--mock",
            "--mock-outputs",
            str(DEMO_OUTPUTS),
            "--state-root",
            str(tmp_path / "state"),
            "--journal-key",
            str(key),
            "-q",
        )
        assert code == 2 and out == "" and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
        assert err.startswith(f"Error: {key}: {message}")
        assert not (tmp_path / "state" / "runs").exists()  # no run directory was made
