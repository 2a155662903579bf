"""`skill-eval rejudge`: new judgements of a finished run, no re-execution."""

from __future__ import annotations

from pathlib import Path

from skill_eval import artifact
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite


def test_rejudge_uses_the_suites_current_judges(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite = write_suite(suite_dir, [contains_task("t1", "alpha"), contains_task("t2", "gamma")])
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(tmp_path / "o.yaml", {"candidate": {"t1": "alpha", "t2": "beta"}})
    code, out, err = run_cli("run", "--standalone", "--task-suite", str(suite), "--skill-path",
                             str(skill), "--state-root", str(tmp_path / "state"), "--mock",
                             "--mock-outputs", str(outputs), "-q", "--policy", "delta")
    first = read_json(out.strip())
    assert first["evaluation"]["execution_pass_rate"] == 0.5
    run_dir = Path(first["manifest"]["run_dir"])
    journal_before = (run_dir / "attempts.jsonl").read_text()

    # the suite author fixes the judge of t2; the outputs were fine all along
    write_suite(suite_dir, [contains_task("t1", "alpha"), contains_task("t2", "beta")])
    code, out2, err = run_cli("rejudge", str(run_dir))
    assert code == 0, err
    second = read_json(out2.strip())
    artifact.validate(second)
    assert out2.strip() != out.strip() and "rejudged" in out2
    assert second["evaluation"]["execution_pass_rate"] == 1.0
    assert second["rejudged"]["run_dir"] == str(run_dir)
    assert second["run_id"] == first["run_id"]
    # nothing executed again, the original journal untouched, the new one beside it
    assert (run_dir / "attempts.jsonl").read_text() == journal_before
    assert len(list(run_dir.glob("rejudged-*.jsonl"))) == 1
    outputs_before = [a["output"] for r in first["candidate_results"] for a in r["attempts"]]
    outputs_after = [a["output"] for r in second["candidate_results"] for a in r["attempts"]]
    assert outputs_before == outputs_after


def test_rejudge_of_a_non_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    code, out, err = run_cli("rejudge", str(tmp_path))
    assert code == 2 and out == "" and "not a run directory" in err
