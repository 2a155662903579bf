"""The improve loop's long-term memory: one SQLite file (stdlib sqlite3, WAL) in the state root.

Tables: improve_runs, iteration_cycles (every decision), skill_versions (content, parent, diff)
and learnings (learning | anti_pattern per skill id), read back by `recall` for the next run and
by `history` for `skill-eval improve --history`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

DB_NAME = "improve.sqlite3"
LearningKind = Literal["learning", "anti_pattern"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS improve_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, skill_id TEXT NOT NULL, started REAL NOT NULL,
  finished REAL, settings TEXT NOT NULL, decision TEXT, reason TEXT, original_hash TEXT,
  best_hash TEXT, proposed INTEGER, tokens INTEGER, cost_usd REAL);
CREATE TABLE IF NOT EXISTS skill_versions (
  hash TEXT NOT NULL, run INTEGER NOT NULL REFERENCES improve_runs(id), iteration INTEGER NOT NULL,
  content TEXT NOT NULL, parent TEXT, diff TEXT NOT NULL, created REAL NOT NULL,
  PRIMARY KEY (run, hash));
CREATE TABLE IF NOT EXISTS iteration_cycles (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run INTEGER NOT NULL REFERENCES improve_runs(id),
  iteration INTEGER NOT NULL, phase TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT NOT NULL,
  train_score REAL, holdout_score REAL, tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,
  duration_seconds REAL NOT NULL, skill_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS learnings (
  id INTEGER PRIMARY KEY AUTOINCREMENT, skill_id TEXT NOT NULL, run INTEGER, kind TEXT NOT NULL
  CHECK (kind IN ('learning', 'anti_pattern')), text TEXT NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS learnings_skill ON learnings(skill_id, created);
"""


def version_hash(files: Mapping[str, str]) -> str:
    """sha256 over every file of a skill version (sorted paths, NUL-separated), so a change to
    any file of the folder, not only SKILL.md, gives a new version."""
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode("utf-8") + b"\0" + files[path].encode("utf-8") + b"\0")
    return h.hexdigest()


def estimate_tokens(text: str) -> int:
    """A rough token count: characters / 4, rounded up. Only used to bound recall; no
    tokenizer is loaded for this."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class Recall:
    learnings: tuple[str, ...]
    anti_patterns: tuple[str, ...]
    tokens: int
    dropped: int

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(f"Learning: {t}" for t in self.learnings) + tuple(
            f"Anti-pattern: {t}" for t in self.anti_patterns
        )


@dataclass(frozen=True)
class CycleRecord:
    run: int
    iteration: int
    phase: str
    decision: str
    reason: str
    train_score: float | None
    holdout_score: float | None
    tokens: int
    cost_usd: float
    duration_seconds: float
    skill_hash: str


class ImproveMemory:
    """The SQLite store. `now` is injectable so tests get stable timestamps and ordering."""

    def __init__(self, path: Path, now: Callable[[], float] = time.time) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._now = now
        self._db = sqlite3.connect(path)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._db:
            self._db.executescript(_SCHEMA)

    @classmethod
    def in_state_root(cls, state_root: Path, now: Callable[[], float] = time.time) -> ImproveMemory:
        return cls(Path(state_root) / DB_NAME, now)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ImproveMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start_run(self, skill_id: str, settings: Mapping[str, Any]) -> int:
        with self._db:
            cur = self._db.execute(
                "INSERT INTO improve_runs (skill_id, started, settings) VALUES (?, ?, ?)",
                (skill_id, self._now(), json.dumps(dict(settings), sort_keys=True)),
            )
        return int(cur.lastrowid or 0)

    def finish_run(
        self,
        run: int,
        *,
        decision: str,
        reason: str,
        original_hash: str,
        best_hash: str,
        proposed: bool,
        tokens: int,
        cost_usd: float,
    ) -> None:
        with self._db:
            self._db.execute(
                "UPDATE improve_runs SET finished=?, decision=?, reason=?, original_hash=?, "
                "best_hash=?, proposed=?, tokens=?, cost_usd=? WHERE id=?",
                (
                    self._now(),
                    decision,
                    reason,
                    original_hash,
                    best_hash,
                    int(proposed),
                    tokens,
                    cost_usd,
                    run,
                ),
            )

    def record_version(
        self, run: int, iteration: int, files: Mapping[str, str], parent: str | None, diff: str
    ) -> str:
        digest = version_hash(files)
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO skill_versions (hash, run, iteration, content, parent, "
                "diff, created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    digest,
                    run,
                    iteration,
                    json.dumps(dict(files), sort_keys=True),
                    parent,
                    diff,
                    self._now(),
                ),
            )
        return digest

    def version_files(self, run: int, digest: str) -> dict[str, str]:
        row = self._db.execute(
            "SELECT content FROM skill_versions WHERE run=? AND hash=?", (run, digest)
        ).fetchone()
        if row is None:
            raise KeyError(digest)
        return dict(json.loads(row["content"]))

    def record_cycle(self, c: CycleRecord) -> None:
        with self._db:
            self._db.execute(
                "INSERT INTO iteration_cycles (run, iteration, phase, decision, reason, "
                "train_score, holdout_score, tokens, cost_usd, duration_seconds, skill_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    c.run,
                    c.iteration,
                    c.phase,
                    c.decision,
                    c.reason,
                    c.train_score,
                    c.holdout_score,
                    c.tokens,
                    c.cost_usd,
                    c.duration_seconds,
                    c.skill_hash,
                ),
            )

    def cycles(self, run: int) -> list[CycleRecord]:
        rows = self._db.execute("SELECT * FROM iteration_cycles WHERE run=? ORDER BY id", (run,))
        return [
            CycleRecord(
                r["run"],
                r["iteration"],
                r["phase"],
                r["decision"],
                r["reason"],
                r["train_score"],
                r["holdout_score"],
                r["tokens"],
                r["cost_usd"],
                r["duration_seconds"],
                r["skill_hash"],
            )
            for r in rows
        ]

    def add_learning(self, skill_id: str, run: int | None, kind: LearningKind, text: str) -> None:
        if kind not in ("learning", "anti_pattern"):
            raise ValueError(f"kind: must be learning or anti_pattern, got {kind!r}")
        with self._db:
            self._db.execute(
                "INSERT INTO learnings (skill_id, run, kind, text, created) VALUES (?, ?, ?, ?, ?)",
                (skill_id, run, kind, text, self._now()),
            )

    def recall(self, skill_id: str, token_budget: int, exclude_run: int | None = None) -> Recall:
        """Learnings and anti-patterns of earlier runs of `skill_id`, newest first, while their
        estimated tokens (chars / 4) fit in `token_budget`; the rest are counted as dropped."""
        rows = self._db.execute(
            "SELECT kind, text FROM learnings WHERE skill_id=? AND (run IS NULL OR run IS NOT ?)"
            " ORDER BY created DESC, id DESC",
            (skill_id, exclude_run),
        ).fetchall()
        learned: list[str] = []
        anti: list[str] = []
        used = dropped = 0
        seen: set[str] = set()
        for row in rows:
            if row["text"] in seen:  # the same lesson from several runs is told once
                continue
            seen.add(row["text"])
            cost = estimate_tokens(row["text"])
            if used + cost > token_budget:
                dropped += 1
                continue
            used += cost
            (learned if row["kind"] == "learning" else anti).append(row["text"])
        return Recall(tuple(learned), tuple(anti), used, dropped)

    def history(self, skill_id: str | None = None) -> list[dict[str, Any]]:
        """Every run (newest first) with its cycles, for `skill-eval improve --history`."""
        query = "SELECT * FROM improve_runs"
        args: tuple[Any, ...] = ()
        if skill_id is not None:
            query, args = query + " WHERE skill_id=?", (skill_id,)
        runs = self._db.execute(query + " ORDER BY id DESC", args).fetchall()
        out = []
        for r in runs:
            item = {k: r[k] for k in r.keys() if k != "settings"}
            item["settings"] = json.loads(r["settings"])
            item["proposed"] = None if r["proposed"] is None else bool(r["proposed"])
            item["cycles"] = [asdict(c) for c in self.cycles(r["id"])]
            out.append(item)
        return out


def format_history(runs: list[dict[str, Any]]) -> str:
    """Plain text for --history: one line per run, one indented line per cycle."""
    lines = []
    for run in runs:
        verdict = {None: "unfinished", True: "proposed", False: "not proposed"}[run["proposed"]]
        lines.append(
            f"run {run['id']}  {run['skill_id']}  {run['decision'] or '-'}  {verdict}"
            f"  ${run['cost_usd'] or 0:.2f}  {run['tokens'] or 0} tokens"
        )
        for c in run["cycles"]:
            hold = "-" if c["holdout_score"] is None else f"{c['holdout_score']:.2f}"
            train = "-" if c["train_score"] is None else f"{c['train_score']:.2f}"
            lines.append(
                f"  iter {c['iteration']}  train {train}  holdout {hold}  "
                f"{c['decision']}: {c['reason']}  [{c['skill_hash'][:12]}]"
            )
    return "\n".join(lines)
