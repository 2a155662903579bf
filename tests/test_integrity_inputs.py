"""Issue 17, "inputs stay inside their bounds", as issue 25 left it: a ranking's target.path is
a skill wherever users keep it (inside --skills-root when given), never a system file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skill_eval.errors import SkillError
from skill_eval.skills import resolve_original
from skill_eval.skills.ranking import load_ranking
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import REPO, contains_task, write_ranking, write_skill, write_suite

SECRET = "sk-test-SECRET"
INLINE = "---\nname: x\ndescription: d\n---\nSay alpha."


def _files_with(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.mark.parametrize("target", ["/proc/self/environ", "link-to-environ"])
def test_proc_environ_never_becomes_the_original_skill(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link-to-environ").symlink_to("/proc/self/environ")
    suite = write_suite(tmp_path / "suite", [contains_task("t0", "alpha")])
    ranking = write_ranking(
        tmp_path / "ranking.json",
        [{"id": "c1", "score": 5, "skill_content": INLINE}],
        target=target,
    )
    state = tmp_path / "state"
    with FakeAnthropic(default="alpha") as server:
        # A child process: /proc/self/environ holds the environment a process started with.
        # The first variable makes the environment file look like a SKILL.md.
        env = {
            "---\nname: x\ndescription: d\n---\n#": "1",
            **os.environ,
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": SECRET,
            "PYTHONPATH": str(REPO),
        }
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "skill_eval.cli",
                "run",
                "--input",
                str(ranking),
                "--candidate-id",
                "c1",
                "--task-suite",
                str(suite),
                "--state-root",
                str(state),
                "--executor",
                "anthropic",
                "--model",
                "m",
                "-q",
                "--skills-root",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )
        requests = [json.dumps(r.body) for r in server.requests]
    code, out, err = proc.returncode, proc.stdout, proc.stderr
    assert code == 2, (out, err)
    assert "target.path" in err and "Traceback" not in err
    assert not any(SECRET in body for body in requests)
    assert not state.exists() or _files_with(state, SECRET) == []
    assert SECRET not in err + out


def test_a_skill_anywhere_is_accepted_and_skills_root_fences_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    skill = write_skill(elsewhere / "skill")
    monkeypatch.chdir(project)
    ranking = load_ranking(write_ranking(project / "r.json", [], target=str(skill)))
    assert resolve_original(ranking).directory == skill.resolve()  # where users keep skills
    assert resolve_original(ranking, elsewhere).directory == skill.resolve()
    with pytest.raises(
        SkillError,
        match=r"target.path: '.*/elsewhere/skill' resolves to "
        r".*, outside --skills-root .*/project$",
    ):
        resolve_original(ranking, project)
    (project / "linked").symlink_to(skill)  # a link into the fence does not leave it open
    ranking = load_ranking(write_ranking(project / "r.json", [], target="linked"))
    with pytest.raises(SkillError, match="outside --skills-root"):
        resolve_original(ranking, project)


def test_relative_target_is_read_against_the_ranking_then_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, cwd = tmp_path / "state" / "rankings", tmp_path / "cwd"
    write_skill(state / "skills" / "demo", body="Next to the ranking.")
    write_skill(cwd / "skills" / "demo", body="In the working directory.")
    write_skill(cwd / "skills" / "other", body="Only in the working directory.")
    monkeypatch.chdir(cwd)
    ranking = load_ranking(write_ranking(state / "r.json", [], target="skills/demo"))
    assert "Next to the ranking." in resolve_original(ranking).content
    ranking = load_ranking(write_ranking(state / "r.json", [], target="skills/other"))
    assert resolve_original(ranking).directory == (cwd / "skills" / "other").resolve()


def test_target_must_be_a_skill_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("---\nname: n\ndescription: d\n---\nhi")
    ranking = load_ranking(write_ranking(tmp_path / "r.json", [], target="notes.txt"))
    with pytest.raises(SkillError, match="must be a SKILL.md file or a directory holding one"):
        resolve_original(ranking)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "SKILL.md").symlink_to("/proc/self/environ")
    ranking = load_ranking(write_ranking(tmp_path / "r.json", [], target="linked"))
    with pytest.raises(SkillError, match="a system file, never a skill"):
        resolve_original(ranking)
    assert os.path.exists("/proc/self/environ")
