"""Checks that stop a doomed run before it spends (issue 26): `run` makes the checks
`validate` makes (a fixture that does not compile is exit 2 at `file:line`, no attempt run),
and a `skill-used` judge that cannot see the skill used in this run's configuration is a
warning naming the task, before the run and in the artifact."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.core.model import Task
from skill_eval.inputs.run_checks import skill_use_warnings
from tests.helpers import (
    REPO,
    read_json,
    run_cli,
    run_script,
    write_outputs,
    write_skill,
    write_suite,
)


def _broken_fixture_suite(tmp_path: Path) -> Path:
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True)
    (suite_dir / "fixtures" / "test_x.py").write_text("import os\n\ndef test_x(:\n    pass\n")
    return write_suite(
        suite_dir,
        [
            {
                "id": "t1",
                "prompt": "p",
                "judge": {"type": "pytest", "test_file": "fixtures/test_x.py"},
            },
            {"id": "t2", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}},
        ],
    )


def test_a_fixture_that_does_not_compile_stops_the_run_at_its_line(tmp_path: Path) -> None:
    suite = _broken_fixture_suite(tmp_path)
    outputs = write_outputs(tmp_path / "o.yaml", {"t1": "anything", "t2": "x"})
    state = tmp_path / "state"
    code, out, err = run_cli(
        "run",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--state-root",
        str(state),
        "-q",
    )
    assert code == 2 and out == ""
    assert err.startswith(f"Error: {suite.parent / 'fixtures' / 'test_x.py'}:3: SyntaxError: ")
    assert "Traceback" not in err
    assert not (state / "runs").exists() and not (state / "evaluations").exists()
    # the same line as `validate` gives
    code, _out, validate_err = run_cli("validate", str(suite))
    assert code == 2 and err.removeprefix("Error: ") in validate_err


def test_the_compatibility_script_calls_it_a_setup_error(tmp_path: Path) -> None:
    suite = _broken_fixture_suite(tmp_path)
    proc = run_script(
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--mock",
        "--state-root",
        str(tmp_path / "state"),
    )
    assert proc.returncode == 1 and proc.stdout == ""  # exit 1: an invalid suite
    assert f"{suite.parent / 'fixtures' / 'test_x.py'}:3: SyntaxError: " in proc.stderr


def test_a_python_judge_module_that_does_not_compile_is_named_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "badjudge.py").write_text("def judge(output, task)\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mod"))
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t1", "prompt": "p", "judge": {"type": "python", "callable": "badjudge:judge"}}],
    )
    code, _out, err = run_cli(
        "run",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--mock",
        "--state-root",
        str(tmp_path / "state"),
        "-q",
    )
    assert code == 2 and f"{tmp_path / 'mod' / 'badjudge.py'}:1: SyntaxError" in err


def _skill_used_suite(tmp_path: Path) -> Path:
    return write_suite(
        tmp_path / "suite",
        [
            {"id": "plain", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}},
            {
                "id": "uses",
                "prompt": "p",
                "allowed_tools": ["Skill"],
                "judge": {
                    "type": "all",
                    "judges": [
                        {"type": "contains", "expected": ["x"]},
                        {
                            "type": "weighted",
                            "judges": [
                                {"weight": 1, "judge": {"type": "skill-used", "skill": "skill"}}
                            ],
                        },
                    ],
                },
            },
        ],
    )


def test_a_skill_used_judge_that_cannot_see_the_skill_is_a_warning(tmp_path: Path) -> None:
    suite = _skill_used_suite(tmp_path)
    outputs = write_outputs(tmp_path / "o.yaml", {"plain": "x", "uses": "x"})
    code, out, err = run_cli(
        "run",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--state-root",
        str(tmp_path / "state"),
        "-q",
        "--skill-mode",
        "prepend",
    )
    assert code in (0, 1, 4), err
    expected = (
        "task 'uses': its skill-used judge cannot see the skill used in this run: "
        "--skill-mode prepend sends SKILL.md as text, not as a skill to invoke (use "
        "--executor claude-cli --skill-mode installed)"
    )
    assert err.startswith(f"warning: {expected}\n")  # before the run, not only in the summary
    assert "task 'plain'" not in err
    assert expected in read_json(out.strip())["warnings"]


def test_installed_mode_and_trigger_suites_draw_no_such_warning(tmp_path: Path) -> None:
    suite = _skill_used_suite(tmp_path)
    code, _out, err = run_cli(
        "run",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--mock",
        "--state-root",
        str(tmp_path / "state"),
        "-q",
        "--skill-mode",
        "installed",
    )
    assert code in (0, 1, 3, 4), err
    assert "skill-used judge" not in err
    demo = REPO / "task_suites" / "demo-triggers"  # implied skill-used judges, system mode
    code, _out, err = run_cli(
        "run",
        "--skill-path",
        str(demo / "skill" / "pdf-tools"),
        "--baseline-skill",
        str(demo / "baseline" / "pdf-tools"),
        "--task-suite",
        str(demo),
        "--mock",
        "--mock-outputs",
        str(demo / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "triggers"),
        "-q",
    )
    assert code in (0, 1, 4), err
    assert "skill-used judge" not in err


@pytest.mark.parametrize(
    ("can_act", "mode", "why"),
    [
        (False, "installed", "the 'anthropic' executor has no tools to invoke a skill with"),
        (True, "system", "--skill-mode system sends SKILL.md as text, not as a skill to invoke"),
        (True, "installed", None),
    ],
)
def test_why_a_skill_used_judge_is_blind(can_act: bool, mode: str, why: str | None) -> None:
    tasks = [
        Task(
            id="t",
            prompt="p",
            judge={"type": "any", "judges": [{"type": "skill-used", "expect": False}]},
        ),
        Task(id="other", prompt="p", judge={"type": "contains", "expected": ["x"]}),
    ]
    warnings = skill_use_warnings(tasks, "anthropic", can_act, mode)
    assert warnings == (
        []
        if why is None
        else [
            f"task 't': its skill-used judge cannot see the skill used in this run: {why} (use "
            "--executor claude-cli --skill-mode installed)"
        ]
    )
