"""The SQLite memory: schema, WAL, versions, cycles, token-budgeted recall, history."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from skill_eval.improve import ImproveMemory, version_hash
from skill_eval.improve.memory import CycleRecord, estimate_tokens, format_history


class Tick:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        self.t += 1
        return self.t


def test_tables_and_wal(tmp_path: Path) -> None:
    with ImproveMemory.in_state_root(tmp_path / "state") as m:
        assert m.path == tmp_path / "state" / "improve.sqlite3"
    db = sqlite3.connect(tmp_path / "state" / "improve.sqlite3")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"improve_runs", "iteration_cycles", "skill_versions", "learnings"} <= tables
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    cols = {r[1] for r in db.execute("PRAGMA table_info(iteration_cycles)")}
    assert {
        "id",
        "run",
        "iteration",
        "phase",
        "decision",
        "train_score",
        "holdout_score",
        "tokens",
        "cost_usd",
        "duration_seconds",
        "skill_hash",
    } <= cols


def test_version_hash_covers_every_file() -> None:
    base = {"SKILL.md": "x"}
    assert version_hash(base) == version_hash({"SKILL.md": "x"})
    assert version_hash(base) != version_hash({"SKILL.md": "x", "ref.md": ""})
    assert version_hash({"a": "bc"}) != version_hash({"ab": "c"})


def test_versions_cycles_and_history(tmp_path: Path) -> None:
    m = ImproveMemory(tmp_path / "m.db", now=Tick())
    run = m.start_run("demo", {"iterate": 3})
    h0 = m.record_version(run, 1, {"SKILL.md": "v0"}, None, "")
    h1 = m.record_version(run, 2, {"SKILL.md": "v1"}, h0, "-v0\n+v1\n")
    assert m.version_files(run, h1) == {"SKILL.md": "v1"}
    m.record_cycle(CycleRecord(run, 1, "refine", "Continue", "low", 0.5, 0.25, 10, 0.1, 1.0, h0))
    m.record_cycle(CycleRecord(run, 2, "complete", "Accept", "ok", 1.0, None, 5, 0.05, 2.0, h1))
    m.finish_run(
        run,
        decision="Accept",
        reason="ok",
        original_hash=h0,
        best_hash=h1,
        proposed=True,
        tokens=15,
        cost_usd=0.15,
    )
    [item] = m.history("demo")
    assert item["decision"] == "Accept" and item["proposed"] is True
    assert item["settings"] == {"iterate": 3}
    assert [c["decision"] for c in item["cycles"]] == ["Continue", "Accept"]
    text = format_history(m.history())
    assert "run 1  demo  Accept  proposed  $0.15  15 tokens" in text
    assert "iter 2  train 1.00  holdout -  Accept: ok" in text
    assert m.history("other") == []


def test_recall_is_newest_first_within_a_chars_over_4_budget(tmp_path: Path) -> None:
    m = ImproveMemory(tmp_path / "m.db", now=Tick())
    r1 = m.start_run("demo", {})
    m.add_learning("demo", r1, "learning", "old " * 10)  # 40 chars = 10 tokens
    m.add_learning("demo", r1, "anti_pattern", "bad " * 10)  # 10 tokens
    m.add_learning("demo", r1, "learning", "new " * 10)  # 10 tokens
    m.add_learning("other", r1, "learning", "not this skill")
    got = m.recall("demo", token_budget=20)
    assert got.learnings == ("new " * 10,) and got.anti_patterns == ("bad " * 10,)
    assert (got.tokens, got.dropped) == (20, 1)
    assert got.texts[0].startswith("Learning: new")
    assert m.recall("demo", 1000, exclude_run=r1).learnings == ()
    assert estimate_tokens("abcde") == 2


def test_memory_survives_reopening(tmp_path: Path) -> None:
    with ImproveMemory(tmp_path / "m.db") as m:
        m.add_learning("demo", None, "learning", "keep examples short")
    with ImproveMemory(tmp_path / "m.db") as m:
        assert m.recall("demo", 100).learnings == ("keep examples short",)
