"""`not-regex` (an eval set's `must_not_have`) and `scope: work` on the text judges (the reply
and every file the attempt created or changed, as one text), against work really written in a
runner-style workspace: the task's input (data.csv, copied in) is not a change and is never
read as the agent's work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.core.workspace import AttemptWorkspace
from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config

TASK = Task(id="t", prompt="Convert data.csv", judge={"type": "contains", "expected": ["x"]})


def work_with(tmp_path: Path, files: dict[str, str], text: str = "Validation Results") -> Work:
    source = tmp_path / "data.csv"
    source.write_text("initial,wait\n1,2\n")  # words the must_not_have below forbid
    ws = AttemptWorkspace.create(tmp_path)
    ws.copy_in({"data.csv": source})
    for name, content in files.items():
        (ws.path / name).write_text(content)
    return Work(text=text, files=ws.snapshot())


def judge(config: dict[str, Any], work: Work, tmp_path: Path) -> JudgeResult:
    assert validate_judge_config(config, tmp_path) == []
    return run_judge(build_judge(config), TASK, work, JudgeContext(suite_dir=tmp_path))


@pytest.mark.parametrize(
    "config, files, passes",
    [
        ({"type": "regex", "pattern": r"module\s+cnt\b"}, {"cnt.sv": "module cnt;"}, False),
        ({"type": "regex", "pattern": r"module\s+cnt\b", "scope": "work"},
         {"cnt.sv": "module cnt;"}, True),
        ({"type": "regex", "pattern": "Validation Results", "scope": "work"}, {}, True),
        ({"type": "not-regex", "pattern": r"\binitial\b", "scope": "work"},
         {"cnt.sv": "module cnt;"}, True),  # the input file holds it: not the agent's work
        ({"type": "not-regex", "pattern": r"\binitial\b", "scope": "work"},
         {"cnt.sv": "initial begin end"}, False),
        ({"type": "not-regex", "pattern": r"\binitial\b"}, {"cnt.sv": "initial"}, True),
        ({"type": "contains", "expected": ["always_ff"], "scope": "work"},
         {"cnt.sv": "always_ff @(posedge clk)"}, True),
        ({"type": "not-contains", "expected": ["TODO"], "scope": "work"},
         {"notes.md": "TODO: later"}, False),
    ],
)  # fmt: skip
def test_scope_work_reads_the_reply_and_the_files_written(
    tmp_path: Path, config: dict[str, Any], files: dict[str, str], passes: bool
) -> None:
    result = judge(config, work_with(tmp_path, files), tmp_path)
    assert result.passed is passes, result.details


def test_not_regex_says_what_it_found_and_a_search_that_gives_up_fails(tmp_path: Path) -> None:
    found = judge({"type": "not-regex", "pattern": "Valid\\w+"}, Work(text="Validation"), tmp_path)
    assert (
        not found.passed and found.details == "forbidden pattern matched 'Validation' at offset 0"
    )
    absent = judge({"type": "not-regex", "pattern": "zzz"}, Work(text="Validation"), tmp_path)
    assert absent.passed and absent.details == "pattern 'zzz' not found, as required"
    slow = {"type": "not-regex", "pattern": "(a|aa)+$", "timeout": 0.05}
    gave_up = judge(slow, Work(text="a" * 60 + "b"), tmp_path)
    assert not gave_up.passed and gave_up.data.get("timed_out") is True


def test_scope_is_checked_like_any_field(tmp_path: Path) -> None:
    problems = validate_judge_config({"type": "regex", "pattern": "a", "scope": "all"}, tmp_path)
    assert problems == [
        (
            "judge.scope",
            "must be output (the reply, the default) or work (the reply and every file the "
            "attempt created or changed)",
        )
    ]
