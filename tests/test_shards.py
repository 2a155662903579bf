"""`--shard i/n` runs one deterministic slice of the (task, sample) pairs; `skill-eval merge`
joins every shard's journal into the artifact the unsharded run writes, and refuses anything
that is not every shard of one run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skill_eval.core.model import Task
from skill_eval.engine.runner import plan_jobs
from skill_eval.engine.shards import Shard
from skill_eval.errors import UsageError
from tests.artifact_compare import comparable
from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_SKILL,
    DEMO_SKILL_IMPROVED,
    DEMO_SUITE,
    REPO,
    contains_task,
    journal_records,
    read_json,
    run_cli,
    write_skill,
    write_suite,
)

AGENT = REPO / "task_suites" / "demo-agent"
AGENT_RUN = (
    "run",
    "--standalone",
    "--task-suite",
    str(AGENT / "task_suite.yaml"),
    "--skill-path",
    str(AGENT / "skill" / "csv-report"),
    "--mock",
    "--mock-outputs",
    str(AGENT / "mock_outputs.yaml"),
    "--skill-mode",
    "installed",
    "--samples",
    "2",
    "-q",
)


def demo_run(state: Path, *extra: str, skill: Path = DEMO_SKILL_IMPROVED) -> tuple[int, str, str]:
    return run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(DEMO_SUITE),
        "--skill-path",
        str(skill),
        "--mock",
        "--mock-outputs",
        str(DEMO_OUTPUTS),
        "--state-root",
        str(state),
        "-q",
        *extra,
    )


def shard_dirs(state: Path) -> list[Path]:
    """Run directories in shard order (their names end --shard-<i>-of-<n>)."""
    return sorted((state / "runs").iterdir(), key=lambda p: p.name.rsplit("--shard-", 1)[-1])


@pytest.mark.parametrize(
    ("text", "want"), [("1/3", Shard(1, 3)), (" 3 / 3 ", Shard(3, 3)), ("1/1", Shard(1, 1))]
)
def test_a_shard_is_parsed_as_i_of_n(text: str, want: Shard) -> None:
    assert Shard.parse(text) == want


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "3", "a/b", "1/3/5", "-1/3", ""])
def test_a_bad_shard_is_a_usage_error_naming_the_flag(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        Shard.parse(text)


def test_every_pair_is_in_exactly_one_shard_with_both_arms_and_shards_are_balanced() -> None:
    from skill_eval.core.model import Arm

    tasks = [
        Task(id=f"t{i}", prompt="p", judge={"type": "contains", "expected": ["x"]})
        for i in range(7)
    ]
    arms = [Arm("candidate", None), Arm("baseline", None)]
    jobs = plan_jobs(arms, tasks, 3)
    slices = [Shard(i, 4).select(jobs, tasks) for i in range(1, 5)]
    keys = [job.key for part in slices for job in part]
    assert sorted(keys) == sorted(job.key for job in jobs)  # all of them, none twice
    for part in slices:
        pairs = {(j.task.id, j.index) for j in part}
        assert sorted((j.task.id, j.index, j.arm.name) for j in part) == sorted(
            (t, i, a.name) for t, i in pairs for a in arms
        )  # both arms of each pair
    assert {len(part) for part in slices} <= {10, 12}  # 21 pairs over 4 shards: 5 or 6 each
    assert Shard(2, 4).select(jobs, tasks) == Shard(2, 4).select(jobs, tasks)


def test_three_merged_shards_give_the_artifact_of_the_unsharded_run(tmp_path: Path) -> None:
    code, out, err = run_cli(*AGENT_RUN, "--state-root", str(tmp_path / "whole"))
    assert code in (0, 1, 4), err
    whole = read_json(out.strip())
    state = tmp_path / "sharded"
    for i in (1, 2, 3):
        code, out, err = run_cli(*AGENT_RUN, "--state-root", str(state), "--shard", f"{i}/3")
        assert code == 0, err  # a shard decides nothing: skipped, exit 0
        part = read_json(out.strip())
        assert part["evaluation"]["verdict"] == "skipped"
        assert part["shard"]["index"] == i and part["shard"]["count"] == 3
        assert f"shard {i}/3: {part['shard']['attempts']} attempts recorded" in err
    runs = shard_dirs(state)
    sizes = [len(journal_records(run / "attempts.jsonl")) for run in runs]
    assert sum(sizes) == len(whole["candidate_results"]) * 2 * 2 and min(sizes) > 0
    code, out, err = run_cli("merge", *map(str, reversed(runs)), "-o", str(tmp_path / "m.json"))
    assert code == (1 if whole["evaluation"]["verdict"] == "fail" else 0), err
    merged = read_json(out.strip())
    assert merged["merged"]["count"] == 3
    assert merged["evaluation"]["verdict"] == whole["evaluation"]["verdict"]
    assert comparable(merged) == comparable(whole)
    # not vacuous: the runs judged agent work, some of it failing, with statistics
    assert whole["comparison"] is not None and whole["baseline_results"]
    assert {r["status"] for r in whole["baseline_results"]} == {"passed", "failed"}


def test_a_merged_artifact_keeps_long_outputs_without_the_shards(tmp_path: Path) -> None:
    long = "START " + "a long answer with the word alpha in it. " * 200 + "THE END"
    suite = write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(3)])
    skill = write_skill(tmp_path / "skill")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"candidate": {"t1": long}}), encoding="utf-8")
    state = tmp_path / "state"
    for i in (1, 2):
        code, _, err = run_cli(
            "run",
            "--standalone",
            "--task-suite",
            str(suite),
            "--skill-path",
            str(skill),
            "--state-root",
            str(state),
            "--mock",
            "--mock-outputs",
            str(outputs),
            "--shard",
            f"{i}/2",
            "-q",
        )
        assert code == 0, err
    runs = shard_dirs(state)
    assert any((run / "blobs").is_dir() for run in runs)  # the long output was stored once
    code, out, err = run_cli("merge", *map(str, runs), "-o", str(tmp_path / "out" / "m.json"))
    assert code in (0, 1, 4), err
    for run in runs:  # the shards' run directories are gone: the merge must not need them
        shutil.rmtree(run)
    code, shown, err = run_cli("show", out.strip(), "--task", "t1", "--full", "--plain")
    assert code == 0, err
    assert long in shown


@pytest.fixture(scope="module")
def demo_shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    state = tmp_path_factory.mktemp("shards")
    for i in (1, 2, 3):
        code, _, err = demo_run(state, "--shard", f"{i}/3")
        assert code == 0, err
    return shard_dirs(state)


def merge_error(tmp_path: Path, *dirs: Path) -> str:
    code, out, err = run_cli("merge", *map(str, dirs), "-o", str(tmp_path / "m.json"))
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert not (tmp_path / "m.json").exists()
    return lines[0]


def test_merge_refuses_a_missing_shard(tmp_path: Path, demo_shards: list[Path]) -> None:
    assert "missing shard(s) 2/3" in merge_error(tmp_path, demo_shards[0], demo_shards[2])


def test_merge_refuses_a_shard_given_twice(tmp_path: Path, demo_shards: list[Path]) -> None:
    assert "shard 1/3 given twice" in merge_error(tmp_path, *demo_shards, demo_shards[0])


def test_merge_refuses_a_shard_of_another_skill_or_split(
    tmp_path: Path, demo_shards: list[Path]
) -> None:
    other = tmp_path / "other"
    assert demo_run(other, "--shard", "2/3", skill=DEMO_SKILL)[0] == 0
    error = merge_error(tmp_path, demo_shards[0], shard_dirs(other)[0], demo_shards[2])
    assert "not a shard of the same run" in error and "candidate_skill" in error
    split = tmp_path / "split"
    assert demo_run(split, "--shard", "2/2")[0] == 0
    assert "shards of different splits" in merge_error(
        tmp_path, *demo_shards[:1], shard_dirs(split)[0]
    )


def test_merge_refuses_other_settings_a_plain_run_and_an_unfinished_shard(
    tmp_path: Path, demo_shards: list[Path]
) -> None:
    policy = tmp_path / "policy"
    assert demo_run(policy, "--shard", "3/3", "--policy", "superior")[0] == 0
    assert "policy differ" in merge_error(tmp_path, *demo_shards[:2], shard_dirs(policy)[0])
    plain = tmp_path / "plain"
    assert demo_run(plain)[0] in (0, 1)  # a plain run decides
    assert "not a shard" in merge_error(tmp_path, shard_dirs(plain)[0])
    cut = tmp_path / "state" / "runs" / "cut"  # under a state root holding the same key
    cut.mkdir(parents=True)
    key = demo_shards[1].parent.parent / "journal.key"
    (tmp_path / "state" / "journal.key").write_bytes(key.read_bytes())
    for name in ("run.json", "attempts.jsonl"):
        (cut / name).write_bytes((demo_shards[1] / name).read_bytes())
    journal = (cut / "attempts.jsonl").read_text().splitlines()
    (cut / "attempts.jsonl").write_text("\n".join(journal[:-1]) + "\n")
    assert "is unfinished" in merge_error(tmp_path, demo_shards[0], cut, demo_shards[2])


def test_bad_shard_flags_fail_before_anything_runs(tmp_path: Path) -> None:
    code, _, err = demo_run(tmp_path / "s", "--shard", "4/3")
    assert code == 2 and err.startswith("Error: --shard 4/3")
    code, _, err = demo_run(
        tmp_path / "s", "--shard", "1/2", "--baseline-cache-dir", str(tmp_path / "cache")
    )
    assert code == 2 and "--baseline-cache-dir" in err
    assert not (tmp_path / "s" / "runs").exists()


def test_a_shard_resumes_only_itself(tmp_path: Path) -> None:
    assert demo_run(tmp_path, "--shard", "1/2")[0] == 0
    code, _, err = demo_run(tmp_path, "--shard", "2/2", "--resume")
    assert code == 0 and "no earlier run has these inputs" in err
    assert len(shard_dirs(tmp_path)) == 2
    meta = json.loads((shard_dirs(tmp_path)[1] / "run.json").read_text())
    assert meta["plan"]["execution"]["shard"] == "2/2"


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("--shard", "1/2", "--early-stop"), "drop one of --early-stop and --shard"),
        (("--executor", "anthropic", "--batch", "--early-stop"), "--early-stop runs the samples"),
    ],
)
def test_scale_flags_that_do_not_mix_are_refused(
    tmp_path: Path, flags: tuple[str, ...], words: str
) -> None:
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(DEMO_SUITE),
        "--skill-path",
        str(DEMO_SKILL),
        "--state-root",
        str(tmp_path),
        "--samples",
        "2",
        *flags,
    )
    assert code == 2 and "Traceback" not in err and words in err, err
