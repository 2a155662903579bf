"""`skill-eval evaluators list | show | validate`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from skill_eval.cli import cli
from skill_eval.evaluators import user_evaluators_dir

from .test_evaluators_loader import ALIAS_BOMB, GOOD


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["evaluators", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def put(root: Path, name: str, text: str = GOOD) -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_list_shows_sources_and_shadowing(tmp_path: Path) -> None:
    put(user_evaluators_dir(), "finance")
    put(tmp_path / "extra", "general", GOOD.replace("name: finance", "name: general"))
    put(tmp_path / "extra", "broken", GOOD.replace("kind: evaluator", "kind: task"))
    code, out, err = run(
        "list", "--evaluators-dir", str(tmp_path / "extra"), "--project-dir", str(tmp_path)
    )
    assert code == 0
    lines = out.splitlines()
    assert any(line.startswith("finance ") and " user " in line for line in lines)
    assert any(line.startswith("general ") and "evaluators-dir" in line for line in lines)
    assert any(line.startswith("code-review ") and "bundled" in line for line in lines)
    assert "shadowed: general (bundled: <bundled>/general/SKILL.md)" in lines
    assert err.strip() == (
        f"warning: {tmp_path}/extra/broken/SKILL.md: kind: must be "
        "'evaluator' (this file is not an evaluator skill otherwise)"
    )


def test_workspace_is_a_deprecated_alias_of_project_dir(tmp_path: Path) -> None:
    put(tmp_path / ".agents" / "evaluators", "finance")
    code, out, err = run("show", "finance", "--workspace", str(tmp_path))
    assert code == 0 and "source: project" in out
    assert "warning: --workspace is deprecated; use --project-dir" in err


def test_show_prints_dimensions_and_rubric(tmp_path: Path) -> None:
    code, out, _ = run("show", "code-review", "--project-dir", str(tmp_path))
    assert code == 0
    assert "source: bundled" in out
    assert "categories: code, refactor, bugfix" in out
    assert "  correctness   0.4" in out
    assert "# Code review evaluator" in out


def test_show_unknown_name_is_an_error_listing_the_available(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", "evaluators", "show", "nope"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "Error: unknown evaluator 'nope'; available: api-design, "
        "code-review, general, prose-quality, sql-safety, test-quality"
    )


def test_validate_reports_every_problem_one_line_each(tmp_path: Path) -> None:
    good = put(tmp_path, "finance")
    bad = put(
        tmp_path,
        "bad",
        GOOD.replace("weight: 0.5", "weight: 0.4").replace("name: compliance", "name: accuracy"),
    )
    code, out, err = run("validate", str(tmp_path))
    assert code == 2
    assert out.strip() == f"ok: {good} (finance)"
    assert err.splitlines() == [
        f"{bad}: metadata.dimensions[1].name: duplicate dimension name 'accuracy' "
        "(also metadata.dimensions[0])",
        f"{bad}: metadata.dimensions: weights must sum to 1.0 (within 1e-06); "
        "0.4 + 0.3 + 0.2 = 0.9",
    ]
    assert run("validate", str(good))[0] == 0


def cli_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", "evaluators", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_list_and_show_refuse_a_missing_evaluators_dir_as_run_does(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    for args in (["list"], ["show", "general"]):
        proc = cli_process(*args, "--evaluators-dir", str(missing), cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stdout == ""
        assert proc.stderr == (
            f"Error: {missing}: evaluators dir does not exist or is not a directory\n"
        )


def test_validate_refuses_an_alias_bomb_at_once(tmp_path: Path) -> None:
    path = put(tmp_path, "bomb", ALIAS_BOMB)
    proc = cli_process("validate", str(tmp_path), cwd=tmp_path)  # hung before
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{path}:9: frontmatter: invalid YAML: too many YAML nodes")
