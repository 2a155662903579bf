"""Skill folders on disk: read, keep every version, write the winner safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.improve import ImproveMemory, IterationSettings, MockImprover, run_improve
from skill_eval.improve.folders import (
    FolderError,
    read_skill_folder,
    write_version,
    write_versions,
    write_winner,
)
from skill_eval.improve.loop import ImproveResult
from tests.improve_fakes import RuleFollowingEvaluator, make_tasks, skill_with_rules


def make_skill(tmp_path: Path) -> Path:
    skill = tmp_path / "skill"
    (skill / "ref").mkdir(parents=True)
    (skill / "SKILL.md").write_text(skill_with_rules("alpha", "beta")["SKILL.md"])
    (skill / "ref" / "notes.md").write_text("notes\n")
    (skill / "logo.png").write_bytes(b"\x89PNG\xff\xfe")
    (skill / ".git").mkdir()
    (skill / ".git" / "HEAD").write_text("ref")
    return skill


def improve(tmp_path: Path, files: dict[str, str]) -> ImproveResult:
    tasks = make_tasks()
    with ImproveMemory.in_state_root(tmp_path / "state") as memory:
        return run_improve(
            files,
            tasks,
            RuleFollowingEvaluator(tasks),
            MockImprover(),
            memory,
            IterationSettings(),
            skill_id="demo",
            log=lambda _: None,
        )


def test_read_keeps_text_and_names_what_it_left_out(tmp_path: Path) -> None:
    files, skipped = read_skill_folder(make_skill(tmp_path))
    assert sorted(files) == ["SKILL.md", "ref/notes.md"]
    assert skipped == ["logo.png: not UTF-8 text, not shown to the improver"]
    with pytest.raises(FolderError, match="no SKILL.md"):
        read_skill_folder(tmp_path / "skill" / "ref")


def test_versions_and_winner(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    files, _ = read_skill_folder(skill)
    result = improve(tmp_path, files)
    folders = write_versions(result, tmp_path / "run", skill)
    assert [p.name for p in folders.values()] == [
        f"v{v.iteration}-{v.hash[:12]}" for v in result.versions
    ]
    best = folders[result.best.hash]
    assert (best / "SKILL.md").read_text() == result.best.files["SKILL.md"]
    assert (best / "logo.png").read_bytes() == b"\x89PNG\xff\xfe" and not (best / ".git").exists()
    out = write_winner(result, tmp_path / "out", skill)
    assert out is not None and "[rule:gamma]" in (out / "SKILL.md").read_text()
    assert "[rule:gamma]" not in (skill / "SKILL.md").read_text()
    with pytest.raises(FolderError, match="skill folder itself"):
        write_winner(result, skill, skill)
    with pytest.raises(FolderError, match="inside the skill folder"):
        write_winner(result, skill / "ref" / "out", skill, in_place=True)
    assert write_winner(result, skill, skill, in_place=True) == skill.resolve()
    assert "[rule:gamma]" in (skill / "SKILL.md").read_text()


def test_nothing_written_when_nothing_is_proposed(tmp_path: Path) -> None:
    result = improve(tmp_path, skill_with_rules("alpha", "beta", "gamma", "delta"))
    assert not result.proposed
    assert write_winner(result, tmp_path / "out", tmp_path) is None
    assert not (tmp_path / "out").exists()


def test_write_version_refuses_escaping_paths_and_existing_targets(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside the skill folder"):
        write_version({"../evil": "x"}, tmp_path / "v")
    assert not (tmp_path / "evil").exists()
    with pytest.raises(FolderError, match="already exists"):
        write_version({"SKILL.md": "x"}, tmp_path)
