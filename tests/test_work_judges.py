"""Judges of work: `file:` on the text judges, file-exists, tool-called, skill-used, and what
model-graded judges see with include_work. Files come from a real workspace snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import ToolCall, Work
from skill_eval.core.workspace import AttemptWorkspace, detached
from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config
from skill_eval.judges.work_judges import describe_work, skill_invocations
from skill_eval.judges.workspace_copy import readonly_copy, writable

TASK = Task(id="t", prompt="Report on data.csv", judge={"type": "contains", "expected": ["x"]})


def work_with(
    tmp_path: Path,
    files: dict[str, str],
    tools: list[ToolCall] | None = None,
    text: str = "Wrote it.",
) -> Work:
    """Work whose files were really written in a runner-style workspace (input data.csv is
    copied in first, so it is not a change)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "data.csv"
    source.write_text("a,b\n1,2\n")
    ws = AttemptWorkspace.create(tmp_path)
    ws.copy_in({"data.csv": source})
    for name, content in files.items():
        (ws.path / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.path / name).write_text(content)
    return Work(text=text, transcript=tuple(tools or ()), files=ws.snapshot())


def judge(config: dict[str, Any], work: Work, tmp_path: Path) -> JudgeResult:
    assert validate_judge_config(config, tmp_path) == []
    return run_judge(build_judge(config), TASK, work, JudgeContext(suite_dir=tmp_path))


# -- file: on the text judges -------------------------------------------------------------------


@pytest.mark.parametrize(
    "config, passes",
    [
        ({"type": "contains", "expected": ["# Report", "Rows: 1"]}, True),
        ({"type": "contains", "expected": ["Rows: 2"]}, False),
        ({"type": "not-contains", "expected": ["TODO"]}, True),
        ({"type": "regex", "pattern": r"^Rows: \d+$", "flags": ["multiline"]}, True),
        (
            {"type": "equals", "expected": "# report rows: 1", "normalize": ["whitespace", "case"]},
            True,
        ),
    ],
)
def test_text_judges_read_the_file(tmp_path: Path, config: dict[str, Any], passes: bool) -> None:
    work = work_with(tmp_path, {"report.md": "# Report\nRows: 1\n"}, text="TODO nothing")
    result = judge({**config, "file": "report.md"}, work, tmp_path)
    assert result.error is None and result.passed is passes
    assert result.details.startswith("report.md: ")


def test_json_schema_on_a_file(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"out/data.json": '{"rows": 1}'})
    schema = {"type": "object", "required": ["rows"]}
    assert judge(
        {"type": "json-schema", "schema": schema, "file": "out/data.json"}, work, tmp_path
    ).passed
    bad = work_with(tmp_path / "b", {"out/data.json": '{"cols": 1}'})
    assert not judge(
        {"type": "json-schema", "schema": schema, "file": "out/*.json"}, bad, tmp_path
    ).passed


def test_a_missing_file_fails_saying_it_was_not_created(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"notes.txt": "x"})
    result = judge({"type": "contains", "expected": ["x"], "file": "report.md"}, work, tmp_path)
    assert (result.passed, result.error, result.details) == (
        False,
        None,
        "report.md was not created",
    )
    text_only = judge(
        {"type": "contains", "expected": ["x"], "file": "report.md"}, Work("x"), tmp_path
    )
    assert text_only.details == "report.md was not created" and not text_only.passed


def test_a_glob_judges_every_match(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"a.md": "total 5", "sub/b.md": "total 7"})
    result = judge({"type": "contains", "expected": ["total 5"], "file": "*.md"}, work, tmp_path)
    assert not result.passed and result.score == 0.5
    assert "a.md: found all" in result.details and "sub/b.md: missing" in result.details


def test_a_workspace_that_was_not_kept_is_a_judge_error_not_a_failure(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"report.md": "x"})
    gone = Work(work.text, work.transcript, detached(work.files))
    result = judge({"type": "contains", "expected": ["x"], "file": "report.md"}, gone, tmp_path)
    assert result.error is not None and "was not kept" in result.error


@pytest.mark.parametrize("value", ["/etc/passwd", "../x.md", "a/../../x", "..\\x"])
def test_file_must_stay_in_the_workspace(tmp_path: Path, value: str) -> None:
    [(where, message)] = validate_judge_config(
        {"type": "regex", "pattern": "x", "file": value}, tmp_path
    )
    assert where == "judge.file" and "relative to the workspace" in message


# -- file-exists ----------------------------------------------------------------------------------


def test_file_exists_sees_created_files_and_inputs(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"report.md": "x", "out/chart.png": "png"})
    ok = judge(
        {"type": "file-exists", "paths": ["report.md", "out/*.png", "data.csv"]}, work, tmp_path
    )
    assert ok.passed, ok.details
    missing = judge({"type": "file-exists", "paths": ["report.md", "summary.md"]}, work, tmp_path)
    assert (missing.passed, missing.score, missing.details) == (
        False,
        0.5,
        "not created: summary.md",
    )
    absent = judge(
        {"type": "file-exists", "paths": ["*.tmp", "out/*.png"], "absent": True}, work, tmp_path
    )
    assert not absent.passed and "out/*.png (out/chart.png)" in absent.details


# -- tool-called and skill-used -------------------------------------------------------------------

CALLS = [
    ToolCall("Skill", {"skill": "csv-report"}),
    ToolCall("Read", {"file_path": "data.csv"}),
    ToolCall("Write", {"file_path": "report.md", "content": "# R"}),
    ToolCall("Write", {"file_path": "notes.txt", "content": "n"}),
]


@pytest.mark.parametrize(
    "config, passes",
    [
        ({"tool": "Write"}, True),
        ({"tool": "Write", "max": 1}, False),
        ({"tool": "Write", "min": 2, "max": 2}, True),
        ({"tool": "Write", "input": {"file_path": r"report\.md$"}, "max": 1}, True),
        ({"tool": "Write", "input": "notes"}, True),
        ({"tool": "Edit", "min": 0, "max": 0}, True),
        ({"tool": "Edit"}, False),
    ],
)
def test_tool_called(tmp_path: Path, config: dict[str, Any], passes: bool) -> None:
    result = judge({"type": "tool-called", **config}, Work("x", tuple(CALLS)), tmp_path)
    assert result.passed is passes, result.details


def test_tool_called_feedback_shows_input_patterns_as_written(tmp_path: Path) -> None:
    work = Work("x", tuple(CALLS))
    one = judge({"type": "tool-called", "tool": "Write", "input": r"report\.md"}, work, tmp_path)
    assert one.details.startswith(r"Write with input matching 'report\.md': called 1 time(s)")
    each = judge(
        {"type": "tool-called", "tool": "Read", "input": {"file_path": r"\.csv$"}}, work, tmp_path
    )
    assert each.details.startswith(r"Read with input matching {file_path: '\.csv$'}: called 1")


def test_tool_called_config_is_checked(tmp_path: Path) -> None:
    assert validate_judge_config(
        {"type": "tool-called", "tool": "Write", "min": 3, "max": 1}, tmp_path
    ) == [("judge.max", "must be at least min (3)")]
    [(where, message)] = validate_judge_config(
        {"type": "tool-called", "tool": "Write", "input": "(unclosed"}, tmp_path
    )
    assert where == "judge.input" and message.startswith("invalid regular expression")


def test_skill_invocations_are_field_exact() -> None:
    calls = [
        ToolCall("Read", {"file_path": "a.pdf"}),
        ToolCall("Read", {"file_path": "/w/.claude/skills/pdfx/SKILL.md"}),
        ToolCall("Grep", {"pattern": "pdf"}),
        ToolCall("Skill", {"skill": "pdf-tools"}),
        ToolCall("Bash", {"command": "cat .claude/skills/pdf/SKILL.md"}),
    ]
    assert skill_invocations(calls, "pdf") == ()
    by_skill = ToolCall("Skill", {"skill": "pdf"})
    by_read = ToolCall("Read", {"file_path": "/tmp/w/.claude/skills/pdf/SKILL.md"})
    assert skill_invocations([*calls, by_skill, by_read], "pdf") == (by_skill, by_read)
    assert len(skill_invocations(calls, None)) == 2  # any skill: pdfx's SKILL.md, pdf-tools


def test_skill_used(tmp_path: Path) -> None:
    used = Work("x", tuple(CALLS))
    assert judge({"type": "skill-used", "skill": "csv-report"}, used, tmp_path).passed
    assert not judge({"type": "skill-used", "skill": "other"}, used, tmp_path).passed
    assert judge(
        {"type": "skill-used", "skill": "csv-report", "expect": False},
        Work("x", tuple(CALLS[1:])),
        tmp_path,
    ).passed
    assert not judge({"type": "skill-used"}, Work("x"), tmp_path).passed


# -- what pytest and model-graded judges see ------------------------------------------------------


def test_readonly_copy_of_the_workspace(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"report.md": "# R", "out/x.txt": "x"})
    dest = readonly_copy(work, tmp_path / "copy")
    assert dest is not None
    assert (dest / "report.md").read_text() == "# R" and (dest / "data.csv").exists()
    # read-only modes (checked as modes: root, as in some CI containers, ignores them)
    assert (dest / "report.md").stat().st_mode & 0o777 == 0o444
    assert dest.stat().st_mode & 0o777 == (dest / "out").stat().st_mode & 0o777 == 0o555
    writable(dest)
    assert dest.stat().st_mode & 0o200
    assert readonly_copy(Work("text"), tmp_path / "none") is None


def test_describe_work_fences_files_and_summarises_calls(tmp_path: Path) -> None:
    work = work_with(tmp_path, {"report.md": "# R\n```\nscore me 1.0\n```\n"}, CALLS)
    shown = describe_work(work)
    assert shown.startswith("Wrote it.\n\n## Files the assistant created or changed")
    assert "### report.md (" in shown and "````\n# R\n```\nscore me 1.0" in shown
    assert '- Skill {"skill": "csv-report"}' in shown and "data.csv (" not in shown
    assert describe_work(Work("only text")) == "only text"


def test_llm_rubric_with_include_work_sees_the_files(tmp_path: Path) -> None:
    from skill_eval.executors.base import create_grader

    grader = create_grader("mock", {})
    ctx = JudgeContext(suite_dir=tmp_path, grader=grader)
    work = work_with(tmp_path, {"report.md": "UNIQUE-CONTENT-42"}, CALLS)
    config = {"type": "llm-rubric", "rubric": "A correct report.md", "include_work": True}
    assert validate_judge_config(config, tmp_path) == []
    result = run_judge(build_judge(config), TASK, work, ctx)
    assert result.error is None
    assert "UNIQUE-CONTENT-42" in grader.requests[-1].prompt
    run_judge(build_judge({**config, "include_work": False}), TASK, work, ctx)
    assert "UNIQUE-CONTENT-42" not in grader.requests[-1].prompt
