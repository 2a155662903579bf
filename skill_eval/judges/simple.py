"""Deterministic text judges with no process and no model: `not-contains`, `regex`,
`not-regex` and `equals` (the structured-output judges are in json_output.py). Pure functions
at the core, a thin Judge class around each."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import regex

from ..core.model import JudgeResult
from .base import JudgeSpec
from .contains import (
    CASE_SENSITIVE,
    NON_EMPTY_STRINGS,
    VALUE_IS_EXPECTED,
    case_note,
    contains_score,
    expected_strings,
)
from .work_judges import FILE_PATH, SCOPE, TextOrFile, as_written

X_KEYS: dict[str, Any] = {"^x-": {}}
REGEX_FLAGS = {"ignorecase": regex.IGNORECASE, "multiline": regex.MULTILINE, "dotall": regex.DOTALL}
DEFAULT_REGEX_TIMEOUT = 5.0


def _schema(
    judge_type: str, required: list[str], props: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", *required],
        "properties": {"type": {"const": judge_type}, **props},
        "patternProperties": X_KEYS,
        "additionalProperties": False,
        **extra,
    }


def _enum_list(values: Mapping[str, Any] | list[str]) -> dict[str, Any]:
    names = list(values)
    message = f"must be a list of: {', '.join(names)}"
    return {
        "type": "array",
        "uniqueItems": True,
        "errorMessage": message,
        "items": {"enum": names, "errorMessage": f"must be one of: {', '.join(names)}"},
    }


def _binary(passed: bool, details: str, **data: Any) -> JudgeResult:
    return JudgeResult(passed=passed, score=1.0 if passed else 0.0, details=details, data=data)


# --- not-contains ---------------------------------------------------------------------------


class NotContainsJudge(TextOrFile):
    """None of `expected` may appear (case-insensitive unless `case_sensitive`); score =
    fraction absent."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.expected = expected_strings(config["expected"])
        self.case_sensitive = bool(config.get("case_sensitive", False))
        self.scope = str(config.get("scope", "output"))
        self.file = config.get("file")  # judge this workspace file instead

    def judge_text(self, output: str) -> JudgeResult:
        found_fraction, missing = contains_score(output, self.expected, self.case_sensitive)
        found = [e for e in self.expected if e not in missing]
        if found:
            details = "found forbidden: " + ", ".join(repr(f) for f in found)
        else:
            details = f"none of the {len(self.expected)} forbidden strings appear"
        details += case_note(self.case_sensitive)
        return JudgeResult(passed=not found, score=1.0 - found_fraction, details=details)


# --- regex ----------------------------------------------------------------------------------


def compile_pattern(config: Mapping[str, Any]) -> Any:
    """The compiled `pattern`: Python `re` syntax and flags, run by the `regex` module in its
    re-compatible mode (VERSION0), which can stop a search after a timeout."""
    flags = regex.VERSION0
    for name in config.get("flags") or []:
        flags |= REGEX_FLAGS[name]
    return regex.compile(config["pattern"], flags)


def _check_regex(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    try:
        compile_pattern(config)
    except (regex.error, ValueError, OverflowError) as exc:
        return [("pattern", f"invalid regular expression: {exc}")]
    return []


class RegexJudge(TextOrFile):
    """Passes when `pattern` is found anywhere in the output (a search, not a full match).

    The output is untrusted and a pattern with nested quantifiers can take exponential time
    on it, so the search runs with the GIL released (other threads go on) and gives up after
    `timeout` seconds. Giving up is a failure, not a judge error: the pattern was not shown
    to match, and judging the same output again would only time out again.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.compiled = compile_pattern(config)
        self.timeout = float(config.get("timeout", DEFAULT_REGEX_TIMEOUT))
        self.scope = str(config.get("scope", "output"))
        self.file = config.get("file")  # judge this workspace file instead

    def judge_text(self, output: str) -> JudgeResult:
        try:
            match = self.compiled.search(output, timeout=self.timeout, concurrent=True)
        except TimeoutError:
            return _binary(
                False,
                f"pattern {as_written(self.compiled.pattern)} gave up after "
                f"{self.timeout:g}s: this output makes it backtrack "
                "catastrophically (simplify the pattern, or raise `timeout`)",
                timed_out=True,
            )
        if match is None:
            return _binary(False, f"pattern {as_written(self.compiled.pattern)} not found")
        text = match.group(0)
        shown = text if len(text) <= 80 else text[:77] + "..."
        return _binary(True, f"pattern matched {shown!r} at offset {match.start()}")


class NotRegexJudge(RegexJudge):
    """Passes when `pattern` is found nowhere in the output: a `regex` judge turned round (an
    eval set's `must_not_have`). A search that gives up after `timeout` fails: the pattern was
    not shown to be absent."""

    def judge_text(self, output: str) -> JudgeResult:
        found = super().judge_text(output)
        if found.data.get("timed_out"):
            return found
        if found.passed:
            return _binary(
                False, found.details.replace("pattern matched", "forbidden pattern matched")
            )
        return _binary(True, f"pattern {as_written(self.compiled.pattern)} not found, as required")


# --- equals ---------------------------------------------------------------------------------


def normalize(text: str, modes: list[str]) -> str:
    """Apply `whitespace` (collapse runs, strip ends) and `case` (casefold) normalisation."""
    if "whitespace" in modes:
        text = " ".join(text.split())
    if "case" in modes:
        text = text.casefold()
    return text


class EqualsJudge(TextOrFile):
    """The output equals `expected` exactly, after the optional `normalize` steps."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.modes = list(config.get("normalize") or [])
        self.expected = str(config["expected"])
        self.scope = str(config.get("scope", "output"))
        self.file = config.get("file")  # judge this workspace file instead

    def judge_text(self, output: str) -> JudgeResult:
        got, want = normalize(output, self.modes), normalize(self.expected, self.modes)
        if got == want:
            return _binary(True, "output equals the expected text")
        at = next(
            (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
            min(len(got), len(want)),
        )
        return _binary(
            False,
            f"differs at character {at}: expected {want[at : at + 40]!r}, "
            f"got {got[at : at + 40]!r} (lengths {len(want)} vs {len(got)})",
        )


# --- reading model output: fenced blocks, strict JSON ---------------------------------------

NOT_CONTAINS_SPEC = JudgeSpec(
    type="not-contains",
    summary="none of the expected strings appears (case-insensitive unless case_sensitive: true)",
    schema=_schema(
        "not-contains",
        ["expected"],
        {
            "expected": NON_EMPTY_STRINGS,
            "file": FILE_PATH,
            "scope": SCOPE,
            "case_sensitive": CASE_SENSITIVE,
        },
        didYouMean=VALUE_IS_EXPECTED,
    ),
    build=NotContainsJudge,
    deterministic=True,
)

REGEX_SPEC = JudgeSpec(
    type="regex",
    summary="a regular expression is found in the output",
    schema=_schema(
        "regex",
        ["pattern"],
        {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "errorMessage": "must be a non-empty regular expression",
            },
            "flags": _enum_list(REGEX_FLAGS),
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "errorMessage": "must be a number of seconds > 0",
            },
            "file": FILE_PATH,
            "scope": SCOPE,
        },
        didYouMean={"value": "pattern"},
    ),
    build=RegexJudge,
    deterministic=True,
    check=_check_regex,
)

NOT_REGEX_SPEC = JudgeSpec(
    type="not-regex",
    summary="a regular expression is found nowhere in the output",
    schema={
        **REGEX_SPEC.schema,
        "properties": {**REGEX_SPEC.schema["properties"], "type": {"const": "not-regex"}},
    },
    build=NotRegexJudge,
    deterministic=True,
    check=_check_regex,
)

EQUALS_SPEC = JudgeSpec(
    type="equals",
    summary="the output equals the expected text (optionally normalised)",
    schema=_schema(
        "equals",
        ["expected"],
        {
            "expected": {"type": "string", "errorMessage": "must be a string"},
            "normalize": _enum_list(["whitespace", "case"]),
            "file": FILE_PATH,
        },
        didYouMean=VALUE_IS_EXPECTED,
    ),
    build=EqualsJudge,
    deterministic=True,
)
