"""JudgeCache: keys, JSON-only storage, errors never cached, corrupt rows read as misses."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skill_eval.judges.judge_cache import JudgeCache, judge_cache_key
from skill_eval.model import JudgeResult

PARTS: dict[str, Any] = {
    "config": {"type": "llm-rubric", "rubric": "r", "pass_threshold": 0.7},
    "rubric": "r", "task_prompt": "p", "output": "o", "model": "m", "backend": "anthropic",
}


def test_key_is_stable_and_canonical() -> None:
    reordered = {**PARTS, "config": {"pass_threshold": 0.7, "rubric": "r",
                                     "type": "llm-rubric"}}
    assert judge_cache_key(**PARTS) == judge_cache_key(**reordered)
    assert len(judge_cache_key(**PARTS)) == 64


@pytest.mark.parametrize("change", [
    {"config": {**PARTS["config"], "pass_threshold": 0.8}},
    {"rubric": "r2"}, {"task_prompt": "p2"}, {"output": "o2"}, {"model": "m2"},
    {"backend": "claude-cli"}, {"prompt_version": "999"},
])
def test_key_depends_on_every_part(change: dict[str, Any]) -> None:
    assert judge_cache_key(**{**PARTS, **change}) != judge_cache_key(**PARTS)


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


@pytest.mark.parametrize("sql", [
    "UPDATE Cache SET mode = 4",             # a pickled value: never unpickled
    "UPDATE Cache SET value = '{not json'",  # garbage JSON
    "UPDATE Cache SET value = '[1, 2]'",     # JSON, but not a judgement
    "UPDATE Cache SET raw = 0",              # a pickled key
])
def test_corrupt_or_unsafe_entries_are_misses_with_a_warning(
        tmp_path: Path, sql: str, caplog: pytest.LogCaptureFixture) -> None:
    key = judge_cache_key(**PARTS)
    with JudgeCache(tmp_path / "c") as cache:
        cache.put(key, JudgeResult(True, 1.0, "ok").to_dict())
    _rows(tmp_path / "c", sql)
    with caplog.at_level(logging.WARNING), JudgeCache(tmp_path / "c") as cache:
        assert cache.get(key) is None
        assert cache.misses == 1
    assert "judge cache: ignoring" in caplog.text or sql.endswith("raw = 0")
