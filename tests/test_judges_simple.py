"""The deterministic judges (not-contains, regex, equals, json-schema, threshold), driven through
the production registry: validate the config, build it, judge."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config
from skill_eval.model import JudgeResult, Task


def judge(config: dict[str, Any], output: str, suite_dir: Path | None = None) -> JudgeResult:
    suite_dir = suite_dir or Path("/nonexistent")
    assert validate_judge_config(config, suite_dir) == []
    task = Task(id="t", prompt="p", judge=config)
    return run_judge(build_judge(config), task, output, JudgeContext(suite_dir=suite_dir))


@pytest.mark.parametrize("config, output, passed, score", [
    ({"type": "not-contains", "expected": ["TODO", "fixme"]}, "all done", True, 1.0),
    ({"type": "not-contains", "expected": ["TODO", "fixme"]}, "FIXME later", False, 0.5),
    ({"type": "regex", "pattern": r"\bv\d+\.\d+\b"}, "release v1.2 today", True, 1.0),
    ({"type": "regex", "pattern": r"^done$"}, "x\nDONE\ny", False, 0.0),
    ({"type": "regex", "pattern": r"^done$", "flags": ["ignorecase", "multiline"]},
     "x\nDONE\ny", True, 1.0),
    ({"type": "regex", "pattern": "a.b", "flags": ["dotall"]}, "a\nb", True, 1.0),
    ({"type": "regex", "pattern": "a.b"}, "a\nb", False, 0.0),
    ({"type": "equals", "expected": "42"}, "42", True, 1.0),
    ({"type": "equals", "expected": "42"}, "42\n", False, 0.0),
    ({"type": "equals", "expected": "Hello  World", "normalize": ["whitespace", "case"]},
     "  hello\nworld \n", True, 1.0),
    ({"type": "equals", "expected": "Hello", "normalize": ["whitespace"]}, "hello", False, 0.0),
    ({"type": "threshold", "key": "metrics.accuracy", "threshold": 0.9},
     '{"metrics": {"accuracy": 0.93}}', True, 1.0),
    ({"type": "threshold", "key": "metrics.accuracy", "threshold": 0.9},
     '{"metrics": {"accuracy": 0.5}}', False, 0.0),
    ({"type": "threshold", "key": "items.1.n", "threshold": 3},
     'Result:\n```json\n{"items": [{"n": 1}, {"n": 3}]}\n```', True, 1.0),
])
def test_judge_table(config: dict[str, Any], output: str, passed: bool, score: float) -> None:
    result = judge(config, output)
    assert (result.passed, result.score, result.error) == (passed, score, None)
    assert result.details


def test_not_contains_names_the_forbidden_strings() -> None:
    assert "'fixme'" in judge({"type": "not-contains", "expected": ["fixme"]}, "FIXME").details


def test_equals_details_point_at_the_difference() -> None:
    details = judge({"type": "equals", "expected": "abcdef"}, "abcXef").details
    assert "character 3" in details and "'def'" in details and "'Xef'" in details


@pytest.mark.parametrize("output, reason", [
    ("not json at all", "not JSON"),
    ('{"metrics": {}}', "'metrics.accuracy' not found"),
    ('{"metrics": {"accuracy": "high"}}', "not a number"),
    ('{"metrics": {"accuracy": true}}', "not a number"),
    ('```json\n{"metrics": \n```', "does not parse"),
])
def test_threshold_missing_or_bad_values_score_zero(output: str, reason: str) -> None:
    result = judge({"type": "threshold", "key": "metrics.accuracy", "threshold": 0.5}, output)
    assert (result.passed, result.score, result.error) == (False, 0.0, None)
    assert reason in result.details


PERSON = {"type": "object", "required": ["name", "age"],
          "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                         "tags": {"type": "array", "items": {"type": "string"}}}}


def test_json_schema_inline_passes_on_plain_and_fenced_json() -> None:
    config = {"type": "json-schema", "schema": PERSON}
    assert judge(config, '{"name": "Ada", "age": 36}').passed
    fenced = 'Here you go:\n```json\n{"name": "Ada", "age": 36}\n```\nAnything else?'
    assert judge(config, fenced).passed


def test_json_schema_failure_names_the_failing_path() -> None:
    result = judge({"type": "json-schema", "schema": PERSON},
                   '{"name": "Ada", "age": "old", "tags": ["a", 2]}')
    assert (result.passed, result.error) == (False, None)
    assert "$.age: 'old' is not of type 'integer'" in result.details
    assert "$.tags[1]: 2 is not of type 'string'" in result.details


def test_json_schema_non_json_output_fails() -> None:
    result = judge({"type": "json-schema", "schema": PERSON}, "I cannot do that.")
    assert not result.passed and result.error is None and "not JSON" in result.details


def suite_with_fixtures(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    (suite / "fixtures").mkdir(parents=True)
    (suite / "fixtures" / "person.json").write_text(json.dumps(PERSON), encoding="utf-8")
    (tmp_path / "outside.json").write_text(json.dumps(PERSON), encoding="utf-8")
    return suite


def test_json_schema_file_under_fixtures(tmp_path: Path) -> None:
    suite = suite_with_fixtures(tmp_path)
    config = {"type": "json-schema", "schema_file": "fixtures/person.json"}
    assert judge(config, '{"name": "Ada", "age": 36}', suite).passed
    assert not judge(config, '{"name": "Ada"}', suite).passed


@pytest.mark.parametrize("schema_file, message", [
    ("fixtures/../../outside.json", "must stay inside fixtures/"),
    ("fixtures/link.json", "must stay inside fixtures/"),
    ("/etc/passwd", "not absolute"),
    ("outside.json", "must start with fixtures/"),
    ("fixtures/missing.json", "file not found"),
])
def test_json_schema_file_must_stay_in_fixtures(tmp_path: Path, schema_file: str,
                                                message: str) -> None:
    suite = suite_with_fixtures(tmp_path)
    os.symlink(tmp_path / "outside.json", suite / "fixtures" / "link.json")
    problems = validate_judge_config({"type": "json-schema", "schema_file": schema_file}, suite)
    assert len(problems) == 1
    assert problems[0][0] == "judge.schema_file" and message in problems[0][1]


@pytest.mark.parametrize("config, field, message", [
    ({"type": "regex", "pattern": "(unclosed"}, "judge.pattern", "invalid regular expression"),
    ({"type": "regex", "pattern": "x", "flags": ["global"]}, "judge.flags[0]",
     "must be one of: ignorecase"),
    ({"type": "regex", "patern": "x"}, "judge.patern", "did you mean 'pattern'"),
    ({"type": "equals", "expected": 3}, "judge.expected", "must be a string"),
    ({"type": "equals", "expected": "x", "normalize": ["unicode"]}, "judge.normalize[0]",
     "whitespace, case"),
    ({"type": "not-contains", "expected": []}, "judge.expected", "non-empty list of strings"),
    ({"type": "json-schema"}, "judge", "exactly one of 'schema'"),
    ({"type": "json-schema", "schema": {}, "schema_file": "fixtures/x.json"}, "judge",
     "exactly one of"),
    ({"type": "json-schema", "schema": {"type": "nonsense"}}, "judge.schema",
     "not a valid JSON Schema"),
    ({"type": "threshold", "key": "a..b", "threshold": 1}, "judge.key", "dotted path"),
    ({"type": "threshold", "key": "a", "threshold": "high"}, "judge.threshold",
     "must be a number"),
    ({"type": "threshold", "key": "a"}, "judge", "'threshold' is required"),
])
def test_config_problems_name_the_field(tmp_path: Path, config: dict[str, Any], field: str,
                                        message: str) -> None:
    problems = validate_judge_config(config, tmp_path)
    assert any(f == field and message in m for f, m in problems), problems


def test_x_metadata_keys_are_accepted(tmp_path: Path) -> None:
    config = {"type": "regex", "pattern": "x", "x-owner": "docs team"}
    assert validate_judge_config(config, tmp_path) == []


def test_schema_file_swapped_for_a_symlink_after_load_is_a_judge_error(tmp_path: Path) -> None:
    suite = suite_with_fixtures(tmp_path)
    config = {"type": "json-schema", "schema_file": "fixtures/person.json"}
    assert validate_judge_config(config, suite) == []
    (suite / "fixtures" / "person.json").unlink()
    os.symlink(tmp_path / "outside.json", suite / "fixtures" / "person.json")
    result = run_judge(build_judge(config), Task(id="t", prompt="p", judge=config), "{}",
                       JudgeContext(suite_dir=suite))
    assert result.error and "inside fixtures/" in result.error
