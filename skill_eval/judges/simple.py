"""Deterministic judges with no process and no model: `not-contains`, `regex`, `equals`,
`json-schema` and `threshold`. Pure functions at the core, a thin Judge class around each.
Also the readers of model output they share: Markdown fenced blocks, and strict JSON (no NaN,
no Infinity) from the output or its first JSON block."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ..model import JudgeResult, Task
from ..work import Work
from .base import JudgeContext, JudgeSpec
from .contains import NON_EMPTY_STRINGS, contains_score
from .fixtures import fixture_problem, resolve_fixture
from .work_judges import FILE_PATH, TextOrFile, judge_file_or_text

X_KEYS: dict[str, Any] = {"^x-": {}}
# A fence line (CommonMark): up to 3 spaces, then 3+ backticks or 3+ tildes, then the info string.
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
REGEX_FLAGS = {"ignorecase": regex.IGNORECASE, "multiline": regex.MULTILINE,
               "dotall": regex.DOTALL}
DEFAULT_REGEX_TIMEOUT = 5.0


def _schema(judge_type: str, required: list[str], props: dict[str, Any], **extra: Any) \
        -> dict[str, Any]:
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
    return {"type": "array", "uniqueItems": True, "errorMessage": message,
            "items": {"enum": names, "errorMessage": f"must be one of: {', '.join(names)}"}}


def _binary(passed: bool, details: str, **data: Any) -> JudgeResult:
    return JudgeResult(passed=passed, score=1.0 if passed else 0.0, details=details, data=data)


# --- not-contains ---------------------------------------------------------------------------

class NotContainsJudge(TextOrFile):
    """None of `expected` may appear (case-insensitive); score = fraction absent."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.expected = list(config["expected"])
        self.file = config.get("file")  # judge this workspace file instead

    def judge_text(self, output: str) -> JudgeResult:
        found_fraction, missing = contains_score(output, self.expected)
        found = [e for e in self.expected if e not in missing]
        if found:
            details = "found forbidden: " + ", ".join(repr(f) for f in found)
        else:
            details = f"none of the {len(self.expected)} forbidden strings appear"
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
        self.file = config.get("file")  # judge this workspace file instead

    def judge_text(self, output: str) -> JudgeResult:
        try:
            match = self.compiled.search(output, timeout=self.timeout, concurrent=True)
        except TimeoutError:
            return _binary(False, f"pattern {self.compiled.pattern!r} gave up after "
                                  f"{self.timeout:g}s: this output makes it backtrack "
                                  "catastrophically (simplify the pattern, or raise `timeout`)",
                           timed_out=True)
        if match is None:
            return _binary(False, f"pattern {self.compiled.pattern!r} not found")
        text = match.group(0)
        shown = text if len(text) <= 80 else text[:77] + "..."
        return _binary(True, f"pattern matched {shown!r} at offset {match.start()}")


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
        self.file = config.get("file")  # judge this workspace file instead

    def judge_text(self, output: str) -> JudgeResult:
        got, want = normalize(output, self.modes), normalize(self.expected, self.modes)
        if got == want:
            return _binary(True, "output equals the expected text")
        at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                  min(len(got), len(want)))
        return _binary(False, f"differs at character {at}: expected {want[at:at + 40]!r}, "
                              f"got {got[at:at + 40]!r} (lengths {len(want)} vs {len(got)})")


# --- reading model output: fenced blocks, strict JSON ---------------------------------------

@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block: its language tag, its text, and the output line it starts on."""

    lang: str
    code: str
    line: int


def fenced_blocks(text: str) -> list[CodeBlock]:
    """Every fenced code block in Markdown text, CommonMark rules: ``` or ~~~ fences of 3 or
    more; a block closes only at a fence of the same character, at least as long, with no info
    string; an unclosed block runs to the end of the text."""
    blocks: list[CodeBlock] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening or (opening["fence"][0] == "`" and "`" in opening["info"]):
            i += 1
            continue
        fence, info = opening["fence"], opening["info"].strip()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            closing = _FENCE.match(lines[j])
            if (closing and closing["fence"][0] == fence[0]
                    and len(closing["fence"]) >= len(fence) and not closing["info"].strip()):
                break
            body.append(lines[j])
            j += 1
        lang = info.split()[0].strip("{}.").casefold() if info else ""
        blocks.append(CodeBlock(lang, "\n".join(body) + "\n", i + 2))
        i = j + 1
    return blocks


class NonFiniteNumber(ValueError):
    """JSON text holds NaN or Infinity (not JSON at all), or a number too large for a float."""


def _no_constant(name: str) -> Any:
    raise NonFiniteNumber(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise NonFiniteNumber(f"{shown} is too large for a number (it overflows to infinity)")
    return value


def loads_strict(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and floats that overflow (1e999): compared with
    a threshold or a schema's `maximum` they would pass checks no real number passes."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


def first_json_block(output: str) -> CodeBlock | None:
    """The first fenced block tagged `json`, else the first untagged one."""
    blocks = fenced_blocks(output)
    candidates = [b for b in blocks if b.lang == "json"] or [b for b in blocks if not b.lang]
    return candidates[0] if candidates else None


def parse_json_output(output: str) -> tuple[Any, str | None]:
    """The JSON value of the output itself, or of its first fenced ```json (else untagged)
    block. Returns (value, None), or (None, reason) when there is no parseable, finite JSON."""
    try:
        return loads_strict(output), None
    except NonFiniteNumber as exc:
        return None, f"output JSON holds a non-finite number: {exc}"
    except (ValueError, RecursionError):
        pass
    block = first_json_block(output)
    if block is None:
        return None, "output is not JSON and has no fenced ```json block"
    try:
        return loads_strict(block.code), None
    except NonFiniteNumber as exc:
        return None, f"fenced JSON block holds a non-finite number: {exc}"
    except RecursionError:
        return None, "first fenced JSON block is nested too deeply to read"
    except ValueError as exc:
        return None, f"first fenced JSON block does not parse: {exc}"


def json_path(path: Any) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


# --- json-schema ----------------------------------------------------------------------------

def _load_schema_file(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _check_json_schema(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    if "schema_file" in config:
        problem = fixture_problem(config["schema_file"], suite_dir)
        if problem:
            return [("schema_file", problem)]
        try:
            schema = _load_schema_file(resolve_fixture(config["schema_file"], suite_dir))
        except (OSError, ValueError) as exc:
            return [("schema_file", f"cannot read a JSON schema from it: {exc}")]
        field = "schema_file"
    else:
        schema, field = config["schema"], "schema"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [(field, f"not a valid JSON Schema: {exc.message} at {json_path(exc.path)}")]
    return []


class JsonSchemaJudge:
    """The output (or its first fenced JSON block) parses and validates against the schema."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.inline = config.get("schema")
        self.schema_file = config.get("schema_file")
        self.file = config.get("file")  # judge this workspace file instead

    def _validator(self, ctx: JudgeContext) -> Draft202012Validator:
        schema = self.inline
        if self.schema_file is not None:
            schema = _load_schema_file(resolve_fixture(self.schema_file, ctx.suite_dir))
        return Draft202012Validator(schema)

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        try:
            validator = self._validator(ctx)
        except (OSError, ValueError, SchemaError) as exc:
            return JudgeResult.failure(f"cannot load the JSON schema: {exc}")
        return judge_file_or_text(self.file, work, lambda text: self._validate(validator, text))

    def _validate(self, validator: Draft202012Validator, output: str) -> JudgeResult:
        value, reason = parse_json_output(output)
        if reason is not None:
            return _binary(False, reason)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path)))
        if not errors:
            return _binary(True, "output validates against the schema")
        lines = [f"{json_path(e.absolute_path)}: {e.message}" for e in errors[:5]]
        if len(errors) > 5:
            lines.append(f"... and {len(errors) - 5} more")
        return _binary(False, "\n".join(lines))


# --- threshold ------------------------------------------------------------------------------

def lookup(value: Any, dotted: str) -> tuple[Any, str | None]:
    """Follow a dotted path (`a.b.0.c`; numbers index lists) into a JSON value."""
    node = value
    walked: list[str] = []
    for part in dotted.split("."):
        walked.append(part)
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit() and \
                -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            return None, f"key {'.'.join(walked)!r} not found in the output JSON"
    return node, None


class ThresholdJudge:
    """The output is JSON and the number at `key` is ≥ `threshold`; score 1 or 0."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.key = str(config["key"])
        self.threshold = float(config["threshold"])

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        output = work.text
        value, reason = parse_json_output(output)
        if reason is None:
            value, reason = lookup(value, self.key)
        if reason is None and (isinstance(value, bool) or not isinstance(value, int | float)):
            reason = f"{self.key!r} holds {json.dumps(value)[:60]}, not a number"
        if reason is not None:
            return _binary(False, reason)
        ok = value >= self.threshold
        sign = ">=" if ok else "<"
        return _binary(ok, f"{self.key} = {value} {sign} {self.threshold}", value=value)


NOT_CONTAINS_SPEC = JudgeSpec(
    type="not-contains",
    summary="none of the expected strings appears (case-insensitive)",
    schema=_schema("not-contains", ["expected"], {"expected": NON_EMPTY_STRINGS,
                                                  "file": FILE_PATH}),
    build=NotContainsJudge,
)

REGEX_SPEC = JudgeSpec(
    type="regex",
    summary="a regular expression is found in the output",
    schema=_schema("regex", ["pattern"], {
        "pattern": {"type": "string", "minLength": 1,
                    "errorMessage": "must be a non-empty regular expression"},
        "flags": _enum_list(REGEX_FLAGS),
        "timeout": {"type": "number", "exclusiveMinimum": 0,
                    "errorMessage": "must be a number of seconds > 0"},
        "file": FILE_PATH,
    }),
    build=RegexJudge,
    check=_check_regex,
)

EQUALS_SPEC = JudgeSpec(
    type="equals",
    summary="the output equals the expected text (optionally normalised)",
    schema=_schema("equals", ["expected"], {
        "expected": {"type": "string", "errorMessage": "must be a string"},
        "normalize": _enum_list(["whitespace", "case"]),
        "file": FILE_PATH,
    }),
    build=EqualsJudge,
)

JSON_SCHEMA_SPEC = JudgeSpec(
    type="json-schema",
    summary="the output (or its first ```json block) validates against a JSON Schema",
    schema=_schema("json-schema", [], {
        "schema": {"type": ["object", "boolean"],
                   "errorMessage": "must be a JSON Schema (a mapping)"},
        "schema_file": {"type": "string", "minLength": 1,
                        "errorMessage": "must be a path under fixtures/"},
        "file": FILE_PATH,
    }, oneOf=[{"required": ["schema"]}, {"required": ["schema_file"]}],
        errorMessage="needs exactly one of 'schema' (inline) or 'schema_file'"),
    build=JsonSchemaJudge,
    check=_check_json_schema,
)

THRESHOLD_SPEC = JudgeSpec(
    type="threshold",
    summary="a number at a dotted key of the output JSON is at least a threshold",
    schema=_schema("threshold", ["key", "threshold"], {
        "key": {"type": "string", "minLength": 1, "pattern": r"^[^.]+(\.[^.]+)*$",
                "errorMessage": "must be a dotted path such as 'metrics.accuracy'"},
        "threshold": {"type": "number", "errorMessage": "must be a number"},
    }),
    build=ThresholdJudge,
)
