"""The baseline cache: reuse, every key ingredient, TTL, errors never cached, pickle never
executed, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sqlite3
from pathlib import Path

import pytest

from skill_eval.core.model import Attempt, JudgeResult
from skill_eval.engine.cache import BaselineCache, baseline_key, parse_duration
from skill_eval.engine.fingerprint import ArmSkill, Inputs
from skill_eval.executors.base import create_executor
from skill_eval.inputs.suite import load_suite
from skill_eval.plan.run_plan import Decision
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite


def attempt(task_id: str, index: int = 0, status: str = "passed") -> Attempt:
    judge = JudgeResult(status == "passed", 1.0 if status == "passed" else 0.0)
    return Attempt(
        "baseline",
        task_id,
        index,
        status,
        "out",
        None if status == "error" else judge,
        "boom" if status == "error" else None,
        5,
    )  # type: ignore[arg-type]


def run(tmp_path: Path, *extra: str, suite: Path | None = None) -> dict:
    suite = suite or write_suite(
        tmp_path / "suite", [contains_task("t1", "alpha"), contains_task("t2", "beta")]
    )
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(tmp_path / "out.yaml", {"t1": "alpha", "t2": "beta"})
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--baseline-cache-dir",
        str(tmp_path / "cache"),
        "-q",
        "--policy",
        "delta",
        *extra,
    )
    assert code == 0, err
    return read_json(out.strip())


def test_a_second_run_finds_the_cached_baseline(tmp_path: Path) -> None:
    """It is a hit; one earlier run is short of the full pool at which drawing saves
    attempts (stats/accumulate.py), so the run makes its own baseline and draws nothing."""
    first = run(tmp_path)
    assert first["baseline_cache"]["hit"] is False
    second = run(tmp_path)
    cache = second["baseline_cache"]
    assert cache["hit"] is True and cache["attempts_from_cache"] == 0
    assert [r["run_id"] for r in cache["runs"]] == [Path(first["manifest"]["run_dir"]).name]
    assert [r["stats"]["n"] for r in second["baseline_results"]] == [1, 1]  # its own
    assert cache["key"] == first["baseline_cache"]["key"] and cache["age_seconds"] >= 0
    assert second["evaluation"] == first["evaluation"]
    umask = os.umask(0o022)
    os.umask(umask)
    # Its mode follows the umask, as every file skill-eval writes (issue 26): a CI cache is
    # restored by other jobs, and judged outputs are no secret.
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o777 & ~umask


def test_changed_ingredients_miss(tmp_path: Path) -> None:
    base = run(tmp_path)["baseline_cache"]["key"]
    assert run(tmp_path, "--pass-k", "2")["baseline_cache"]["hit"] is False
    assert run(tmp_path, "--samples", "3")["baseline_cache"]["hit"] is False
    assert run(tmp_path, "--model", "other-model")["baseline_cache"]["key"] != base
    assert run(tmp_path, "--skill-mode", "prepend")["baseline_cache"]["key"] != base
    # concurrency, retries and paths are not ingredients
    assert run(tmp_path, "--concurrency", "1", "--max-retries", "0")["baseline_cache"]["hit"]


def ingredients(**changes) -> Inputs:
    """The baseline's Inputs; `skill_sha256`, `skill_directory`, `pass_k` and `samples` set
    its skill and decision."""
    base = dict(
        skill_sha256=None,
        skill_directory=None,
        executor={"kind": "mock"},
        skill_mode="system",
        pass_k=1,
        samples=1,
        judge_backend="mock",
        judge_model="judge-a",
    )
    values = {**base, **changes}
    skill = ArmSkill(values.pop("skill_sha256"), values.pop("skill_directory"))
    decision = Decision(pass_k=values.pop("pass_k"), samples=values.pop("samples"))
    return Inputs(skills={"baseline": skill}, decision=decision, **values)


def test_every_fixture_file_is_an_ingredient(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True)
    fixture = suite_dir / "fixtures" / "test_out.py"
    fixture.write_text("def test_x():\n    assert True\n")
    data = suite_dir / "fixtures" / "expected.txt"  # read by the test, named by no judge
    data.write_text("alpha")
    suite = load_suite(
        write_suite(
            suite_dir,
            [
                contains_task("t1", "alpha"),
                {
                    "id": "t2",
                    "prompt": "p",
                    "judge": {"type": "pytest", "test_file": "fixtures/test_out.py"},
                },
            ],
        )
    )
    k1 = baseline_key(suite, ingredients())
    assert baseline_key(suite, ingredients()) == k1
    fixture.write_text("def test_x():\n    assert 1\n")
    k2 = baseline_key(suite, ingredients())
    assert k2 != k1
    data.write_text("beta")
    assert baseline_key(suite, ingredients()) != k2


@pytest.mark.parametrize(
    "change",
    [
        {"executor": {"kind": "anthropic", "model": "m"}},  # mock vs real never share
        {"executor": {"kind": "mock", "model": "other"}},
        {"judge_model": "judge-b"},
        {"judge_backend": "anthropic"},
        {"skill_sha256": "0" * 64},
        {"pass_k": 2},
        {"samples": 3},
        {"skill_mode": "prepend"},
    ],
)
def test_each_ingredient_changes_the_key(tmp_path: Path, change) -> None:
    suite = load_suite(write_suite(tmp_path, [contains_task("t1", "alpha")]))
    assert baseline_key(suite, ingredients(**change)) != baseline_key(suite, ingredients())


def test_what_does_not_shape_the_baseline_is_not_in_the_key(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [contains_task("t1", "alpha")]))

    def mock(candidate: str, baseline: str) -> dict:  # the baseline arm's identity (its hook)
        outputs = {"candidate": {"t1": candidate}, "baseline": {"t1": baseline}}
        return create_executor("mock", {"mock_outputs": outputs}).describe_arm("baseline")

    key = baseline_key(suite, ingredients(executor=mock("x", "y")))
    assert baseline_key(suite, ingredients(executor=mock("z", "y"))) == key
    assert baseline_key(suite, ingredients(executor=mock("x", "w"))) != key
    priced = {"kind": "anthropic", "prices": {"as_of": "2026-01-01"}}
    repriced = {"kind": "anthropic", "prices": {"as_of": "2026-11-01"}}
    assert baseline_key(suite, ingredients(executor=priced)) == baseline_key(
        suite, ingredients(executor=repriced)
    )


def test_installed_skill_files_count_only_when_installed(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s", [contains_task("t1", "alpha")]))
    skill = write_skill(tmp_path / "skill")
    (skill / "helper.md").write_text("v1")
    keys = {
        mode: baseline_key(suite, ingredients(skill_directory=skill, skill_mode=mode))
        for mode in ("installed", "system")
    }
    (skill / "helper.md").write_text("v2")
    assert (
        baseline_key(suite, ingredients(skill_directory=skill, skill_mode="installed"))
        != keys["installed"]
    )
    assert (
        baseline_key(suite, ingredients(skill_directory=skill, skill_mode="system"))
        == keys["system"]
    )


def test_judge_model_from_the_environment_changes_the_key(tmp_path: Path, monkeypatch) -> None:
    first = run(tmp_path)["baseline_cache"]["key"]
    monkeypatch.setenv("SKILL_EVAL_JUDGE_MODEL", "judge-strict")
    assert run(tmp_path)["baseline_cache"]["key"] != first


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
    db.execute("UPDATE Cache SET mode = 4, value = ? WHERE key = 'k'", (pickle.dumps(Payload()),))
    db.execute(
        "INSERT INTO Cache (key, raw, store_time, expire_time, access_time, "
        "access_count, tag, size, mode, filename, value) VALUES "
        "(?, 0, 0, NULL, 0, 0, NULL, 0, 1, NULL, '{}')",
        (pickle.dumps(Payload()),),
    )
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


def test_cache_cli_on_missing_and_corrupt_directories(tmp_path: Path) -> None:
    code, _, err = run_cli("cache", "info", "--baseline-cache-dir", str(tmp_path / "nope"))
    assert code == 2 and "no baseline cache at" in err
    assert not (tmp_path / "nope").exists()
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "cache.db").write_bytes(b"garbage" * 100)
    (corrupt / "keep.txt").write_text("not ours")
    code, _, err = run_cli("cache", "info", "--baseline-cache-dir", str(corrupt))
    assert code == 2 and "cache clear" in err
    code, out, _ = run_cli("cache", "clear", "--baseline-cache-dir", str(corrupt))
    assert code == 0 and "unreadable" in out
    assert not (corrupt / "cache.db").exists() and (corrupt / "keep.txt").exists()
