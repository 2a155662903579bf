"""Judges of structured output: `json-schema` (the output, or a workspace file, validates
against a schema) and `threshold` (a number in the output's JSON reaches a bound), and the
readers of model output they share with `lint`: Markdown fenced blocks, and strict JSON (no
NaN, no Infinity) from the output or its first JSON block."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ..core.model import JudgeResult, Task
from ..core.work import Work
from ..errors import OutputRejected
from .base import JudgeContext, JudgeSpec
from .fixtures import fixture_problem, resolve_fixture
from .simple import _binary, _schema
from .work_judges import FILE_PATH, judge_file_or_text

# A fence line (CommonMark): up to 3 spaces, then 3+ backticks or 3+ tildes, then the info string.
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")


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
            if (
                closing
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            body.append(lines[j])
            j += 1
        lang = info.split()[0].strip("{}.").casefold() if info else ""
        blocks.append(CodeBlock(lang, "\n".join(body) + "\n", i + 2))
        i = j + 1
    return blocks


class NonFiniteNumber(OutputRejected):
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
        self.inline: Any = config.get("schema")
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
        try:
            errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.path)))
        except RecursionError:  # the output's nesting exhausted the validator: its doing
            return _binary(False, "output JSON is nested too deeply to validate (recursive schema)")
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
        elif (
            isinstance(node, list)
            and part.lstrip("-").isdigit()
            and -len(node) <= int(part) < len(node)
        ):
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


JSON_SCHEMA_SPEC = JudgeSpec(
    type="json-schema",
    summary="the output (or its first ```json block) validates against a JSON Schema",
    schema=_schema(
        "json-schema",
        [],
        {
            "schema": {
                "type": ["object", "boolean"],
                "errorMessage": "must be a JSON Schema (a mapping)",
            },
            "schema_file": {
                "type": "string",
                "minLength": 1,
                "errorMessage": "must be a path under fixtures/",
            },
            "file": FILE_PATH,
        },
        oneOf=[{"required": ["schema"]}, {"required": ["schema_file"]}],
        errorMessage="needs exactly one of 'schema' (inline) or 'schema_file'",
    ),
    build=JsonSchemaJudge,
    deterministic=True,
    check=_check_json_schema,
)

THRESHOLD_SPEC = JudgeSpec(
    type="threshold",
    summary="a number at a dotted key of the output JSON is at least a threshold",
    schema=_schema(
        "threshold",
        ["key", "threshold"],
        {
            "key": {
                "type": "string",
                "minLength": 1,
                "pattern": r"^[^.]+(\.[^.]+)*$",
                "errorMessage": "must be a dotted path such as 'metrics.accuracy'",
            },
            "threshold": {"type": "number", "errorMessage": "must be a number"},
        },
    ),
    build=ThresholdJudge,
    deterministic=True,
)
