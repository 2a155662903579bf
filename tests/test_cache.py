"""The baseline cache: reuse, every key ingredient, TTL, errors never cached, pickle never
executed, concurrent writers."""

from __future__ import annotations

import multiprocessing
import pickle
import sqlite3
from pathlib import Path

from skill_eval.cache import BaselineCache, baseline_key, parse_duration
from skill_eval.model import Attempt, JudgeResult
from skill_eval.suite import load_suite
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite


def attempt(task_id: str, index: int = 0, status: str = "passed") -> Attempt:
    judge = JudgeResult(status == "passed", 1.0 if status == "passed" else 0.0)
    return Attempt("baseline", task_id, index, status, "out", None if status == "error"
                   else judge, "boom" if status == "error" else None, 5)  # type: ignore[arg-type]


def run(tmp_path: Path, *extra: str, suite: Path | None = None) -> dict:
    suite = suite or write_suite(tmp_path / "suite", [contains_task("t1", "alpha"),
                                                      contains_task("t2", "beta")])
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(tmp_path / "out.yaml", {"t1": "alpha", "t2": "beta"})
    code, out, err = run_cli("run", "--standalone", "--task-suite", str(suite), "--skill-path",
                             str(skill), "--state-root", str(tmp_path / "state"), "--mock",
                             "--mock-outputs", str(outputs), "--baseline-cache-dir",
                             str(tmp_path / "cache"), "-q", *extra)
    assert code == 0, err
    return read_json(out.strip())


def test_second_run_serves_the_baseline_from_the_cache(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first["baseline_cache"]["hit"] is False
    second = run(tmp_path)
    cache = second["baseline_cache"]
    assert cache["hit"] is True and cache["attempts_from_cache"] == 2
    assert cache["key"] == first["baseline_cache"]["key"] and cache["age_seconds"] >= 0
    assert second["evaluation"] == first["evaluation"]
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700


def test_changed_ingredients_miss(tmp_path: Path) -> None:
    base = run(tmp_path)["baseline_cache"]["key"]
    assert run(tmp_path, "--pass-k", "2")["baseline_cache"]["hit"] is False
    assert run(tmp_path, "--samples", "3")["baseline_cache"]["hit"] is False
    assert run(tmp_path, "--model", "other-model")["baseline_cache"]["key"] != base
    assert run(tmp_path, "--skill-mode", "prepend")["baseline_cache"]["key"] != base
    # concurrency, retries and paths are not ingredients
    assert run(tmp_path, "--concurrency", "1", "--max-retries", "0")["baseline_cache"]["hit"]


def test_fixture_bytes_are_an_ingredient(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True)
    fixture = suite_dir / "fixtures" / "test_out.py"
    fixture.write_text("def test_x():\n    assert True\n")
    suite_path = write_suite(suite_dir, [contains_task("t1", "alpha"), {
        "id": "t2", "prompt": "p", "judge": {"type": "pytest", "test_file": "fixtures/test_out.py"}}])
    suite = load_suite(suite_path)
    mock = {"kind": "mock"}
    real = {"kind": "anthropic", "model": "m"}
    key = dict(suite=suite, skill_sha256=None, skill_mode="system", pass_k=1, samples=1,
               judge_backend="mock", judge_model=None, prompt_template_version="1")
    k1 = baseline_key(executor=mock, **key)  # type: ignore[arg-type]
    assert baseline_key(executor=real, **key) != k1  # type: ignore[arg-type]
    fixture.write_text("def test_x():\n    assert 1\n")
    assert baseline_key(executor=mock, **key) != k1  # type: ignore[arg-type]


def test_errors_are_never_cached_and_ttl_expires(tmp_path: Path) -> None:
    now = [1000.0]
    cache = BaselineCache(tmp_path / "c", ttl_seconds=60, clock=lambda: now[0])
    assert cache.put("k", [attempt("t1", status="error")]) == 0
    assert cache.get("k") is None
    assert cache.put("k", [attempt("t1"), attempt("t2", status="error")]) == 1
    hit = cache.get("k")
    assert hit is not None and [a.task_id for a in hit.attempts] == ["t1"]
    now[0] += 59
    assert cache.get("k") is not None
    now[0] += 1
    assert cache.get("k") is None


def test_a_planted_pickle_is_never_executed(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path / "c")
    cache.put("k", [attempt("t1")])
    cache.close()
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    db = sqlite3.connect(tmp_path / "c" / "cache.db")
    db.execute("UPDATE Cache SET mode = 4, value = ? WHERE key = 'k'",
               (pickle.dumps(Payload()),))
    db.execute("INSERT INTO Cache (key, raw, store_time, expire_time, access_time, "
               "access_count, tag, size, mode, filename, value) VALUES "
               "(?, 0, 0, NULL, 0, 0, NULL, 0, 1, NULL, '{}')", (pickle.dumps(Payload()),))
    db.commit()
    db.close()
    warnings: list[str] = []
    cache = BaselineCache(tmp_path / "c", warn=warnings.append)
    assert cache.get("k") is None
    cache.info()
    assert not marker.exists()
    assert warnings and "unreadable" in warnings[0]


def test_corrupt_database_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "cache.db").write_bytes(b"not a database" * 100)
    data = run(tmp_path)
    assert "baseline_cache" not in data
    assert data["evaluation"]["verdict"] == "pass"


def _writer(directory: str, worker: int) -> None:
    cache = BaselineCache(Path(directory))
    for i in range(40):
        cache.put(f"k{worker}-{i}", [attempt(f"t{i}")])
    cache.close()


def test_two_processes_writing_one_directory_leave_it_valid(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path / "c"), w)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = BaselineCache(tmp_path / "c")
    assert len(cache.info()["entries"]) == 80
    assert all(cache.get(f"k{w}-{i}") for w in range(2) for i in range(40))


def test_cache_cli_info_and_clear(tmp_path: Path) -> None:
    run(tmp_path)
    code, out, err = run_cli("cache", "info", "--baseline-cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    assert "1 entr" in out
    code, out, _ = run_cli("cache", "clear", "--baseline-cache-dir", str(tmp_path / "cache"))
    assert code == 0 and "removed 1" in out
    assert run(tmp_path)["baseline_cache"]["hit"] is False


def test_parse_duration() -> None:
    assert parse_duration("7d") == 7 * 86400
    assert parse_duration("12h") == 43200
    assert parse_duration("90") == 90
