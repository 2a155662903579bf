"""What a job shipped to another machine carries: the suite's fixtures, task files, the files
its judges name and each arm's skill folder, unpacked once on the worker; the job rewritten
to read them there; a kept workspace packed for the trip back and unpacked on the driver."""

from __future__ import annotations

import os
import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from skill_eval.core.model import Arm, Attempt, Skill, Task
from skill_eval.core.work import FileSnapshot, Snapshot
from skill_eval.engine.jobs import AttemptJob, Finished, RunSpec, WorkspaceSettings
from skill_eval.engine.shipping import (
    Bundle,
    build_bundle,
    localise,
    materialise,
    pack_kept,
    unpack_kept,
    write_files,
)
from skill_eval.judges.llm import JudgeSettings
from tests.helpers import write_skill


def suite_dir(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    write_files(
        root,
        {
            "fixtures/test_x.py": b"def test(): pass\n",
            "fixtures/data/a.json": b"{}",
            "inputs/in.csv": b"a,b\n1,2\n",
            "schemas/out.json": b'{"type": "object"}',
            "notes/unrelated.txt": b"x",
        },
    )
    os.symlink("/etc/passwd", root / "fixtures" / "leak")  # never followed into a bundle
    return root


TASKS = (
    Task(
        id="agent",
        prompt="p",
        files=("inputs/in.csv",),
        judge={"type": "pytest", "test_file": "fixtures/test_x.py"},
    ),
    Task(id="json", prompt="p", judge={"type": "json-schema", "schema_file": "schemas/out.json"}),
)


def arms(tmp_path: Path) -> list[Arm]:
    folder = write_skill(tmp_path / "skill" / "csv")
    (folder / "scripts").mkdir(exist_ok=True)
    (folder / "scripts" / "run.py").write_text("print(1)\n")
    return [Arm("candidate", Skill("csv", "body", directory=folder)), Arm("baseline", None)]


def test_a_bundle_holds_what_jobs_read_and_nothing_else(tmp_path: Path) -> None:
    bundle = build_bundle(suite_dir(tmp_path), TASKS, arms(tmp_path))
    assert sorted(bundle.files) == [
        "skills/0/SKILL.md",
        "skills/0/scripts/run.py",
        "suite/fixtures/data/a.json",
        "suite/fixtures/test_x.py",
        "suite/inputs/in.csv",
        "suite/schemas/out.json",
    ]
    assert bundle.skills == {"candidate": "skills/0"}
    assert pickle.loads(pickle.dumps(bundle)).digest == bundle.digest


def test_a_worker_unpacks_once_and_the_job_reads_the_unpacked_copy(tmp_path: Path) -> None:
    source = suite_dir(tmp_path)
    bundle = build_bundle(source, TASKS, arms(tmp_path))
    worker = tmp_path / "worker-tmp"
    root = materialise(bundle, worker)
    assert materialise(bundle, worker) == root  # once per bundle
    assert (root / "suite" / "inputs" / "in.csv").read_bytes() == b"a,b\n1,2\n"
    spec = RunSpec(
        "k",
        "mock",
        None,
        JudgeSettings(suite_dir=source, cache="/no/such/dir"),
        workspaces=WorkspaceSettings(
            keep="failed", parent=tmp_path / "p", keep_root=tmp_path / "run" / "workspaces"
        ),
    )
    job = AttemptJob(arms(tmp_path)[0], TASKS[0], 1, spec)
    there = localise(job, root, bundle, tmp_path / "scratch")
    assert there.run is not None and there.arm.skill is not None
    assert there.run.judging.suite_dir == root / "suite"
    assert there.run.judging.cache == "memory"  # the driver's cache dir is not here
    assert there.run.workspaces.keep_root == tmp_path / "scratch"
    assert there.run.workspaces.parent is None
    assert (there.arm.skill.directory / "scripts" / "run.py").is_file()
    assert there.task == job.task and there.index == 1
    baseline = localise(replace(job, arm=arms(tmp_path)[1]), root, bundle, None)
    assert baseline.arm.skill is None and baseline.run is not None
    assert baseline.run.workspaces.keep == "failed"


@pytest.mark.parametrize("name", ["../escape", "/abs/path", "a/../../b"])
def test_a_bundle_path_that_would_leave_the_root_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="not a relative path"):
        materialise(Bundle({name: b"x"}, {}), tmp_path)
    assert not (tmp_path / "escape").exists()


def test_a_kept_workspace_travels_back_to_the_drivers_run_dir(tmp_path: Path) -> None:
    worker_kept = tmp_path / "worker" / "baseline" / "t" / "0"
    write_files(worker_kept, {"report.md": b"# r\n", "sub/x.txt": b"x"})
    files = Snapshot(files=(FileSnapshot("report.md", 4, "h", root=worker_kept),), root=worker_kept)
    attempt = Attempt(
        arm="baseline",
        task_id="t",
        index=0,
        status="failed",
        output="o",
        judge=None,
        error=None,
        duration_ms=1,
        files=files,
        meta={"workspace": {"kept": str(worker_kept)}},
    )
    packed = pack_kept(Finished(attempt))
    assert packed == {"report.md": b"# r\n", "sub/x.txt": b"x"} and not worker_kept.exists()
    back = unpack_kept(Finished(attempt), packed, tmp_path / "run" / "workspaces")
    assert back.attempt is not None and back.attempt.files is not None
    dest = tmp_path / "run" / "workspaces" / "baseline" / "t" / "0"
    assert back.attempt.meta["workspace"]["kept"] == str(dest)
    assert (dest / "sub" / "x.txt").read_bytes() == b"x"
    assert back.attempt.files.root == dest
    assert pack_kept(Finished(replace(attempt, meta={}))) == {}  # nothing kept, nothing sent
