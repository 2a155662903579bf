"""Issue 28: truth never comes from files judged code could write. Code the candidate controls
(an agent run without a jail, output code a judge runs) can reach a run's journal; it cannot
reach the journal key. So the baseline cache is filled from the run's results in memory, and
`--resume`, `merge` and `rejudge` refuse journal records the harness did not write there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import ExecutionRequest, ExecutionResult
from skill_eval.engine.cache import BaselineCache
from skill_eval.engine.conductor import run_evaluation
from skill_eval.executors.base import REGISTRY, ExecutorSpec, register_executor
from skill_eval.executors.mock import SPEC as MOCK
from skill_eval.executors.mock import MockConfig, MockExecutor
from skill_eval.plan.run_plan import RunPlan
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite

TASKS = [f"t{i}" for i in range(6)]


def suite_and_skill(tmp_path: Path) -> tuple[Path, Path]:
    suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in TASKS])
    return suite, write_skill(tmp_path / "skill")


def run_args(tmp_path: Path, outputs: dict[str, Any], *extra: str) -> list[str]:
    suite, skill = suite_and_skill(tmp_path)
    return [
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--mock",
        "--mock-outputs",
        str(write_outputs(tmp_path / "outputs.yaml", outputs)),
        "-q",
        *extra,
    ]


def forged_passes(journal: Path, arm: str) -> list[str]:
    """What an attacker who can write the journal appends: each of `arm`'s records again,
    now passed (its own `mac` copied along, as it has no key to make one)."""
    out = []
    for record in map(json.loads, journal.read_text().splitlines()):
        if record.get("arm") == arm:
            record["status"] = "passed"
            record["judge"] = {**record["judge"], "passed": True, "score": 1.0}
            out.append(json.dumps(record))
    assert out
    return out


def append_lines(journal: Path, lines: list[str]) -> int:
    """Append `lines`; the line number of the first."""
    first = len(journal.read_text().splitlines()) + 1
    with journal.open("a", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return first


def one_error_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "" and "Traceback" not in err, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    return lines[0]


# -- the baseline cache ----------------------------------------------------------------------


class HostileExecutor(MockExecutor):
    """The mock, plus what an agent with the harness's view of the machine can do: while it
    runs the baseline's last task, it appends forged *failed* records of the baseline's other
    tasks to the run's journal, so a cache filled from that file keeps a baseline that never
    ran that way."""

    state_root: Path = Path()

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if request.arm == "baseline" and request.task.id == TASKS[-1]:
            [journal] = (self.state_root / "runs").glob("*/attempts.jsonl")
            forged = []
            for record in map(json.loads, journal.read_text().splitlines()):
                if record.get("arm") == "baseline":
                    record["status"] = "failed"
                    record["judge"] = {**record["judge"], "passed": False, "score": 0.0}
                    forged.append(json.dumps(record))
            append_lines(journal, forged)
        return super().run(request)


@pytest.fixture
def hostile(tmp_path: Path) -> Any:
    HostileExecutor.state_root = tmp_path / "state"
    register_executor(ExecutorSpec("hostile", MockConfig, MOCK.schema, HostileExecutor))
    yield
    REGISTRY.reset()


def test_forged_journal_records_never_reach_the_baseline_cache(tmp_path: Path, hostile) -> None:
    suite, skill = suite_and_skill(tmp_path)
    outputs = write_outputs(tmp_path / "outputs.yaml", {t: "DONE" for t in TASKS})
    opts = RunPlan.from_flags(
        task_suite=str(suite),
        state_root=str(tmp_path / "state"),
        standalone=True,
        skill_path=str(skill),
        executor="hostile",
        mock_outputs=str(outputs),
        baseline_cache_dir=str(tmp_path / "cache"),
        concurrency=1,  # the forgery lands after the records it copies
        progress=False,
    )
    first = run_evaluation(opts, log=lambda m: None)
    assert first.verdict == "fail"  # equal arms: no improvement
    assert first.artifact["baseline_cache"]["hit"] is False
    cache = BaselineCache(tmp_path / "cache")
    hit = cache.get(first.artifact["baseline_cache"]["key"])
    cache.close()
    # what the run made (every task passed), not the forged failures in its journal file
    assert hit is not None and [len(r.attempts) for r in hit.runs] == [len(TASKS)]
    assert [a.status for a in hit.runs[0].attempts] == ["passed"] * len(TASKS)


# -- --resume ----------------------------------------------------------------------------------


def finished_run(tmp_path: Path, outputs: dict[str, Any], state: str = "state") -> Path:
    code, out, err = run_cli(*run_args(tmp_path, outputs, "--state-root", str(tmp_path / state)))
    assert code in (0, 1), err
    return Path(read_json(out.strip())["manifest"]["run_dir"])


FAILING = {"candidate": {t: "no" for t in TASKS}, "baseline": {t: "no" for t in TASKS}}


def test_resume_refuses_a_forged_record_naming_its_file_and_line(tmp_path: Path) -> None:
    run_dir = finished_run(tmp_path, FAILING)
    journal = run_dir / "attempts.jsonl"
    line = append_lines(journal, forged_passes(journal, "candidate"))
    state = tmp_path / "state"
    error = one_error_line(
        *run_cli(*run_args(tmp_path, FAILING, "--state-root", str(state), "--resume"))
    )
    assert f"{journal}:{line}: this record fails its MAC" in error
    assert len(list((state / "evaluations").glob("*.json"))) == 1  # no artifact from it


def test_resume_refuses_a_record_copied_from_another_runs_journal(tmp_path: Path) -> None:
    """Both journals are signed with the state root's key: a genuine record of one run is
    still refused in the other (each MAC is bound to its journal and place)."""
    passing = {"candidate": {t: "DONE" for t in TASKS}, "baseline": {t: "no" for t in TASKS}}
    donor = finished_run(tmp_path, passing)
    victim = finished_run(tmp_path / "v", FAILING, state="../state")
    copied = [
        line
        for line in (donor / "attempts.jsonl").read_text().splitlines()
        if json.loads(line).get("arm") == "candidate"
    ]
    line = append_lines(victim / "attempts.jsonl", copied)
    error = one_error_line(
        *run_cli(
            *run_args(tmp_path / "v", FAILING, "--state-root", str(tmp_path / "state"), "--resume")
        )
    )
    assert f"{victim / 'attempts.jsonl'}:{line}: this record fails its MAC" in error


def test_a_journal_without_macs_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    run_dir = finished_run(tmp_path, FAILING)
    journal = run_dir / "attempts.jsonl"
    unsigned = [
        {k: v for k, v in r.items() if k != "mac"}
        for r in map(json.loads, journal.read_text().splitlines())
        if "record" not in r
    ]
    journal.write_text("".join(json.dumps(r) + "\n" for r in unsigned))
    error = one_error_line(
        *run_cli(*run_args(tmp_path, FAILING, "--state-root", str(tmp_path / "state"), "--resume"))
    )
    assert f"{journal}:1: no signed journal header" in error
    assert "from before journal MACs" in error


# -- merge -------------------------------------------------------------------------------------


def run_shards(
    tmp_path: Path, outputs: dict[str, Any], *extra: str, one_state: bool = False
) -> list[Path]:
    dirs = []
    for i in (1, 2):
        state = tmp_path / ("state" if one_state else f"machine-{i}")  # one machine or two
        code, out, err = run_cli(
            *run_args(tmp_path, outputs, "--state-root", str(state), "--shard", f"{i}/2", *extra)
        )
        assert code == 0, err
        dirs.append(Path(read_json(out.strip())["manifest"]["run_dir"]))
    return dirs


def shared_key(tmp_path: Path) -> Path:
    key = tmp_path / "ci-secret.key"
    key.write_text("0123456789abcdef" * 4 + "\n")
    return key


def test_merge_refuses_a_forged_record_in_a_shards_journal(tmp_path: Path) -> None:
    shards = run_shards(tmp_path, FAILING, one_state=True)
    journals = [shard / "attempts.jsonl" for shard in shards]
    lines = [append_lines(j, forged_passes(j, "candidate")) for j in journals]
    output = tmp_path / "merged.json"  # read as written, it would say 6/6 against 0/6: pass
    error = one_error_line(*run_cli("merge", *map(str, shards), "-o", str(output)))
    journal, line = journals[0], lines[0]
    assert f"{journal}:{line}: this record fails its MAC" in error
    assert not output.exists()


def test_shards_from_other_machines_merge_with_the_key_they_shared(tmp_path: Path) -> None:
    key = shared_key(tmp_path)
    shards = run_shards(tmp_path, FAILING, "--journal-key", str(key))
    downloaded = []  # as a CI merge job gets them: run directories without their state roots
    for i, shard in enumerate(shards, start=1):
        target = tmp_path / "download" / f"shard-{i}" / shard.name
        shutil.copytree(shard, target)
        downloaded.append(target)
    output = tmp_path / "merged.json"
    error = one_error_line(*run_cli("merge", *map(str, downloaded), "-o", str(output)))
    assert "no journal key at" in error and "--journal-key" in error
    code, out, err = run_cli(
        "merge", *map(str, downloaded), "-o", str(output), "--journal-key", str(key)
    )
    assert code == 1, err  # both arms fail every task: no improvement
    merged = read_json(output)
    assert merged["evaluation"]["verdict"] == "fail"
    assert len(merged["candidate_results"]) == len(TASKS)
    wrong = tmp_path / "other.key"
    wrong.write_text("f" * 64)
    error = one_error_line(
        *run_cli("merge", *map(str, downloaded), "-o", str(output), "--journal-key", str(wrong))
    )
    assert "signed with another journal key" in error
