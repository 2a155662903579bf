"""Issue 17: output JSON nested deep enough to exhaust the recursive schema validator is a
failure of that attempt (the output caused it), never an error that drops the task from both
arms."""

from __future__ import annotations

from pathlib import Path

from skill_eval.core.model import Task
from skill_eval.core.work import Work
from skill_eval.judges import JudgeContext, build_judge, run_judge
from tests.helpers import read_json
from tests.test_run_e2e import standalone

TREE = {
    "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}},
    "$ref": "#/$defs/node",
}
JUDGE = {"type": "json-schema", "schema": TREE}


def nested(depth: int) -> str:
    return '{"child": ' * depth + "{}" + "}" * depth


def test_json_nested_400_deep_against_a_recursive_schema_is_a_failure() -> None:
    task = Task(id="t", prompt="p", judge=JUDGE)
    result = run_judge(
        build_judge(JUDGE), task, Work(nested(400)), JudgeContext(suite_dir=Path("/x"))
    )
    assert (result.passed, result.error) == (False, None), result.error
    assert "nested too deeply" in result.details
    shallow = run_judge(
        build_judge(JUDGE), task, Work(nested(20)), JudgeContext(suite_dir=Path("/x"))
    )
    assert shallow.passed


def test_a_deep_candidate_output_fails_its_task_in_the_run(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "p", "judge": JUDGE} for i in range(2)]
    outputs = {
        "candidate": {"t0": nested(400), "t1": nested(3)},
        "baseline": {"t0": nested(3), "t1": nested(3)},
    }
    code, out, err = standalone(tmp_path, outputs, "--max-retries", "0", tasks=tasks)
    data = read_json(out.strip())
    assert data["evaluation"]["execution_pass_rate"] == 0.5
    assert data["evaluation"]["verdict"] == "fail" and code == 1
