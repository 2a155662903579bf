"""`contains`: every expected string must appear (case-insensitive); score = found / expected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import JudgeResult
from .base import JudgeSpec
from .work_judges import FILE_PATH, TextOrFile

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


class ContainsJudge(TextOrFile):
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.expected = list(config["expected"])
        self.file = config.get("file")  # judge this workspace file instead of the output

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
