"""`skill-eval show` of an --arm run (references/arms.md): the run directory's journal and the
artifact both list every arm's attempts under the arm's name, and `--task ID` shows every arm's
output and judgement, in the order the arms were given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import contains_task, run_cli, write_outputs, write_skill, write_suite

# given in this order; none is the reference; `unused` has no scripted outputs
ARMS = ("sys=system", "pre=prepend", "none=none", "unused=installed")
OUTPUTS = {  # each arm says its own word, so a line names the arm it came from
    "sys": {"t1": "alpha from sys", "t2": "beta from sys"},
    "pre": {"t1": "alpha from pre", "t2": "nothing from pre"},
    "none": {"t1": "nothing from none", "t2": "nothing from none"},
}


@pytest.fixture(scope="module")
def arms_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("show-arms")
    suite = write_suite(tmp / "suite", [contains_task("t1", "alpha"), contains_task("t2", "beta")])
    code, out, err = run_cli(
        "run",
        "--mock",
        "-q",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp / "skill")),
        "--mock-outputs",
        str(write_outputs(tmp / "outputs.yaml", OUTPUTS)),
        "--state-root",
        str(tmp / "state"),
        "--output",
        str(tmp / "artifact.json"),
        *[arg for arm in ARMS for arg in ("--arm", arm)],
    )
    assert code in (0, 1, 4), err
    (journal,) = (tmp / "state").rglob("attempts.jsonl")
    return {"run_dir": journal.parent, "artifact": Path(out.strip())}


def tree(*args: str) -> list[str]:
    code, out, err = run_cli("show", *args, "--plain")
    assert code == 0, err
    return out.splitlines()


def test_show_a_run_directory_lists_every_arms_attempts(arms_run: dict[str, Any]) -> None:
    lines = tree(str(arms_run["run_dir"]))
    assert lines[0].endswith("arms sys, pre, none (reference), unused")
    t1 = lines[lines.index("t1") + 1 : lines.index("t2")]
    assert [line.strip() for line in t1[::2]] == ["sys", "pre", "none", "unused"]
    assert t1[1].strip().startswith("#0 passed") and "✓ contains" in t1[1]  # sys said alpha
    assert t1[5].strip().startswith("#0 failed") and "✗ contains" in t1[5]  # none did not
    t2 = lines[lines.index("t2") + 1 :]
    assert [line.split()[1] for line in t2[1::2]] == ["passed", "failed", "failed", "failed"]


def test_show_an_artifact_lists_the_same_arms_as_its_run_directory(
    arms_run: dict[str, Any],
) -> None:
    from_run = tree(str(arms_run["run_dir"]))
    from_artifact = tree(str(arms_run["artifact"]))
    assert from_artifact[1:] == from_run[1:]
    assert "verdict" in from_artifact[0] and "arms sys, pre, none (reference)" in from_artifact[0]


@pytest.mark.parametrize("source", ["run_dir", "artifact"])
def test_show_one_task_of_an_arms_run_shows_every_arm(
    arms_run: dict[str, Any], source: str
) -> None:
    out = "\n".join(tree(str(arms_run[source]), "--task", "t1"))
    headings = [line for line in out.splitlines() if line.startswith("== ") and "output" in line]
    assert headings == [
        "== sys #0: passed, score 1.00 - output",
        "== pre #0: passed, score 1.00 - output",
        "== none #0: failed, score 0.00 - output",
        "== unused #0: failed, score 0.00 - output",
    ]
    for text in ("alpha from sys", "alpha from pre", "nothing from none"):
        assert text in out
    assert out.count("Mock execution output: no model was called.") == 1  # the unused arm


def test_an_unknown_task_of_an_arms_run_names_its_tasks(arms_run: dict[str, Any]) -> None:
    code, _, err = run_cli("show", str(arms_run["run_dir"]), "--task", "t9")
    assert code == 2 and "--task t9: no such task" in err and "(tasks: t1, t2)" in err
