"""The project config file: `[tool.skill-eval]` in pyproject.toml or a skill-eval.toml gives
`skill-eval run` its defaults; the command line beats it; unknown keys and wrong types are
errors with file and line; the manifest names the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.plan.config import find_config, key_lines
from tests.helpers import read_json, run_cli, write_outputs, write_skill, write_suite


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory holding a suite, a skill and mock outputs; the test runs in a
    sub-directory of it, as a user would."""
    write_suite(
        tmp_path / "suite",
        [
            {"id": f"t{i}", "prompt": "p", "judge": {"type": "contains", "expected": ["ok"]}}
            for i in range(2)
        ],
    )
    write_skill(tmp_path / "skill")
    write_outputs(
        tmp_path / "outputs.yaml",
        {"candidate": {"t0": "ok", "t1": "ok"}, "baseline": {"t0": "no", "t1": "no"}},
    )
    work = tmp_path / "work" / "deeper"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path


BASE = """
[project]
name = "team-skills"

[tool.ruff]
line-length = 100

[tool.skill-eval]
task-suite = "suite/task_suite.yaml"
state-root = "state"
mock = true
mock-outputs = "outputs.yaml"
samples = 2
"""


def run(*args: str) -> tuple[int, str, str]:
    return run_cli("run", "--standalone", "--skill-path", "../../skill", "-q", *args)


def ran(code: int) -> bool:
    """The run went through and wrote its artifact (its verdict is not what these test)."""
    return code in (0, 1, 4)


def test_pyproject_table_gives_the_defaults_and_the_manifest_names_it(project: Path) -> None:
    (project / "pyproject.toml").write_text(BASE, encoding="utf-8")
    code, out, err = run()
    assert ran(code), err
    artifact = Path(out.strip())
    assert artifact.parent == project / "state" / "evaluations"  # relative to the file
    data = read_json(artifact)
    assert data["manifest"]["config_file"] == str(project / "pyproject.toml")
    assert data["manifest"]["samples"] == 2


def test_the_command_line_beats_the_file(project: Path) -> None:
    (project / "pyproject.toml").write_text(BASE, encoding="utf-8")
    code, out, err = run("--samples", "3", "--state-root", str(project / "elsewhere"))
    assert ran(code), err
    data = read_json(out.strip())
    assert data["manifest"]["samples"] == 3
    assert Path(out.strip()).is_relative_to(project / "elsewhere")


def test_skill_eval_toml_wins_over_pyproject_and_no_config_ignores_both(project: Path) -> None:
    (project / "pyproject.toml").write_text(BASE, encoding="utf-8")
    (project / "work" / "skill-eval.toml").write_text(
        'task-suite = "../suite/task_suite.yaml"\nstate-root = "../own-state"\nmock = true\n',
        encoding="utf-8",
    )
    code, out, err = run()
    assert ran(code), err
    data = read_json(out.strip())
    assert data["manifest"]["config_file"] == str(project / "work" / "skill-eval.toml")
    assert data["manifest"]["samples"] == 1
    code, _, err = run("--no-config")
    assert code == 2 and "Missing option '--task-suite'" in err


def test_config_names_a_file_anywhere(project: Path, tmp_path: Path) -> None:
    named = tmp_path / "ci.toml"
    named.write_text(
        f'task-suite = "{project}/suite/task_suite.yaml"\nstate-root = "ci"\n'
        "mock = true\nconcurrency = 2\n"
        '[executor.claude-cli]\nallowed_tools = ["Read", "Grep"]\n',  # read when it runs
        encoding="utf-8",
    )
    code, out, err = run("--config", str(named))
    assert ran(code), err
    assert read_json(out.strip())["manifest"]["config_file"] == str(named)


def test_unknown_keys_and_wrong_types_name_file_line_and_key(project: Path) -> None:
    text = BASE + 'concurency = 4\npolicy = "no-regresion"\nmax-retries = "3"\nno-baseline = 1\n'
    (project / "pyproject.toml").write_text(text, encoding="utf-8")
    code, out, err = run()
    assert code == 2 and out == ""
    path = project / "pyproject.toml"
    lines = text.splitlines()
    where = {
        key: lines.index(next(x for x in lines if x.startswith(key))) + 1
        for key in ("concurency", "policy", "max-retries", "no-baseline")
    }
    assert err.splitlines() == [
        f"Error: {path}:{where['concurency']}: unknown key 'concurency' (did you mean "
        "'concurrency'?); keys are the long flag names of `skill-eval run`",
        f"{path}:{where['policy']}: policy: must be one of delta, no-regression, non-inferior, "
        "superior (did you mean 'no-regression'?), got a string 'no-regresion'",
        f"{path}:{where['max-retries']}: max-retries: must be an integer, got a string '3'",
        f"{path}:{where['no-baseline']}: no-baseline: must be true or false, got an integer 1",
    ]


def test_bad_toml_and_a_missing_named_file_are_one_line_errors(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.skill-eval]\nmock = \n", encoding="utf-8")
    code, _, err = run()
    assert code == 2
    assert err.startswith(f"Error: {project / 'pyproject.toml'}: not valid TOML: ")
    assert "line 2" in err
    code, _, err = run("--config", str(project / "nope.toml"))
    assert code == 2 and err.strip() == f"Error: config file not found: {project / 'nope.toml'}"


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.skill-eval]\nmock = true\n")
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_config(inner) == tmp_path / "pyproject.toml"


def test_key_lines_cover_quoting_and_sub_tables() -> None:
    text = (
        '[tool.other]\nmodel = "x"\n[ tool."skill-eval" ]\n"model" = "m"\n'
        "samples=2\n[tool.skill-eval.extra]\nx = 1\n"
    )
    assert key_lines(text, in_pyproject=True) == {"model": 4, "samples": 5, "extra": 6}
    # a skill-eval.toml's tables ([arms], [executor.x]) are keys of its top level; their own
    # keys are not
    assert key_lines("mock = true\n[section]\nx = 1\n", in_pyproject=False) == {
        "mock": 1,
        "section": 2,
    }
    text = 'mock = true\n[arms]\na = "installed"\n[executor.mock]\nx = 1\n[[list]]\ny = 2\n'
    assert key_lines(text, in_pyproject=False) == {"mock": 1, "arms": 2, "executor": 4, "list": 6}


def test_help_documents_the_config_file() -> None:
    code, out, _ = run_cli("run", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "[tool.skill-eval]" in flat and "skill-eval.toml" in flat
    assert "--config FILE" in out and "--no-config" in out
