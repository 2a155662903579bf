"""Mock outputs that do not script the run are said before it (executors/mock_coverage.py):
arms the file has no key for (an --arm run given a candidate/baseline file), tasks an arm has
no output for, keys that name no arm (with a did-you-mean); an error under `run --strict`, and
warnings of `validate --mock-outputs` (errors under its --strict)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.mock_coverage import coverage
from tests.helpers import REPO, contains_task, read_json, run_cli, write_skill
from tests.helpers import write_suite as _write_suite

TASKS = [contains_task("t1", "alpha"), contains_task("t2", "beta")]
PAIR = {"candidate": {"t1": "alpha", "t2": "beta"}, "baseline": {"t1": "alpha", "t2": "no"}}


def write_outputs(path: Path, data: dict[str, Any]) -> Path:
    """The file with its keys in the order given (JSON is YAML)."""
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_suite(tmp_path: Path) -> Path:
    return _write_suite(tmp_path / "suite", TASKS)


def run(tmp_path: Path, outputs: dict[str, Any], *more: str) -> tuple[int, str, str]:
    return run_cli(
        "run",
        "--mock",
        "-q",
        "--task-suite",
        str(write_suite(tmp_path)),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--mock-outputs",
        str(write_outputs(tmp_path / "outputs.yaml", outputs)),
        "--state-root",
        str(tmp_path / "state"),
        *more,
    )


def warnings_of(err: str, path: Path) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(f"warning: {path}: ")]


ARMS = ("--arm", "a=system", "--arm", "none=none")


def test_a_candidate_baseline_file_in_an_arms_run_is_said_before_the_run(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, PAIR, *ARMS)
    outputs = tmp_path / "outputs.yaml"
    assert out.strip(), err  # a warning: the run goes on
    assert warnings_of(err, outputs) == [
        f"warning: {outputs}: arms 'a', 'none' have no key: their 2 tasks get the mock's "
        "default output",
        f"warning: {outputs}: keys 'candidate', 'baseline' name no arm of this run; an --arm "
        "run's outputs are keyed by arm name (a, none)",
    ]
    # said before any attempt: ahead of the summary, and kept in the artifact
    assert err.index("have no key") < err.index("arms side by side")
    assert any("have no key" in w for w in read_json(out.strip())["warnings"])


def test_under_strict_an_unscripted_run_is_refused_in_one_line(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, PAIR, *ARMS, "--strict")
    outputs = tmp_path / "outputs.yaml"
    assert code == 2 and out == ""
    error = [line for line in err.splitlines() if line.startswith("Error:")]
    assert error == [
        f"Error: {outputs}: does not script this run (--strict): arms 'a', 'none' have no "
        "key: their 2 tasks get the mock's default output; keys 'candidate', 'baseline' name "
        "no arm of this run; an --arm run's outputs are keyed by arm name (a, none)"
    ]
    assert "Traceback" not in err
    assert not (tmp_path / "state" / "runs").exists()  # refused before any attempt


def test_a_task_missing_from_the_file_names_the_task(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, {"t1": "alpha"})
    outputs = tmp_path / "outputs.yaml"
    assert out.strip(), err
    assert warnings_of(err, outputs) == [
        f"warning: {outputs}: 1 of 2 tasks have no output (t2): every arm gets the mock's "
        "default output for them"
    ]
    code, out, err = run(tmp_path, {"t1": "alpha"}, "--strict")
    assert code == 2 and "does not script this run (--strict): 1 of 2 tasks" in err


def test_an_arm_missing_a_task_and_a_misspelt_arm_key(tmp_path: Path) -> None:
    outputs = {"a": {"t1": "alpha"}, "nnoe": {"t1": "x", "t2": "y"}}
    _, out, err = run(tmp_path, outputs, *ARMS)
    path = tmp_path / "outputs.yaml"
    assert warnings_of(err, path) == [
        f"warning: {path}: arm 'none' has no key: its 2 tasks get the mock's default output",
        f"warning: {path}: arm 'a': 1 of 2 tasks have no output (t2): they get the mock's "
        "default output",
        f"warning: {path}: key 'nnoe' names no arm of this run (did you mean 'none'?)",
    ]


def test_a_file_that_scripts_every_arm_and_task_says_nothing_even_under_strict(
    tmp_path: Path,
) -> None:
    code, out, err = run(tmp_path, PAIR, "--strict")
    assert out.strip() and code in (0, 1, 4), err
    assert "outputs.yaml" not in err
    arms = {"a": PAIR["candidate"], "none": PAIR["baseline"]}
    code, out, err = run(tmp_path, arms, *ARMS, "--strict")
    assert out.strip(), err
    assert "outputs.yaml" not in err


def test_a_no_baseline_run_is_not_told_of_the_files_baseline(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, PAIR, "--no-baseline", "--strict")
    assert out.strip(), err


@pytest.mark.parametrize(
    ("outputs", "arms", "lines"),
    [
        ({}, ["candidate", "baseline"], ["2 of 2 tasks have no output (t1, t2): every arm gets"]),
        (PAIR, ["candidate", "baseline"], []),
        (PAIR, ["candidate"], []),  # --no-baseline: the file's baseline is not a stray key
        ({"candidate": {"t1": "x"}}, None, ["arm 'baseline' has no key", "arm 'candidate': 1 of"]),
        ({"x": {"t1": "a", "t2": "b"}, "y": {"t1": "a"}}, None, ["arm 'y': 1 of 2 tasks"]),
        (
            {"installed": {"t1": "a", "t2": "b"}},
            ["candidate", "baseline"],
            [
                "arms 'candidate', 'baseline' have no key: their 2 tasks",
                "key 'installed' names no arm of this run (its arms: candidate, baseline)",
            ],
        ),
    ],
)
def test_coverage_of_a_file(
    outputs: dict[str, Any], arms: list[str] | None, lines: list[str]
) -> None:
    found = coverage(outputs, ["t1", "t2"], arms).lines()
    assert len(found) == len(lines), found
    for line, start in zip(found, lines, strict=True):
        assert line.startswith(start), found


# -- validate --mock-outputs -------------------------------------------------------------------


def test_validate_warns_of_what_the_file_leaves_unscripted(tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    outputs = write_outputs(tmp_path / "o.yaml", {"candidate": {"t1": "alpha"}})
    code, out, err = run_cli("validate", str(suite), "--mock-outputs", str(outputs))
    assert code == 0 and out.strip() == f"ok: {suite}"
    assert err.splitlines() == [
        f"warning: {outputs}: arm 'baseline' has no key: its 2 tasks get the mock's default "
        f"output (suite {suite})",
        f"warning: {outputs}: arm 'candidate': 1 of 2 tasks have no output (t2): they get the "
        f"mock's default output (suite {suite})",
    ]
    code, out, err = run_cli("validate", str(suite), "--mock-outputs", str(outputs), "--strict")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 2 and err.startswith(f"{outputs}: arm 'baseline' has no key")


def test_validate_takes_an_arms_file_for_the_arms_it_names(tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    full = write_outputs(tmp_path / "full.yaml", {"a": PAIR["candidate"], "none": {"t1": "x"}})
    code, out, err = run_cli("validate", str(suite), "--mock-outputs", str(full))
    assert code == 0 and err == (
        f"warning: {full}: arm 'none': 1 of 2 tasks have no output (t2): they get the mock's "
        f"default output (suite {suite})\n"
    )


def test_validate_of_the_bundled_demos_finds_nothing_unscripted() -> None:
    for suite, outputs in [
        ("demo", "mock_outputs.yaml"),
        ("demo-agent", "mock_outputs.yaml"),
        ("demo-agent", "mock_arms.yaml"),
        ("demo-triggers", "mock_outputs.yaml"),  # unscripted queries: not triggered, by design
    ]:
        folder = REPO / "task_suites" / suite
        code, _, err = run_cli(
            "validate", str(folder), "--mock-outputs", str(folder / outputs), "--strict"
        )
        assert code == 0, err
