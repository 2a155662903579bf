"""The blob store, previews, the cut at --max-output-bytes, and attempts stored through them
(core/blobs.py, engine/attempt_store.py): what the journal, the artifact and the cache build on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from skill_eval.core.blobs import (
    TRANSCRIPT_PREVIEW_CALLS,
    BlobStore,
    OutputRef,
    cut_ingredient,
    measure,
    preview,
    read_output,
)
from skill_eval.core.model import Attempt, JudgeResult, clean_text
from skill_eval.core.work import ToolCall
from skill_eval.engine.attempt_store import store_attempt
from skill_eval.engine.runner import Journal


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def attempt(output: str, **fields: object) -> Attempt:
    return Attempt(
        arm="candidate",
        task_id="t",
        index=0,
        status="passed",
        output=output,
        judge=JudgeResult(True, 1.0, "ok"),
        error=None,
        duration_ms=1,
        **fields,
    )  # type: ignore[arg-type]


def test_measure_hashes_once_and_cuts_at_a_character_boundary_with_a_marker() -> None:
    text, ref = measure("héllo wörld")
    assert ref == OutputRef(sha("héllo wörld"), len("héllo wörld".encode()))
    cut, ref = measure("é" * 100, max_bytes=11)  # 11 bytes end inside the sixth é
    assert cut.startswith("é" * 5) and not cut.startswith("é" * 6)
    assert "output cut at --max-output-bytes 11; the executor returned 200 bytes" in cut
    assert ref.cut_from == 200 and ref.sha256 == sha(cut) and ref.size == len(cut.encode())
    assert measure("x" * 11, max_bytes=11)[1].cut_from is None  # at the limit: not cut
    lone = measure("a\ud800b")[0]  # a lone surrogate cannot be stored: replaced, as ever
    assert lone == clean_text("a\ud800b") and "\ud800" not in lone


def test_preview_keeps_both_ends_and_says_what_was_cut() -> None:
    text = "A" * 5000 + "MIDDLE" + "Z" * 5000
    shown = preview(text, 1000, "blobs/" + "0" * 64)
    assert shown.startswith("A" * 500) and shown.endswith("Z" * 500)
    assert "MIDDLE" not in shown
    assert f"{len(text) - 1000} of {len(text)} characters not shown" in shown
    assert "blobs/" + "0" * 64 in shown


def test_the_store_keeps_each_content_once_and_leaves_no_temp_files(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    first = store.put_text("same text")
    again = store.put_text("same text")
    assert first == again == f"blobs/{sha('same text')}"
    assert [p.name for p in (tmp_path / "blobs").iterdir()] == [sha("same text")]
    other = BlobStore(tmp_path / "other")
    other.copy_from(store, sha("same text"))
    assert other.read_text(sha("same text")) == "same text"


def test_a_short_output_stays_inline_a_long_one_becomes_a_preview(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    short = store_attempt(attempt("short answer"), store, max_preview_chars=100)
    assert short.output == "short answer" and short.output_ref is not None
    assert short.output_ref.blob is None and not (tmp_path / "blobs").exists()
    long_text = "begin " + "x" * 10_000 + " end"
    long = store_attempt(attempt(long_text), store, max_preview_chars=100)
    assert long.output_ref == OutputRef(sha(long_text), len(long_text), f"blobs/{sha(long_text)}")
    assert len(long.output) < 400 and long.output.startswith("begin ")
    assert long.full_output() == long_text and long.load_work().text == long_text
    record = long.to_dict()
    assert record["output_blob"] == f"blobs/{sha(long_text)}"
    assert read_output(record, tmp_path) == long_text
    assert Attempt.from_dict(record, blob_root=tmp_path).load_work().text == long_text


def test_records_from_before_blobs_still_read(tmp_path: Path) -> None:
    old = attempt("y" * 9000).to_dict()  # an attempt that never had a ref: inline, no fields
    assert "output_sha256" not in old and "output_blob" not in old
    back = Attempt.from_dict(old)
    assert back.output_ref is None and back.load_work().text == "y" * 9000
    assert read_output(old, None) == "y" * 9000
    stored = store_attempt(back, BlobStore(tmp_path), 100)  # journaled again: measured now
    assert stored.output_ref is not None and stored.output_ref.blob is not None
    assert stored.full_output() == "y" * 9000


def test_a_record_cannot_point_a_reader_outside_the_blob_store() -> None:
    record = attempt("preview").to_dict() | {
        "output_sha256": "0" * 64,
        "output_size": 7,
        "output_blob": "../../etc/passwd",
    }
    ref = OutputRef.from_dict(record)
    assert ref is not None and ref.blob is None  # treated as inline: nothing is read


def test_a_record_cannot_name_a_file_outside_the_blob_store(tmp_path: Path) -> None:
    """A hostile journal, cache entry or shard record: its sha256 is a file name only when it
    is one; anything else is measured again from the text, so nothing is written outside."""
    run = tmp_path / "run"
    escape = "0123456789abcdef/../../../evil_written"
    record = attempt("x" * 5000).to_dict() | {"output_sha256": escape, "output_size": 5000}
    forged = Attempt.from_dict(record, blob_root=run)
    assert forged.output_ref is None
    journal = Journal(run / "attempts.jsonl", max_preview_chars=200)
    stored = journal.append(forged)
    journal.close()
    assert not (tmp_path / "evil_written").exists()
    assert stored.output_ref is not None and stored.output_ref.sha256 == sha("x" * 5000)
    transcript = {
        "transcript_sha256": escape,
        "transcript_size": 1,
        "transcript_calls": 1,
        "transcript_blob": f"blobs/{escape}",
    }
    assert Attempt.from_dict(attempt("y").to_dict() | transcript).transcript_ref is None
    with pytest.raises(ValueError):
        BlobStore(run).path(escape)


def test_a_blob_that_does_not_match_its_sha256_is_not_read(tmp_path: Path) -> None:
    stored = store_attempt(attempt("q" * 9000), BlobStore(tmp_path), 100)
    (tmp_path / "blobs" / sha("q" * 9000)).write_text("q" * 4000)  # truncated
    with pytest.raises(FileNotFoundError, match="does not match its sha256"):
        _ = stored.load_work()
    calls = tuple(
        ToolCall("Read", {"file_path": f"f{i}.txt"}, True, "c " * 3000) for i in range(60)
    )
    long = store_attempt(attempt("done", transcript=calls), BlobStore(tmp_path))
    assert long.transcript_ref is not None
    (tmp_path / long.transcript_ref.blob).write_text("not json")
    with pytest.raises(FileNotFoundError):
        _ = long.load_work()


def test_the_journal_stores_blobs_before_the_record_and_reads_them_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "attempts.jsonl", max_preview_chars=200)
    text = "z" * 50_000
    recorded = journal.append(attempt(text))
    journal.close()
    assert (tmp_path / "blobs" / sha(text)).read_text() == text
    assert (tmp_path / "attempts.jsonl").stat().st_size < 2000
    [back] = Journal(tmp_path / "attempts.jsonl").read()
    assert back == recorded and back.load_work().text == text


def test_a_long_transcript_is_a_blob_and_the_record_keeps_its_ends(tmp_path: Path) -> None:
    calls = tuple(
        ToolCall("Read", {"file_path": f"f{i}.txt"}, True, "content " * 500) for i in range(100)
    )
    stored = store_attempt(attempt("done", transcript=calls), BlobStore(tmp_path))
    ref = stored.transcript_ref
    assert ref is not None and ref.calls == 100
    assert len(stored.transcript) == 2 * TRANSCRIPT_PREVIEW_CALLS
    assert stored.transcript[0].input["file_path"] == "f0.txt"
    assert stored.transcript[-1].input["file_path"] == "f99.txt"
    assert len(json.dumps(stored.to_dict())) < 30_000
    back = Attempt.from_dict(json.loads(json.dumps(stored.to_dict())), blob_root=tmp_path)
    assert back.load_work().transcript == calls
    few = store_attempt(attempt("done", transcript=calls[:3]), BlobStore(tmp_path))
    assert few.transcript_ref is None and few.transcript == calls[:3]


def test_a_missing_blob_is_a_clear_error_not_a_preview_judged_as_the_output(tmp_path: Path) -> None:
    stored = store_attempt(attempt("q" * 9000), BlobStore(tmp_path), 100)
    (tmp_path / "blobs" / sha("q" * 9000)).unlink()
    with pytest.raises(FileNotFoundError):
        _ = stored.load_work()


def test_only_a_non_default_cut_enters_the_fingerprint() -> None:
    assert cut_ingredient(10 * 1024 * 1024) == {}  # fingerprints from before the cut match
    assert cut_ingredient(1000) == {"max_output_bytes": 1000}


def test_show_says_a_stored_transcript_is_shown_by_its_ends(tmp_path: Path) -> None:
    from skill_eval.cli.show_cmd import task_text
    from skill_eval.report.task_details import TaskDetail, attempt_detail

    calls = tuple(
        ToolCall("Bash", {"command": f"step {i}"}, True, "log " * 1000) for i in range(60)
    )
    stored = store_attempt(attempt("x" * 5000, transcript=calls), BlobStore(tmp_path), 1000)
    detail = attempt_detail("candidate", stored.to_dict(), run_dir=tmp_path)
    assert detail.transcript_calls == 60 and len(detail.transcript) == 20
    assert detail.full_output() == "x" * 5000
    sections = dict(task_text(TaskDetail("t", "p", {"candidate": [detail]}), full=True))
    heading = next(h for h in sections if "transcript" in h)
    assert "first and last 10 of 60 calls" in heading
    assert sections[next(h for h in sections if "output" in h)] == "x" * 5000
