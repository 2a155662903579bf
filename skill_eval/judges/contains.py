"""`contains`: every expected string must appear (case-insensitive); score = found / expected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import JudgeResult, Task
from ..work import Work
from .base import JudgeContext, JudgeSpec

# `file:` on a text judge: a workspace path or glob (relative, never through `..`).
FILE_PATH = {
    "type": "string", "minLength": 1, "pattern": r"^(?![/\\])(?!.*(^|[/\\])\.\.([/\\]|$)).+$",
    "errorMessage": "must be a path or glob relative to the workspace (no leading /, no '..')"}
NON_EMPTY_STRINGS = {
    "type": "array",
    "minItems": 1,
    "items": {"type": "string", "minLength": 1},
    "errorMessage": "must be a non-empty list of strings",
}


def contains_score(output: str, expected: Sequence[str]) -> tuple[float, list[str]]:
    """Fraction of `expected` found in `output` (case-insensitive), and the missing ones."""
    haystack = output.casefold()
    missing = [e for e in expected if e.casefold() not in haystack]
    return (len(expected) - len(missing)) / len(expected), missing


class ContainsJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.expected = list(config["expected"])
        self.file = config.get("file")  # judge this workspace file instead of the output

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        from .work_judges import judge_file_or_text
        return judge_file_or_text(self.file, work, self.judge_text)

    def judge_text(self, output: str) -> JudgeResult:
        score, missing = contains_score(output, self.expected)
        if missing:
            details = "missing: " + ", ".join(repr(m) for m in missing)
        else:
            details = f"found all {len(self.expected)} expected strings"
        return JudgeResult(passed=not missing, score=score, details=details)


CONTAINS_SPEC = JudgeSpec(
    type="contains",
    summary="every expected string appears (case-insensitive)",
    schema={
        "type": "object",
        "required": ["type", "expected"],
        "properties": {"type": {"const": "contains"}, "expected": NON_EMPTY_STRINGS,
                       "file": FILE_PATH},
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    },
    build=ContainsJudge,
)
