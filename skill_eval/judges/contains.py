"""`contains`: every expected string must appear (case-insensitive unless `case_sensitive:
true`); score = found / expected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.model import JudgeResult
from .base import JudgeSpec
from .work_judges import FILE_PATH, SCOPE, TextOrFile

# `expected`: one string (what people write first) or a list of them
NON_EMPTY_STRINGS = {
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    ],
    "errorMessage": "must be a non-empty string or a non-empty list of strings",
}
# promptfoo's assertions hold their strings in `value`: an unknown key named so is hinted
# to be `expected` (validation.py reads `didYouMean`; JSON Schema ignores it)
VALUE_IS_EXPECTED = {"value": "expected"}
CASE_SENSITIVE = {
    "type": "boolean",
    "errorMessage": "must be true or false (default false: letter case is ignored)",
}


def contains_score(
    output: str, expected: Sequence[str], case_sensitive: bool = False
) -> tuple[float, list[str]]:
    """Fraction of `expected` found in `output`, and the missing ones. Letter case is ignored
    (casefold) unless `case_sensitive`."""
    if case_sensitive:
        missing = [e for e in expected if e not in output]
    else:
        haystack = output.casefold()
        missing = [e for e in expected if e.casefold() not in haystack]
    return (len(expected) - len(missing)) / len(expected), missing


def expected_strings(value: str | Sequence[str]) -> list[str]:
    """`expected` as a list: a single string is a one-item list."""
    return [value] if isinstance(value, str) else list(value)


def case_note(case_sensitive: bool) -> str:
    """What a contains-style judge's details add when letter case counted."""
    return " (case-sensitive)" if case_sensitive else ""


class ContainsJudge(TextOrFile):
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.expected = expected_strings(config["expected"])
        self.case_sensitive = bool(config.get("case_sensitive", False))
        self.file = config.get("file")  # judge this workspace file instead of the output
        self.scope = str(config.get("scope", "output"))

    def judge_text(self, output: str) -> JudgeResult:
        score, missing = contains_score(output, self.expected, self.case_sensitive)
        if missing:
            details = "missing: " + ", ".join(repr(m) for m in missing)
        else:
            details = f"found all {len(self.expected)} expected strings"
        details += case_note(self.case_sensitive)
        return JudgeResult(passed=not missing, score=score, details=details)


CONTAINS_SPEC = JudgeSpec(
    type="contains",
    summary="every expected string appears (case-insensitive unless case_sensitive: true)",
    schema={
        "type": "object",
        "required": ["type", "expected"],
        "properties": {
            "type": {"const": "contains"},
            "expected": NON_EMPTY_STRINGS,
            "file": FILE_PATH,
            "scope": SCOPE,
            "case_sensitive": CASE_SENSITIVE,
        },
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
        "didYouMean": VALUE_IS_EXPECTED,
    },
    build=ContainsJudge,
    deterministic=True,
)
