"""Installed mode never writes through: the copy in `.claude/skills/<name>/` is built without
writing anything outside it, whatever links the skill holds; and what a mode cannot deliver
is said once per run."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from skill_eval.core.model import ExecutionRequest, Task
from skill_eval.executors.base import ExecutorConfig, create_executor
from skill_eval.skills import load_skill
from skill_eval.skills.install import install_skill, plan_install

from .fakes.fake_claude import install
from .helpers import DEMO_SUITE, jail_missing, journal_records, read_json, run_cli, write_skill

OLD = (1_000_000_000, 1_000_000_000)  # 2001: any write would move it


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple[str, bytes, int]]:
    """Every entry below root (links not followed): kind, bytes or link text, mtime."""
    out = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory) / name
            if skip is not None and path.is_relative_to(skip):
                continue
            info = os.lstat(path)
            if path.is_symlink():
                out[str(path)] = ("link", os.readlink(path).encode(), info.st_mtime_ns)
            elif path.is_file():
                out[str(path)] = ("file", path.read_bytes(), info.st_mtime_ns)
            else:
                out[str(path)] = ("other", b"", info.st_mtime_ns)
    return out


def test_absolute_symlink_skill_md_is_never_written_through(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "SKILL.md"
    shared.parent.mkdir()
    shared.write_text("---\nname: linked\ndescription: d\n---\nthe original\n", "utf-8")
    os.utime(shared, ns=(OLD[0] * 10**9, OLD[1] * 10**9))
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "SKILL.md").symlink_to(shared)  # absolute, outside the folder
    skill = dataclasses.replace(load_skill(tmp_path / "linked"), content="the candidate\n")
    before = shared.stat()
    work = tmp_path / "attempt"
    for target in (work, work, tmp_path / "attempt2"):  # twice in one place, once elsewhere
        dest = install_skill(skill, target)
        installed = dest / "SKILL.md"
        assert not installed.is_symlink() and installed.read_text() == "the candidate\n"
    after = shared.stat()
    assert shared.read_text() == "---\nname: linked\ndescription: d\n---\nthe original\n"
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert after.st_mtime_ns == OLD[1] * 10**9


def test_links_inside_outside_dangling_and_special(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("outside notes", encoding="utf-8")
    (outside / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    (outside / "big.md").write_text("x" * 100, encoding="utf-8")
    folder = write_skill(tmp_path / "demo")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    (folder / "scripts" / "run.sh").chmod(0o755)
    (folder / "reference.md").write_text("inside", encoding="utf-8")
    links = {
        "ref-link.md": "reference.md",
        "tools": "scripts",
        "notes.md": outside / "notes.md",
        "blob.bin": outside / "blob.bin",
        "big.md": outside / "big.md",
        "outdir": outside,
        "dangling.md": tmp_path / "gone.md",
        "environ": "/proc/self/environ",
        "null": "/dev/null",
    }
    for name, target in links.items():
        (folder / name).symlink_to(target)
    os.mkfifo(folder / "pipe")
    skill = load_skill(folder)
    plan = plan_install(skill)
    assert plan.files == [
        "demo/SKILL.md",
        "demo/ref-link.md",
        "demo/reference.md",
        "demo/scripts/run.sh",
        "demo/tools",
    ]
    assert sorted(w.split(": ", 2)[1] for w in plan.warnings) == [
        "big.md",
        "blob.bin",
        "dangling.md",
        "environ",
        "notes.md",
        "null",
        "outdir",
    ]
    assert any("dangling link" in w for w in plan.warnings)
    assert f"notes.md: a link to {outside / 'notes.md'}, outside the skill folder: never " in (
        " ".join(plan.warnings)
    )
    before = snapshot(tmp_path)
    dest = install_skill(skill, tmp_path / "attempt")
    assert snapshot(tmp_path, skip=tmp_path / "attempt") == before  # nothing else written
    assert not (dest / "notes.md").exists()  # a text file outside: never followed either
    assert (dest / "ref-link.md").read_text() == "inside" and not (
        dest / "ref-link.md"
    ).is_symlink()
    assert os.readlink(dest / "tools") == "scripts"  # relative, inside the copy
    assert os.access(dest / "scripts" / "run.sh", os.X_OK)
    assert sorted(p.name for p in dest.iterdir()) == [
        "SKILL.md",
        "ref-link.md",
        "reference.md",
        "scripts",
        "tools",
    ]


def test_a_file_skill_installs_skill_md_alone(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "secret.env").write_text("TOKEN=1", encoding="utf-8")
    assert plan_install(load_skill(folder / "SKILL.md")).files == ["demo/SKILL.md"]


def test_mock_records_what_installed_mode_would_install(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "reference.md").write_text("ref", encoding="utf-8")
    executor = create_executor("mock", ExecutorConfig(skill_mode="installed"))
    task = Task(id="t1", prompt="p", judge={"type": "contains", "expected": ["x"]})
    result = executor.run(
        ExecutionRequest(
            task=task, arm="candidate", attempt=0, skill=load_skill(folder), timeout_seconds=5
        )
    )
    assert result.meta["would_install"] == ["demo/SKILL.md", "demo/reference.md"]
    assert (
        not (tmp_path / ".claude").exists()
        and not (Path.cwd() / ".claude" / "skills" / "demo").exists()
    )
    system = create_executor("mock", ExecutorConfig(skill_mode="system"))
    assert (
        system.run(
            ExecutionRequest(
                task=task, arm="candidate", attempt=0, skill=load_skill(folder), timeout_seconds=5
            )
        ).meta
        == {}
    )


def run_mock(tmp_path: Path, skill: Path, *extra: str) -> tuple[dict, str]:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
        *extra,
    )
    assert code in (0, 1, 3, 4), err
    return read_json(out.strip()), err


def test_mock_installed_run_says_what_it_would_install(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "reference.md").write_text("ref", encoding="utf-8")
    (folder / "dangling").symlink_to(tmp_path / "gone")
    data, err = run_mock(tmp_path, folder, "--skill-mode", "installed")
    expected = [
        "candidate skill: skill 'demo': dangling: a dangling link",
        "candidate skill: --mock installs nothing; installed mode would install 2 "
        "file(s): demo/SKILL.md, demo/reference.md",
    ]
    for item in expected:
        assert sum(w.startswith(item) for w in data["warnings"]) == 1, data["warnings"]
        assert err.count(f"warning: {item}") == 1


def test_a_skill_md_given_alone_says_its_folder_is_left_out_once(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "x.py").write_text("print()", encoding="utf-8")
    data, err = run_mock(tmp_path, folder / "SKILL.md")
    notes = [w for w in data["warnings"] if "are not part of the skill" in w]
    assert notes == [
        f"candidate skill: given as the file {folder / 'SKILL.md'}: the 1 other "
        f"file(s) in its folder (scripts/x.py) are not part of the skill; give "
        f"the folder to include them"
    ]
    assert err.count("warning: candidate skill: given as the file") == 1  # logged once


def test_system_mode_says_the_other_files_never_reach_the_model(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "reference.md").write_text("ref", encoding="utf-8")
    data, _ = run_mock(tmp_path, folder)
    assert [w for w in data["warnings"] if "never reach the model" in w] == [
        "candidate skill: system mode sends SKILL.md alone: the skill's 1 other file(s) "
        "(reference.md) never reach the model; --skill-mode installed delivers them"
    ]
    plain, _ = run_mock(tmp_path, write_skill(tmp_path / "one" / "demo"))
    assert not any("never reach" in w for w in plain["warnings"])


@pytest.mark.slow
def test_runs_through_claude_cli_never_touch_a_linked_skill_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported bug, end to end: installed mode wrote through an absolute SKILL.md link
    on every run, standalone and pipeline. Runs twice each; the original stays as it was."""
    if (missing := jail_missing()) is not None:
        pytest.skip(missing)
    fake = install(tmp_path / "bin")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    shared = tmp_path / "shared.md"
    text = "---\nname: linked\ndescription: d\n---\nthe original\n"
    shared.write_text(text, encoding="utf-8")
    os.utime(shared, ns=(OLD[0] * 10**9, OLD[1] * 10**9))
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "SKILL.md").symlink_to(shared)
    ranking = tmp_path / "ranking.json"
    ranking.write_text(
        json.dumps(
            {
                "run_id": "r",
                "target": {"path": "linked"},
                "scored_candidates": [{"id": "c", "score": 5, "skill_content": text + "more\n"}],
            }
        )
    )
    common = [
        "--task-suite",
        str(DEMO_SUITE),
        "--executor",
        "claude-cli",
        "--claude-bin",
        str(fake),
        "--skill-mode",
        "installed",
        "-q",
    ]
    for i in range(2):
        for args in (
            ["--standalone", "--skill-path", str(tmp_path / "linked")],
            ["--input", str(ranking), "--candidate-id", "c"],
        ):
            code, _, err = run_cli("run", *args, "--state-root", str(tmp_path / f"s{i}"), *common)
            assert code in (0, 1, 3, 4), err
    # the stand-in ran every attempt (in its jail): none is an error
    journals = list(tmp_path.glob("s*/runs/*/attempts.jsonl"))
    assert journals
    for journal in journals:
        assert {r["status"] for r in journal_records(journal)} == {"failed"}
    assert shared.read_text(encoding="utf-8") == text
    assert shared.stat().st_mtime_ns == OLD[1] * 10**9
