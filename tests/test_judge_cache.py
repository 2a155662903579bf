"""JudgeCache: keys, JSON-only storage, errors never cached, corrupt rows read as misses."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult
from skill_eval.core.work import FileSnapshot, Snapshot, ToolCall, Work
from skill_eval.judges.judge_cache import JudgeCache, judge_cache_key

PARTS: dict[str, Any] = {
    "config": {"type": "llm-rubric", "rubric": "r", "pass_threshold": 0.7},
    "rubric": "r",
    "task_prompt": "p",
    "work": Work("o"),
    "model": "m",
    "backend": "anthropic",
}


def test_key_is_stable_and_canonical() -> None:
    reordered = {**PARTS, "config": {"pass_threshold": 0.7, "rubric": "r", "type": "llm-rubric"}}
    assert judge_cache_key(**PARTS) == judge_cache_key(**reordered)
    assert len(judge_cache_key(**PARTS)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"config": {**PARTS["config"], "pass_threshold": 0.8}},
        {"rubric": "r2"},
        {"task_prompt": "p2"},
        {"work": Work("o2")},
        {"model": "m2"},
        {"backend": "claude-cli"},
        {"prompt_version": "999"},
        {"work": Work("o", transcript=(ToolCall("Write", {"file_path": "a.md"}),))},
        {"work": Work("o", files=Snapshot((FileSnapshot("a.md", 1, "0" * 64),)))},
    ],
)
def test_key_depends_on_every_part(change: dict[str, Any]) -> None:
    assert judge_cache_key(**{**PARTS, **change}) != judge_cache_key(**PARTS)


def test_text_work_keys_as_text_output_did() -> None:
    """Judgements cached before judges took Work are still found for text work: the key of
    the config, rubric, prompt and output "o" below was recorded with the old signature."""
    old_key = f"{int(judge_cache_key(**PARTS, prompt_version='1'), 16):064x}"
    material = (
        '{"backend":"anthropic","config":{"pass_threshold":0.7,"rubric":"r",'
        '"type":"llm-rubric"},"model":"m","output_sha256":"'
        + hashlib.sha256(b"o").hexdigest()
        + '","prompt_version":"1","rubric":"r",'
        '"task_prompt":"p"}'
    )
    assert old_key == hashlib.sha256(material.encode()).hexdigest()


def test_round_trip_across_instances(tmp_path: Path) -> None:
    value = JudgeResult(True, 0.9, "good", data={"judge_model": "m"}).to_dict()
    key = judge_cache_key(**PARTS)
    with JudgeCache(tmp_path / "c") as cache:
        assert cache.get(key) is None
        assert cache.put(key, value)
    with JudgeCache(tmp_path / "c") as cache:
        assert cache.get(key) == value
        assert cache.stats() == {"hits": 1, "misses": 0, "writes": 0}


def test_errors_are_never_stored(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c") as cache:
        assert not cache.put("k", JudgeResult.failure("judge down").to_dict())
        assert not cache.put("k", {"passed": "yes", "score": 1})
        assert cache.get("k") is None and cache.writes == 0


def _rows(directory: Path, sql: str, *args: Any) -> None:
    with sqlite3.connect(directory / "cache.db") as db:
        db.execute(sql, args)


@pytest.mark.parametrize(
    ("sql", "warning"),
    [
        # a pickled value: refused, never unpickled
        ("UPDATE Cache SET mode = 4", "unreadable entry {k}: refusing a cache value stored in"),
        ("UPDATE Cache SET value = '{not json'", "unreadable entry {k}: Expecting property"),
        ("UPDATE Cache SET value = '[1, 2]'", "malformed entry {k}"),  # JSON, not a judgement
    ],
)
def test_corrupt_or_unsafe_entries_are_misses_with_a_warning(
    tmp_path: Path, sql: str, warning: str, caplog: pytest.LogCaptureFixture
) -> None:
    key = judge_cache_key(**PARTS)
    with JudgeCache(tmp_path / "c") as cache:
        cache.put(key, JudgeResult(True, 1.0, "ok").to_dict())
    _rows(tmp_path / "c", sql)
    with caplog.at_level(logging.WARNING), JudgeCache(tmp_path / "c") as cache:
        assert cache.get(key) is None
        assert cache.misses == 1
    assert f"judge cache: ignoring {warning.format(k=key[:12])}" in caplog.text


def test_a_pickled_key_is_a_silent_miss_and_never_unpickled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A key stored in pickle form (raw = 0) matches no string lookup: a plain miss, nothing to
    warn about, and listing the keys names it without unpickling it."""
    from skill_eval.core.jsondisk import REFUSED_KEY

    key = judge_cache_key(**PARTS)
    with JudgeCache(tmp_path / "c") as cache:
        cache.put(key, JudgeResult(True, 1.0, "ok").to_dict())
    _rows(tmp_path / "c", "UPDATE Cache SET raw = 0")
    with caplog.at_level(logging.WARNING), JudgeCache(tmp_path / "c") as cache:
        assert cache.get(key) is None
        assert cache.misses == 1
        assert list(cache._cache) == [REFUSED_KEY]
    assert "judge cache" not in caplog.text
