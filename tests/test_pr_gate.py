"""The pull-request gate (action.yml's logic, scripts/pr_gate.sh) against a temporary git
repository with GitHub Actions' variables set: the job summary it writes, the HTML report per
evaluation, and its exit code, failing on a failing verdict and passing when the change
touched no skill."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO, write_skill

GATE = REPO / "scripts" / "pr_gate.sh"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def evals(name: str, value: str) -> str:
    data = {
        "skill_name": name,
        "evals": [{"id": 1, "prompt": "p", "assertions": [{"type": "contains", "value": value}]}],
    }
    return json.dumps(data)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: two skills whose evals pass under --mock; the branch `change` is checked out."""
    repo = tmp_path / "repo"
    for name in ("good", "other"):
        skill = write_skill(repo / "skills" / name)
        (skill / "evals").mkdir()
        (skill / "evals" / "evals.json").write_text(evals(name, "Mock"), encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "skills")
    git(repo, "checkout", "-q", "-b", "change")
    return repo


def gate(repo: Path, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    summary = tmp_path / "step_summary.md"
    tmp_path.mkdir(parents=True, exist_ok=True)
    summary.write_text("", encoding="utf-8")
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_BASE_REF": "main",
        "GITHUB_STEP_SUMMARY": str(summary),
        "SKILL_EVAL_SKILLS": "skills",
        "SKILL_EVAL_BASE": "main",  # no remote here: the base branch by its local name
        "SKILL_EVAL_ARGS": "--mock --policy delta",
        "SKILL_EVAL_REPORT_DIR": str(tmp_path / "report"),
        **env,
    }
    done = subprocess.run(
        ["bash", str(GATE)], cwd=repo, env=environment, capture_output=True, text=True, timeout=300
    )
    return done, summary.read_text(encoding="utf-8")


def test_a_change_that_breaks_a_skill_fails_the_gate(repo: Path, tmp_path: Path) -> None:
    broken = repo / "skills" / "good" / "evals" / "evals.json"
    broken.write_text(evals("good", "never in the output"), encoding="utf-8")
    git(repo, "commit", "-qam", "stricter evals")
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "| good | 1 | 0% | 0% |" in summary and "FAIL" in summary
    assert "| other |" not in summary  # unchanged: not run
    assert "<details><summary>" in summary  # the evaluation's own markdown report
    pages = list((tmp_path / "report").glob("*.html"))
    assert len(pages) == 1 and pages[0].read_text(encoding="utf-8").startswith("<!")


def test_a_passing_change_passes_and_no_change_runs_nothing(repo: Path, tmp_path: Path) -> None:
    skill_md = repo / "skills" / "other" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nMore.\n", encoding="utf-8")  # uncommitted
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| other | 1 | 100% | 100% | +0 pts" in summary and "PASS" in summary
    git(repo, "checkout", "-q", "--", ".")
    done, summary = gate(repo, tmp_path / "second")
    assert done.returncode == 0, done.stderr
    assert "no skill with evals to run" in done.stderr
    assert "No skill with evals to run" in summary


def test_the_comment_is_off_by_default_and_never_fails_the_gate(repo: Path, tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 7}), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "gh-calls"
    fake_gh = bin_dir / "gh"  # a gh whose token may not write: it fails as GitHub would
    fake_gh.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 1\n', encoding="utf-8")
    fake_gh.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done, _ = gate(repo, tmp_path, GITHUB_EVENT_PATH=str(event), PATH=path)
    assert done.returncode == 0 and not calls.exists()  # read-only by default
    done, _ = gate(repo, tmp_path / "2", GITHUB_EVENT_PATH=str(event), PATH=path,
                   SKILL_EVAL_COMMENT="true")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert calls.read_text().startswith("pr comment 7 --body-file")
    assert "could not comment (does the workflow grant pull-requests: write?)" in done.stderr


def test_bad_input_fails_the_gate_and_says_so_in_the_summary(repo: Path, tmp_path: Path) -> None:
    done, summary = gate(repo, tmp_path, SKILL_EVAL_SKILLS="no-such-folder")
    assert done.returncode == 2
    assert "The run stopped before any evaluation (exit 2)" in summary


def test_the_action_runs_the_gate_script() -> None:
    action: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "scripts/pr_gate.sh" in scripts
    uses = [step.get("uses", "") for step in action["runs"]["steps"]]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    assert action["inputs"]["comment"]["default"] == "false"
