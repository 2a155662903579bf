"""Big outputs end to end (issue 16): a run with two 50 MB outputs keeps its artifact and
journal small, stores each output once under <run>/blobs, and `rejudge` judges the whole
outputs again to the same judgements; outputs over --max-output-bytes are cut and marked;
the baseline cache, resume and older artifacts work across the change.
(Wall time is measured by scripts/bench_outputs.py, not here.)"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.engine import artifact
from skill_eval.report.task_details import from_artifact
from tests.helpers import (
    REPO,
    contains_task,
    journal_records,
    read_json,
    run_cli,
    write_outputs,
    write_signed_journal,
    write_skill,
    write_suite,
)

MB = 1024 * 1024
LINE = "All work and no play makes a POWERFUL skill.\n"


def big(prefix: str, size: int) -> str:
    """About `size` bytes that start with `prefix` and end with "THE END"."""
    return prefix + LINE * (size // len(LINE)) + "THE END"


def run(
    tmp_path: Path,
    outputs: dict[str, Any],
    *extra: str,
    tasks: list[Any] | None = None,
    state: str = "state",
) -> dict[str, Any]:
    suite = write_suite(tmp_path / "suite", tasks or [contains_task("t", "powerful", "the end")])
    skill = write_skill(tmp_path / "skill")
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs), encoding="utf-8")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / state),
        "--mock",
        "--mock-outputs",
        str(path),
        "-q",
        "--policy",
        "delta",
        *extra,
    )
    assert code in (0, 1, 4), err
    return {**read_json(out.strip()), "_path": out.strip()}


def attempts(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        a
        for arm in ("candidate_results", "baseline_results")
        for r in data[arm]
        for a in r["attempts"]
    ]


def judgements(data: dict[str, Any]) -> list[Any]:
    return [(a["status"], a["judge"]) for a in attempts(data)]


@pytest.mark.slow
def test_two_50_mb_outputs_small_artifact_and_journal_same_judgements_on_rejudge(
    tmp_path: Path,
) -> None:
    cand, base = big("candidate ", 50 * MB), big("baseline ", 50 * MB)
    # above the default cut (10 MB), so the whole 50 MB are judged and stored
    data = run(
        tmp_path,
        {"candidate": {"t": cand}, "baseline": {"t": base}},
        "--max-output-bytes",
        str(60 * MB),
    )
    run_dir = Path(data["manifest"]["run_dir"])
    assert Path(data["_path"]).stat().st_size < MB
    assert (run_dir / "attempts.jsonl").stat().st_size < MB
    assert [a["status"] for a in attempts(data)] == ["passed", "passed"]  # "the end" is seen
    for got, text in zip(attempts(data), (cand, base), strict=True):
        digest = hashlib.sha256(text.encode()).hexdigest()
        assert got["output_sha256"] == digest and got["output_size"] == len(text.encode())
        assert got["output_blob"] == f"blobs/{digest}"
        assert (run_dir / got["output_blob"]).read_bytes() == text.encode()
        assert got["output"].startswith(text[:100]) and got["output"].endswith("THE END")
        assert len(got["output"]) < 4400 and "characters not shown" in got["output"]
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code == 0, err
    again = read_json(out.strip())
    artifact.validate(again)
    assert judgements(again) == judgements(data)
    assert Path(out.strip()).stat().st_size < MB
    # show and the reports read the whole from the blob when asked
    [task] = from_artifact(again)
    assert task.attempts["candidate"][0].full_output() == cand
    code, out, err = run_cli("show", data["_path"], "--task", "t", "--plain", "--full")
    assert code == 0 and cand in out
    code, out, err = run_cli("show", str(run_dir), "--task", "t", "--plain")
    assert code == 0 and cand not in out and "--full shows the whole" in out


def test_identical_outputs_are_stored_once(tmp_path: Path) -> None:
    text = big("same ", 100_000)
    data = run(tmp_path, {"t": text})  # both arms give the same output
    run_dir = Path(data["manifest"]["run_dir"])
    assert len(list((run_dir / "blobs").iterdir())) == 1
    assert {a["output_blob"] for a in attempts(data)} == {
        f"blobs/{hashlib.sha256(text.encode()).hexdigest()}"
    }


def test_reports_show_the_preview_and_name_the_blob(tmp_path: Path) -> None:
    text = big("report ", 300_000)
    data = run(tmp_path, {"t": text})
    digest = hashlib.sha256(text.encode()).hexdigest()
    html = tmp_path / "report.html"
    code, _out, err = run_cli("report", data["_path"], "--format", "html", "-o", str(html))
    assert code == 0, err
    page = html.read_text()
    assert len(page) < 100_000 and f"blobs/{digest}" in page and "preview of" in page
    blob_uri = (Path(data["manifest"]["run_dir"]) / "blobs" / digest).as_uri()
    assert f'href="{blob_uri}"' in page
    code, out, err = run_cli("report", data["_path"], "--format", "junit")
    assert code == 0 and len(out) < 100_000


def test_rejudge_with_a_blob_gone_says_so_and_judges_no_preview(tmp_path: Path) -> None:
    data = run(tmp_path, {"t": big("gone ", 50_000)})
    run_dir = Path(data["manifest"]["run_dir"])
    for blob in (run_dir / "blobs").iterdir():
        blob.unlink()
    code, out, err = run_cli("rejudge", str(run_dir))
    again = read_json(out.strip())
    assert [a["status"] for a in attempts(again)] == ["error", "error"]
    assert "the recorded output is missing" in again["errors"][0]["error"]


def test_short_outputs_stay_inline_with_no_blob(tmp_path: Path) -> None:
    data = run(tmp_path, {"t": "powerful, the end"})
    assert all(
        a["output"] == "powerful, the end" and "output_blob" not in a for a in attempts(data)
    )
    assert not (Path(data["manifest"]["run_dir"]) / "blobs").exists()


def test_max_preview_chars_sets_the_preview(tmp_path: Path) -> None:
    data = run(tmp_path, {"t": big("head ", 20_000)}, "--max-preview-chars", "200")
    [first, _] = attempts(data)
    assert first["output"].startswith("head ") and len(first["output"]) < 500
    code, _out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        "x",
        "--skill-path",
        "y",
        "--state-root",
        str(tmp_path),
        "--mock",
        "--max-preview-chars",
        "5",
    )
    assert code == 2 and "--max-preview-chars must be at least 100" in err


def test_an_output_over_max_output_bytes_is_cut_marked_and_judged_not_an_error(
    tmp_path: Path,
) -> None:
    text = big("start ", 300_000)
    tasks = [contains_task("t", "start"), contains_task("u", "the end")]
    data = run(tmp_path, {"t": text, "u": text}, "--max-output-bytes", "100000", tasks=tasks)
    by_task = {r["task_id"]: r["attempts"][0] for r in data["candidate_results"]}
    cut = by_task["t"]
    assert cut["status"] == "passed" and cut["output_cut_from"] == len(text.encode())
    assert 100_000 < cut["output_size"] < 100_200
    whole = (Path(data["manifest"]["run_dir"]) / cut["output_blob"]).read_text()
    assert whole.endswith(
        "[skill-eval: output cut at --max-output-bytes 100000; the "
        f"executor returned {len(text.encode())} bytes]"
    )
    # what was cut away is not judged: the end is gone, so this task fails (not an error)
    assert by_task["u"]["status"] == "failed" and by_task["u"]["error"] is None


def test_the_baseline_cache_stores_outputs_by_hash_and_a_hit_brings_them_into_the_run(
    tmp_path: Path,
) -> None:
    text = big("base ", 2 * MB)
    cache = tmp_path / "cache"
    outputs = {"candidate": {"t": "powerful the end"}, "baseline": {"t": text}}
    first = run(tmp_path, outputs, "--baseline-cache-dir", str(cache))
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert (cache / "blobs" / digest).read_text() == text
    assert (
        sum(f.stat().st_size for f in cache.rglob("*") if f.is_file() and "blobs" not in f.parts)
        < 2 * MB - 100_000
    )  # the entry holds a preview
    code, out, err = run_cli("cache", "info", "--baseline-cache-dir", str(cache))
    assert code == 0, err
    assert f"({len(text.encode())} in stored outputs)" in out  # counted in the cache's size
    for _ in range(5):  # four runs of 2 fill the pool, the fifth draws (a smaller cache is not)
        second = run(tmp_path, outputs, "--baseline-cache-dir", str(cache), "--samples", "2")
    assert second["baseline_cache"]["hit"] and second["baseline_cache"]["attempts_from_cache"]
    run_dir = Path(second["manifest"]["run_dir"])
    assert run_dir != Path(first["manifest"]["run_dir"])
    assert (run_dir / "blobs" / digest).read_text() == text  # the run holds what it names
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code in (0, 1, 4), err
    assert judgements(read_json(out.strip())) == judgements(second)


def test_an_old_baseline_cache_entry_with_inline_outputs_still_hits(tmp_path: Path) -> None:
    from skill_eval.engine.cache import BaselineCache

    cache = BaselineCache(tmp_path / "cache")
    old = {
        "arm": "baseline",
        "task_id": "t",
        "index": 0,
        "status": "passed",
        "output": "x" * 9000,
        "judge": {"passed": True, "score": 1.0, "details": "", "error": None},
        "error": None,
        "duration_ms": 1,
    }
    cache._cache.set("key", {"created_at": cache.clock(), "attempts": [old]})
    hit = cache.get("key")
    cache.close()
    assert hit is not None and hit.attempts[0].load_work().text == "x" * 9000


def test_resume_of_a_journal_written_before_blobs(tmp_path: Path) -> None:
    outputs = {
        "candidate": {"t": big("c ", 20_000), "u": "powerful the end"},
        "baseline": {"t": "powerful the end", "u": "powerful the end"},
    }
    tasks = [contains_task("t", "powerful"), contains_task("u", "powerful")]
    data = run(tmp_path, outputs, tasks=tasks)
    run_dir = Path(data["manifest"]["run_dir"])
    journal = run_dir / "attempts.jsonl"
    # as an older version wrote it: outputs inline, no sizes, hashes or blobs; one attempt
    # of task u lost, so the resume has something to run (signed: the harness wrote it)
    records = journal_records(journal)
    old = []
    for record in records:
        if record.get("output_blob"):
            record["output"] = (run_dir / record["output_blob"]).read_text()
        old.append({k: v for k, v in record.items() if not k.startswith("output_")})
    old = [r for r in old if not (r["task_id"] == "u" and r["arm"] == "candidate")]
    write_signed_journal(journal, old, tmp_path / "state")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(tmp_path / "suite" / "task_suite.yaml"),
        "--skill-path",
        str(tmp_path / "skill"),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(tmp_path / "outputs.json"),
        "-q",
        "--policy",
        "delta",
        "--resume",
        str(run_dir),
    )
    assert code in (0, 1, 4), err
    resumed = read_json(out.strip())
    assert resumed["manifest"]["run_dir"] == str(run_dir)
    assert judgements(resumed) == judgements(data)
    kept = resumed["candidate_results"][0]["attempts"][0]
    assert kept["output"] == outputs["candidate"]["t"]  # the old record, read as it was
    code, out, err = run_cli("rejudge", str(run_dir))
    assert code in (0, 1, 4), err
    assert judgements(read_json(out.strip())) == judgements(data)


def test_an_artifact_written_before_blobs_still_reads(tmp_path: Path) -> None:
    golden = REPO / "tests" / "data" / "golden" / "demo-artifact.json"
    data = artifact.read(golden)  # the new schema accepts it
    assert not any("output_sha256" in a for a in attempts(data))
    tasks = from_artifact(data, with_prompts=False)
    first = tasks[0].attempts["candidate"][0]
    assert first.output_blob is None and first.full_output() == first.output != ""
    code, out, err = run_cli("show", str(golden), "--task", tasks[0].task_id, "--plain", "--full")
    assert code == 0 and first.output.splitlines()[0] in out


def test_write_outputs_helper_still_writes_yaml(tmp_path: Path) -> None:
    # scripted outputs in YAML keep working beside the JSON fast path
    path = write_outputs(tmp_path / "o.yaml", {"t": "powerful the end"})
    suite = write_suite(tmp_path / "suite", [contains_task("t", "powerful")])
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(path),
        "-q",
        "--policy",
        "delta",
    )
    assert code == 0, err
