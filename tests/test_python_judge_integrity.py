"""Issue 17, python judges: a judge that raises SystemExit is a judge error (the run goes on and
writes its artifact, never a silent exit 0), KeyboardInterrupt still stops the run, and `passed`
must be a bool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.judges import JudgeContext, build_judge, run_judge
from tests.helpers import read_json, run_script, write_outputs, write_skill, write_suite
from tests.test_run_e2e import standalone

EXITS = {"type": "python", "callable": "tests.judge_helpers:exits"}


def judge(config: dict[str, Any], output: str) -> JudgeResult:
    return run_judge(
        build_judge(config),
        Task(id="t", prompt="p", judge=config),
        Work(output),
        JudgeContext(suite_dir=Path("/nonexistent")),
    )


def test_a_judge_raising_system_exit_is_a_judge_error() -> None:
    result = judge(EXITS, "EXIT")
    assert result.error and "SystemExit" in result.error and not result.passed


class Quitter:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        raise self.exc


def test_run_judge_catches_base_exceptions_but_not_ctrl_c() -> None:
    task, ctx = Task(id="t", prompt="p", judge={}), JudgeContext(suite_dir=Path("/x"))
    result = run_judge(Quitter(SystemExit(0)), task, Work("x"), ctx)
    assert result.error and "SystemExit" in result.error
    with pytest.raises(KeyboardInterrupt):
        run_judge(Quitter(KeyboardInterrupt()), task, Work("x"), ctx)


class NotABool:
    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        return JudgeResult(passed="false", score=1.0)  # type: ignore[arg-type]


def test_passed_must_be_a_bool() -> None:
    result = judge({"type": "python", "callable": "tests.judge_helpers:says_false"}, "x")
    assert not result.passed and result.error and "'passed' must be true or false" in result.error
    ctx = JudgeContext(suite_dir=Path("/x"))
    result = run_judge(NotABool(), Task(id="t", prompt="p", judge={}), Work("x"), ctx)
    assert not result.passed and result.error and "passed" in result.error


def test_a_system_exit_in_a_judge_never_ends_the_cli_run_with_0(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "p", "judge": EXITS} for i in range(3)]
    outputs = {
        "candidate": {"t0": "EXIT", "t1": "alpha", "t2": "alpha"},
        "baseline": {"t0": "alpha", "t1": "alpha", "t2": "alpha"},
    }
    code, out, err = standalone(tmp_path, outputs, "--max-retries", "0", tasks=tasks)
    assert out.strip(), f"no artifact (exit {code}): {err}"
    data = read_json(out.strip())
    assert data["evaluation"]["verdict"] != "pass"
    assert code != 0
    assert any("SystemExit" in str(e.get("error")) for e in data["errors"])


def test_the_compatibility_script_writes_an_artifact_too(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [{"id": "t0", "prompt": "p", "judge": EXITS}])
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(
        tmp_path / "o.yaml", {"candidate": {"t0": "EXIT"}, "baseline": {"t0": "alpha"}}
    )
    done = run_script(
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--max-retries",
        "0",
        "--state-root",
        str(tmp_path / "state"),
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.stdout.strip(), done.stderr
    data = read_json(done.stdout.strip())
    assert data["evaluation"]["verdict"] != "pass"
