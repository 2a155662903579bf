"""Issue 17: a corrupt judge-cache database is a warning and a miss, like a corrupt baseline
cache, never the end of the run."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from skill_eval.judges.judge_cache import JudgeCache
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli
from tests.test_run_anthropic import RULES, setup


def corrupt(directory: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "cache.db").write_bytes(b"not a database" * 100)
    return directory


def test_a_corrupt_judge_cache_reads_as_misses_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        cache = JudgeCache(corrupt(tmp_path / "jc"))
    assert "judge cache" in caplog.text and "not a database" in caplog.text
    assert cache.get("k") is None
    assert cache.put("k", {"passed": True, "score": 1.0, "details": ""}) is False
    assert cache.stats()["misses"] == 1
    cache.close()


def test_a_run_goes_on_past_a_corrupt_judge_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corrupt(tmp_path / "state" / "judge-cache")
    with FakeAnthropic(rules=RULES, default="nothing useful") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(*setup(tmp_path))
    assert code == 0, err
    assert read_json(out.strip())["evaluation"]["verdict"] == "pass"
