"""`Work`: what an attempt produced, its digest, and how attempts carry it through the journal."""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import skill_eval
from skill_eval.core.model import Attempt, JudgeResult, Task
from skill_eval.core.work import FileSnapshot, Snapshot, ToolCall, Work
from skill_eval.engine.runner import Journal
from skill_eval.judges import JudgeContext, build_judge, run_judge
from tests.helpers import journal_records

FILES = Snapshot((FileSnapshot("notes/a.md", 3, hashlib.sha256(b"abc").hexdigest()),))
CALLS = (ToolCall("Write", {"file_path": "notes/a.md", "content": "abc"}, ok=True),)


def test_work_is_exported_and_text_work_is_empty_otherwise() -> None:
    work = skill_eval.Work("hello")
    assert work.text == "hello" and work.transcript == () and work.files is None
    assert work.is_text_only and work.to_dict() == {}


def test_text_digest_is_the_sha256_of_the_text() -> None:
    # so the judge cache, which keys on the digest, keeps its meaning for text tasks
    assert Work("hello").digest() == hashlib.sha256(b"hello").hexdigest()


@pytest.mark.parametrize(
    "other",
    [
        Work("hello", transcript=CALLS),
        Work("hello", files=FILES),
        Work("hello", transcript=CALLS, files=FILES),
        Work("hello", files=Snapshot((FileSnapshot("notes/a.md", 3, "0" * 64),))),
        Work("hello", transcript=(ToolCall("Write", {"file_path": "b.md"}),)),
    ],
)
def test_digest_covers_transcript_and_files(other: Work) -> None:
    assert other.digest() != Work("hello").digest()


def test_digest_ignores_where_the_files_live(tmp_path: Path) -> None:
    here = Snapshot(
        tuple(FileSnapshot(f.path, f.size, f.sha256, root=tmp_path) for f in FILES.files),
        root=tmp_path,
    )
    assert Work("x", files=here).digest() == Work("x", files=FILES).digest()


def test_attempt_record_of_text_work_has_no_new_keys() -> None:
    attempt = Attempt("candidate", "t1", 0, "passed", "out", JudgeResult(True, 1.0), None, 5)
    assert set(attempt.to_dict()) == {
        "arm",
        "task_id",
        "index",
        "status",
        "output",
        "judge",
        "error",
        "duration_ms",
        "tries",
        "usage",
        "cost_usd",
        "started_at",
        "finished_at",
    }


def test_attempt_keeps_meta_transcript_and_files_through_the_journal(tmp_path: Path) -> None:
    attempt = Attempt(
        "candidate",
        "t1",
        0,
        "passed",
        "out",
        JudgeResult(True, 1.0),
        None,
        5,
        transcript=CALLS,
        files=FILES,
        meta={"latency_ms": 12, "stop_reason": "end_turn", "model": "m", "odd": Path("/x")},
    )
    journal = Journal(tmp_path / "attempts.jsonl")
    journal.append(attempt)
    journal.close()
    [record] = journal_records(tmp_path / "attempts.jsonl")
    assert record["meta"] == {
        "latency_ms": 12,
        "stop_reason": "end_turn",
        "model": "m",
        "odd": "/x",
    }
    assert record["transcript"][0]["name"] == "Write"
    assert record["files"] == {
        "files": [{"path": "notes/a.md", "size": 3, "sha256": FILES.files[0].sha256}]
    }
    back = journal.read()[0]
    read, written = back.load_work(), attempt.load_work()
    assert read == written and read.digest() == written.digest()
    assert back.meta["latency_ms"] == 12


def test_a_kept_workspace_lets_a_recorded_snapshot_read_content(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("abc")
    data = {"files": [{"path": "notes/a.md", "size": 3, "sha256": "x"}], "root": str(tmp_path)}
    snapshot = Snapshot.from_dict(data)
    assert snapshot.files[0].read_text() == "abc"
    with pytest.raises(FileNotFoundError, match="not kept"):
        FILES.files[0].read_text()


def test_python_judge_gets_work_only_when_it_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "mods" / "work_judges_mod.py"  # (tmp_path holds HOME: not shown)
    module.parent.mkdir()
    module.write_text(
        textwrap.dedent("""
        def old_style(output, task):
            return output == "hello"

        def new_style(output, task, work=None):
            return bool(work and work.transcript and work.transcript[0].name == "Write")
    """)
    )
    monkeypatch.syspath_prepend(str(module.parent))
    monkeypatch.delitem(sys.modules, "work_judges_mod", raising=False)
    work = Work("hello", transcript=CALLS)

    def judge(fn: str) -> Any:
        config = {"type": "python", "callable": f"work_judges_mod:{fn}"}
        return run_judge(
            build_judge(config),
            Task(id="t", prompt="p", judge=config),
            work,
            JudgeContext(suite_dir=tmp_path),
        )

    assert judge("old_style").passed and judge("new_style").passed
    assert not run_judge(
        build_judge({"type": "python", "callable": "work_judges_mod:new_style"}),
        Task(id="t", prompt="p", judge={}),
        Work("hello"),
        JudgeContext(suite_dir=tmp_path),
    ).passed


def test_artifact_schema_takes_attempts_with_work_and_meta() -> None:
    from skill_eval.engine import artifact
    from skill_eval.errors import ArtifactError
    from skill_eval.stats.results import attempt_summary

    golden = json.loads(
        (Path(__file__).parent / "data" / "golden" / "demo-artifact.json").read_text(
            encoding="utf-8"
        )
    )
    attempt = Attempt(
        "candidate",
        "added-and-fixed",
        0,
        "passed",
        "out",
        JudgeResult(True, 1.0),
        None,
        5,
        transcript=CALLS,
        files=FILES,
        meta={"latency_ms": 3},
    )
    golden["candidate_results"][0]["attempts"][0] = attempt_summary(attempt)
    artifact.validate(golden)
    golden["candidate_results"][0]["attempts"][0]["files"]["files"][0]["size"] = -1
    with pytest.raises(ArtifactError, match="size"):
        artifact.validate(golden)
