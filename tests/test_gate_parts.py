"""The parts of the pull-request gate: finding skills at any depth (interop/skill_finder.py),
reading git as data (interop/git_refs.py) and which evals judge a changed skill
(interop/judged_change.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skill_eval.errors import UsageError
from skill_eval.interop.git_refs import check_ref, copy_tree, toplevel
from skill_eval.interop.judged_change import judge_change
from skill_eval.interop.skill_finder import find_skills
from tests.helpers import write_skill

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def with_evals(folder: Path) -> Path:
    skill = write_skill(folder)
    (skill / "evals").mkdir()
    data = {"skill_name": skill.name, "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}
    (skill / "evals" / "evals.json").write_text(json.dumps(data), encoding="utf-8")
    return skill


def test_skills_are_found_at_any_depth_and_named_by_their_path(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills" / "a")
    write_skill(tmp_path / "plugins" / "p" / "skills" / "b")
    write_skill(tmp_path / ".claude" / "skills" / "c")  # Claude Code's project skills
    write_skill(tmp_path / ".agents" / "evaluators" / "rubric")  # hidden: not a skill here
    write_skill(tmp_path / "node_modules" / "pkg" / "skills" / "d")
    write_skill(tmp_path / "skills" / "a" / "evals" / "fixtures" / "inner")  # inside a skill
    (tmp_path / "linked").symlink_to(tmp_path / "skills", target_is_directory=True)
    found = {s.label: s.path for s in find_skills([str(tmp_path)])}
    assert set(found) == {"skills/a", "plugins/p/skills/b", ".claude/skills/c"}
    assert [s.label for s in find_skills([str(tmp_path / "skills" / "a")])] == ["a"]


def test_a_path_with_no_skill_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no SKILL.md in it or in its folders"):
        find_skills([str(tmp_path / "empty")])
    with pytest.raises(UsageError, match="no such folder"):
        find_skills([str(tmp_path / "missing")])


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "-c", "", "main\nx", "a\x1bb"])
def test_a_ref_that_could_be_an_option_is_refused(tmp_path: Path, ref: str) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    with pytest.raises(UsageError, match="is not a git ref"):
        check_ref(ref, tmp_path)


def test_a_ref_naming_no_commit_is_refused(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "f").write_text("x")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "c")
    assert check_ref("main", tmp_path) == git(tmp_path, "rev-parse", "HEAD").strip()
    with pytest.raises(UsageError, match="is not in this checkout"):
        check_ref("no-such-branch", tmp_path)


def test_the_base_s_files_are_copied_as_regular_files_only(tmp_path: Path) -> None:
    """A link the base holds (to a secret of this machine) is never followed nor copied."""
    repo = tmp_path / "repo"
    evals = repo / "s" / "evals"
    evals.mkdir(parents=True)
    (evals / "evals.json").write_text("{}", encoding="utf-8")
    (evals / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (evals / "run.sh").chmod(0o755)
    (evals / "secret").symlink_to("/etc/passwd")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "c")
    dest = tmp_path / "copy"
    assert copy_tree(check_ref("main", repo), "s/evals", dest, toplevel(repo)) == 2
    assert sorted(p.name for p in dest.iterdir()) == ["evals.json", "run.sh"]
    assert os.access(dest / "run.sh", os.X_OK) and not (dest / "secret").exists()


def test_a_skill_at_the_repository_root_is_judged_by_the_base_s_evals(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    with_evals(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "c")
    git(repo, "checkout", "-qb", "change")
    (repo / "evals" / "evals.json").write_text('{"skill_name": "repo", "evals": []}')
    work = tmp_path / "work"
    [judged] = judge_change(find_skills([str(repo)]), "main", work, evals_from="base")
    assert (judged.state, judged.evals_from, judged.evals_changed) == ("judged", "base", True)
    assert judged.judged_dir != repo and (judged.judged_dir / "SKILL.md").is_file()
    base = json.loads((judged.judged_dir / "evals" / "evals.json").read_text())
    assert len(base["evals"]) == 1  # the base's, not the change's empty list


def test_an_unchanged_skill_is_not_judged_at_all(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    with_evals(repo / "skills" / "a")
    with_evals(repo / "skills" / "b")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "c")
    (repo / "skills" / "b" / "notes.md").write_text("untracked\n")
    found = judge_change(find_skills([str(repo)]), "main", tmp_path / "w")
    assert [(j.label, j.state, j.evals_changed) for j in found] == [("skills/b", "judged", False)]


def test_with_no_jail_here_the_evals_code_is_not_checked_exit_3(tmp_path: Path) -> None:
    """A python judge's code runs only in a jail: where none can run, the offline gate says
    the check could not run here (exit 3), never that the evals are sound."""
    skill = write_skill(tmp_path / "skills" / "coded")
    (skill / "evals").mkdir()
    judge = {"type": "python", "callable": "tests.judge_helpers:alpha_or_boom"}
    task = {"id": "t", "prompt": "p", "reference": "alpha", "judge": judge}
    suite = {"skill_id": "coded", "version": "1.0", "tasks": [task]}
    (skill / "evals" / "task_suite.yaml").write_text(json.dumps(suite), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    (bin_dir / "bwrap").chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", "gate", str(tmp_path / "skills")],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(bin_dir)},  # no podman, no docker either
        timeout=300,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Some evals could not be checked on this machine" in done.stdout
    assert "coded: not checked here:" in done.stdout and "no jail can run here" in done.stdout
