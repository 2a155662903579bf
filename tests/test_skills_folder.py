"""`skill-eval run skills/ --mock`: a folder of skill folders in one command: an artifact per
skill with evals, a skill without evals listed as such, one summary table (text on stderr,
markdown with --summary), the worst exit code; `--changed-since REF` keeps the skills a git
change touched."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import read_json, run_cli, write_skill


def evals(name: str, checks: list[Any]) -> dict[str, Any]:
    return {
        "skill_name": name,
        "evals": [
            {"id": i + 1, "prompt": f"p{i}", "assertions": [c]} for i, c in enumerate(checks)
        ],
    }


def skills_folder(root: Path) -> Path:
    """Three skills: `alpha` passes (the mock's output says Mock), `beta` fails, `gamma` has
    no evals."""
    folder = root / "skills"
    for name, data in (
        ("alpha", evals("alpha", ["Reads well", {"type": "contains", "value": "Mock"}])),
        ("beta", evals("beta", [{"type": "contains", "value": "never said"}])),
        ("gamma", None),
    ):
        skill = write_skill(folder / name)
        if data is not None:
            (skill / "evals").mkdir()
            (skill / "evals" / "evals.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_folder_of_skills_runs_each_and_sums_them_up(tmp_path: Path) -> None:
    folder = skills_folder(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    state = tmp_path / "state"
    code, out, err = run_cli(
        "run",
        str(folder),
        "--mock",
        "--state-root",
        str(state),
        "--summary",
        str(summary),
        "--policy",
        "delta",  # two tasks: no policy that asks for evidence could pass
    )
    artifacts = [read_json(Path(line)) for line in out.split()]
    assert [a["task_suite_skill_id"] for a in artifacts] == ["alpha", "beta"]
    assert [a["evaluation"]["verdict"] for a in artifacts] == ["pass", "fail"]
    assert code == 1, err  # the worst of pass and fail
    assert len(list((state / "evaluations").glob("*.json"))) == 2
    table = err[err.index("skill  ") :]
    rows = {line.split()[0]: line for line in table.splitlines()[1:] if line.strip()}
    assert set(rows) == {"alpha", "beta", "gamma"}
    assert "PASS" in rows["alpha"] and "FAIL" in rows["beta"]
    assert "no evals" in rows["gamma"]
    markdown = summary.read_text(encoding="utf-8")
    assert markdown.startswith("# earlier step\n## skill-eval\n")  # appended, as a job summary
    assert "| skill | tasks | candidate | baseline | lift [95% interval] | verdict |" in markdown
    assert "| alpha | 2 | 100% | 100% | +0 pts \\[" in markdown
    assert "| gamma | - | - | - | - | no evals" in markdown


def test_several_skill_folders_and_output_as_a_folder(tmp_path: Path) -> None:
    folder = skills_folder(tmp_path)
    out_dir = tmp_path / "artifacts"
    code, out, err = run_cli(
        "run",
        str(folder / "alpha"),
        str(folder / "gamma"),
        str(folder / "alpha"),  # named twice: run once
        "--mock",
        "--state-root",
        str(tmp_path / "state"),
        "--output",
        str(out_dir / "one.json"),
        "--policy",
        "delta",
    )
    assert code == 0, err
    assert out.split() == [str(out_dir / "one.json")]  # one evaluation: --output is its path
    assert "gamma" in err and "no evals" in err


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_changed_since_keeps_the_skills_a_change_touched(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    folder = skills_folder(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "skills")
    git(repo, "checkout", "-q", "-b", "change")
    skill_md = folder / "beta" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nA new rule.\n", encoding="utf-8")
    git(repo, "commit", "-qam", "beta changes")
    state = tmp_path / "state"
    code, out, err = run_cli(
        "run", str(folder), "--changed-since", "main", "--mock", "--state-root", str(state)
    )
    assert "--changed-since main: 1 of 3 skill(s)" in err
    assert [read_json(Path(p))["task_suite_skill_id"] for p in out.split()] == ["beta"]
    assert code == 1, err
    # nothing changed since the branch's own head: nothing runs, and that passes
    code, out, err = run_cli(
        "run", str(folder), "--changed-since", "HEAD", "--mock", "--state-root", str(state)
    )
    assert (code, out) == (0, "") and "no skill with evals to run" in err
    code, _, err = run_cli("run", str(folder), "--changed-since", "nope", "--mock")
    assert (
        code == 2
        and err.startswith("Error: --changed-since: 'nope' is not in this checkout")
        and err.count("\n") == 1
    ), err


def test_skill_dir_refuses_flags_that_name_another_skill(tmp_path: Path) -> None:
    folder = skills_folder(tmp_path)
    code, _, err = run_cli("run", str(folder / "alpha"), "--skill-path", str(folder), "--mock")
    assert code == 2 and "--skill-path with SKILL_DIR" in err
    code, _, err = run_cli("run", str(tmp_path / "nowhere"), "--mock")
    assert code == 2 and "not a skill folder" in err
    code, _, err = run_cli("run", "--changed-since", "main", "--mock")
    assert code == 2 and "--changed-since needs SKILL_DIR" in err
