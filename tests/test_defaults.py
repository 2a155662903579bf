"""Defaults a new user expects (issue 26): `skill-eval run --skill-path S --task-suite F` is a
complete command (state in `.skill-eval/`, standalone implied) while scripts/evaluate.py keeps
the original tool's required flags; files skill-eval writes follow the umask, so a CI job can
upload them for others to read."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import (
    REPO,
    contains_task,
    read_json,
    run_cli,
    run_script,
    write_outputs,
    write_skill,
    write_suite,
)


def _inputs(root: Path) -> tuple[Path, Path, Path]:
    suite = write_suite(root / "suite", [contains_task("a", "DONE"), contains_task("b", "DONE")])
    outputs = write_outputs(
        root / "outputs.yaml",
        {"candidate": {"a": "DONE", "b": "DONE"}, "baseline": {"a": "DONE", "b": "no"}},
    )
    return write_skill(root / "my-skill"), suite, outputs


def test_skill_path_and_task_suite_make_a_complete_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill, suite, outputs = _inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(
        "run",
        "--skill-path",
        "my-skill",
        "--task-suite",
        "suite/task_suite.yaml",
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
    )
    assert code in (0, 1, 4), err  # a verdict, whichever
    artifact = Path(out.strip())
    assert artifact.parent == tmp_path / ".skill-eval" / "evaluations"
    data = read_json(artifact)
    assert data["evaluation"]["execution_pass_rate"] == 1.0
    assert data["evaluation"]["baseline_pass_rate"] == 0.5  # standalone: the no-skill baseline
    assert list((tmp_path / ".skill-eval" / "runs").iterdir())


def test_a_ranking_still_means_pipeline_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--skill-path implies --standalone only without --input: with both, the old error."""
    _skill, suite, _outputs = _inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli(
        "run",
        "--skill-path",
        "my-skill",
        "--input",
        "ranking.json",
        "--candidate-id",
        "c",
        "--task-suite",
        str(suite),
        "--mock",
    )
    assert code == 2
    assert "--skill-path, --baseline-skill and --no-baseline are for --standalone mode" in err


def test_the_compatibility_script_keeps_requiring_what_the_old_tool_required(
    tmp_path: Path,
) -> None:
    skill, suite, _outputs = _inputs(tmp_path)
    proc = run_script(
        "--standalone",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--mock",
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and "Missing option '--state-root'" in proc.stderr
    proc = run_script(
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--mock",
        "--state-root",
        str(tmp_path / "state"),
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and "pipeline mode needs --input" in proc.stderr
    assert not (tmp_path / ".skill-eval").exists() and not (tmp_path / "state").exists()


def test_improve_keeps_its_state_in_the_same_default_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("improve", "--history")
    assert code == 2 and "--state-root .skill-eval: no such directory" in err, (out, err)


def test_gitignore_leaves_the_default_state_folder_out() -> None:
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".skill-eval/" in ignored


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, str]:
    """Every path under root whose mode is not what umask 022 gives (0644 files, 0755
    directories), with its mode; the journal key, private by design, must be 0600."""
    wrong = {}
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_symlink():
            continue
        if path.name == "journal.key":  # the one secret skill-eval writes: never for others
            if mode != 0o600:
                wrong[str(path.relative_to(root))] = oct(mode)
            continue
        expected = (0o755,) if path.is_dir() else (0o644, 0o755)  # 0755: a kept executable
        if mode not in expected:
            wrong[str(path.relative_to(root))] = oct(mode)
    return wrong


def test_what_a_run_writes_follows_the_umask(tmp_path: Path, umask_022: None) -> None:
    """Artifacts, reports, run folders, journals, blobs, kept workspaces and caches: readable
    by others under umask 022 (a CI job uploads them), none left 0600/0700."""
    demo = REPO / "task_suites" / "demo-agent"
    state = tmp_path / "state"
    code, out, err = run_cli(
        "run",
        "--task-suite",
        str(demo),
        "--skill-path",
        str(demo / "skill" / "csv-report"),
        "--mock",
        "--mock-outputs",
        str(demo / "mock_outputs.yaml"),
        "--state-root",
        str(state),
        "--keep-workspaces",
        "all",
        "--baseline-cache-dir",
        str(tmp_path / "baseline-cache"),
        "-q",
    )
    assert code in (0, 1, 4), err
    assert list(state.rglob("workspaces/*/*/*/*"))  # kept workspaces were written
    _skill, suite, _outputs = _inputs(tmp_path)
    long = write_outputs(tmp_path / "long.yaml", {"a": "DONE " + "x" * 500, "b": "DONE"})
    code, _out, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(_skill),
        "--mock",
        "--mock-outputs",
        str(long),
        "--state-root",
        str(state),
        "--max-preview-chars",
        "100",
        "-q",
    )
    assert code in (0, 1, 4), err
    assert list(state.rglob("blobs/*"))  # a long output was kept as a blob
    code, _out, err = run_cli(
        "report", out.strip(), "--format", "html", "-o", str(state / "report.html")
    )
    assert code == 0, err
    assert _modes(state) == {}
    assert _modes(tmp_path / "baseline-cache") == {}


def test_what_improve_writes_follows_the_umask(tmp_path: Path, umask_022: None) -> None:
    from tests.test_improve_cli import _write_inputs

    skill, suite = _write_inputs(tmp_path)
    state = tmp_path / "state"
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(state),
        "--mock",
    )
    assert code == 0, err
    assert _modes(state) == {}


def test_the_readme_quickstart_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Quickstart's command, from a copy of the files it names (so that its default
    `.skill-eval/` lands in tmp_path, not in the repository)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [line] = [x for x in readme.splitlines() if x.startswith("pip install -e . && skill-eval")]
    args = shlex.split(line.split(" && ", 1)[1])
    assert args[0] == "skill-eval" and "--state-root" not in args and "--standalone" not in args
    for relative in ("task_suites/demo", "fixtures/demo-skill-improved"):
        shutil.copytree(REPO / relative, tmp_path / relative)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(*args[1:])
    assert code == 0, err  # PASS under the default policy's exact test, as the README explains
    assert Path(out.strip()).parent == tmp_path / ".skill-eval" / "evaluations"
    assert read_json(out.strip())["evaluation"]["verdict"] == "pass"
    assert "lower bound -9.6 points" in err and "lower bound −9.6 points" in readme


def test_what_review_writes_follows_the_umask(tmp_path: Path, umask_022: None) -> None:
    state = tmp_path / "state"
    code, _out, err = run_cli(
        "review", str(write_skill(tmp_path / "my-skill")), "--state-root", str(state), "--mock"
    )
    assert code == 0, err
    assert _modes(state) == {}
