"""The deterministic judges (not-contains, regex, equals, json-schema, threshold), driven through
the production registry: validate the config, build it, judge."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config


def judge(config: dict[str, Any], output: str, suite_dir: Path | None = None) -> JudgeResult:
    suite_dir = suite_dir or Path("/nonexistent")
    assert validate_judge_config(config, suite_dir) == []
    task = Task(id="t", prompt="p", judge=config)
    return run_judge(build_judge(config), task, Work(output), JudgeContext(suite_dir=suite_dir))


@pytest.mark.parametrize(
    "config, output, passed, score",
    [
        ({"type": "not-contains", "expected": ["TODO", "fixme"]}, "all done", True, 1.0),
        ({"type": "not-contains", "expected": ["TODO", "fixme"]}, "FIXME later", False, 0.5),
        # case_sensitive: true matches the strings as written; the default ignores letter case
        ({"type": "contains", "expected": ["Total", "NULL"]}, "total: null", True, 1.0),
        (
            {"type": "contains", "expected": ["Total", "NULL"], "case_sensitive": True},
            "total: NULL",
            False,
            0.5,
        ),
        (
            {"type": "contains", "expected": ["Total"], "case_sensitive": True},
            "Total: 3",
            True,
            1.0,
        ),
        ({"type": "contains", "expected": ["Total"], "case_sensitive": False}, "TOTAL", True, 1.0),
        (
            {"type": "not-contains", "expected": ["TODO"], "case_sensitive": True},
            "a todo list",
            True,
            1.0,
        ),
        (
            {"type": "not-contains", "expected": ["TODO", "XXX"], "case_sensitive": True},
            "TODO: xxx",
            False,
            0.5,
        ),
        # one string is a one-item list
        ({"type": "contains", "expected": "Total"}, "total: 3", True, 1.0),
        ({"type": "contains", "expected": "Total"}, "sum: 3", False, 0.0),
        ({"type": "not-contains", "expected": "TODO"}, "todo: x", False, 0.0),
        ({"type": "regex", "pattern": r"\bv\d+\.\d+\b"}, "release v1.2 today", True, 1.0),
        ({"type": "regex", "pattern": r"^done$"}, "x\nDONE\ny", False, 0.0),
        (
            {"type": "regex", "pattern": r"^done$", "flags": ["ignorecase", "multiline"]},
            "x\nDONE\ny",
            True,
            1.0,
        ),
        ({"type": "regex", "pattern": "a.b", "flags": ["dotall"]}, "a\nb", True, 1.0),
        ({"type": "regex", "pattern": "a.b"}, "a\nb", False, 0.0),
        ({"type": "equals", "expected": "42"}, "42", True, 1.0),
        ({"type": "equals", "expected": "42"}, "42\n", False, 0.0),
        (
            {"type": "equals", "expected": "Hello  World", "normalize": ["whitespace", "case"]},
            "  hello\nworld \n",
            True,
            1.0,
        ),
        ({"type": "equals", "expected": "Hello", "normalize": ["whitespace"]}, "hello", False, 0.0),
        (
            {"type": "threshold", "key": "metrics.accuracy", "threshold": 0.9},
            '{"metrics": {"accuracy": 0.93}}',
            True,
            1.0,
        ),
        (
            {"type": "threshold", "key": "metrics.accuracy", "threshold": 0.9},
            '{"metrics": {"accuracy": 0.5}}',
            False,
            0.0,
        ),
        (
            {"type": "threshold", "key": "items.1.n", "threshold": 3},
            'Result:\n```json\n{"items": [{"n": 1}, {"n": 3}]}\n```',
            True,
            1.0,
        ),
    ],
)
def test_judge_table(config: dict[str, Any], output: str, passed: bool, score: float) -> None:
    result = judge(config, output)
    assert (result.passed, result.score, result.error) == (passed, score, None)
    assert result.details


def test_not_contains_names_the_forbidden_strings() -> None:
    assert "'fixme'" in judge({"type": "not-contains", "expected": ["fixme"]}, "FIXME").details


@pytest.mark.parametrize("judge_type", ["contains", "not-contains"])
def test_case_sensitive_is_said_in_the_details_and_must_be_a_boolean(judge_type: str) -> None:
    config = {"type": judge_type, "expected": ["Total"], "case_sensitive": True}
    assert judge(config, "total").details.endswith(" (case-sensitive)")
    assert "case-sensitive" not in judge({**config, "case_sensitive": False}, "total").details
    assert validate_judge_config({**config, "case_sensitive": "yes"}, Path("/nonexistent")) == [
        ("judge.case_sensitive", "must be true or false (default false: letter case is ignored)")
    ]


def test_equals_details_point_at_the_difference() -> None:
    details = judge({"type": "equals", "expected": "abcdef"}, "abcXef").details
    assert "character 3" in details and "'def'" in details and "'Xef'" in details


@pytest.mark.parametrize(
    "output, reason",
    [
        ("not json at all", "not JSON"),
        ('{"metrics": {}}', "'metrics.accuracy' not found"),
        ('{"metrics": {"accuracy": "high"}}', "not a number"),
        ('{"metrics": {"accuracy": true}}', "not a number"),
        ('```json\n{"metrics": \n```', "does not parse"),
    ],
)
def test_threshold_missing_or_bad_values_score_zero(output: str, reason: str) -> None:
    result = judge({"type": "threshold", "key": "metrics.accuracy", "threshold": 0.5}, output)
    assert (result.passed, result.score, result.error) == (False, 0.0, None)
    assert reason in result.details


PERSON = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


def test_json_schema_inline_passes_on_plain_and_fenced_json() -> None:
    config = {"type": "json-schema", "schema": PERSON}
    assert judge(config, '{"name": "Ada", "age": 36}').passed
    fenced = 'Here you go:\n```json\n{"name": "Ada", "age": 36}\n```\nAnything else?'
    assert judge(config, fenced).passed


def test_json_schema_failure_names_the_failing_path() -> None:
    result = judge(
        {"type": "json-schema", "schema": PERSON}, '{"name": "Ada", "age": "old", "tags": ["a", 2]}'
    )
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


@pytest.mark.parametrize(
    "schema_file, message",
    [
        ("fixtures/../../outside.json", "must stay inside fixtures/"),
        ("fixtures/link.json", "must stay inside fixtures/"),
        ("/etc/passwd", "not absolute"),
        ("outside.json", "must start with fixtures/"),
        ("fixtures/missing.json", "file not found"),
    ],
)
def test_json_schema_file_must_stay_in_fixtures(
    tmp_path: Path, schema_file: str, message: str
) -> None:
    suite = suite_with_fixtures(tmp_path)
    os.symlink(tmp_path / "outside.json", suite / "fixtures" / "link.json")
    problems = validate_judge_config({"type": "json-schema", "schema_file": schema_file}, suite)
    assert len(problems) == 1
    assert problems[0][0] == "judge.schema_file" and message in problems[0][1]


@pytest.mark.parametrize(
    "config, field, message",
    [
        ({"type": "regex", "pattern": "(unclosed"}, "judge.pattern", "invalid regular expression"),
        (
            {"type": "regex", "pattern": "x", "flags": ["global"]},
            "judge.flags[0]",
            "must be one of: ignorecase",
        ),
        ({"type": "regex", "patern": "x"}, "judge.patern", "did you mean 'pattern'"),
        ({"type": "equals", "expected": 3}, "judge.expected", "must be a string"),
        (
            {"type": "equals", "expected": "x", "normalize": ["unicode"]},
            "judge.normalize[0]",
            "whitespace, case",
        ),
        ({"type": "not-contains", "expected": []}, "judge.expected", "non-empty list of strings"),
        (
            {"type": "contains", "expected": ""},
            "judge.expected",
            "must be a non-empty string or a non-empty list of strings",
        ),
        (
            {"type": "contains", "expected": ["a", 3]},
            "judge.expected",
            "must be a non-empty string or a non-empty list of strings",
        ),
        # promptfoo's assertions say `value`
        (
            {"type": "contains", "value": "x"},
            "judge.value",
            "unknown key 'value' (did you mean 'expected'?); allowed: type, expected",
        ),
        ({"type": "not-contains", "value": ["x"]}, "judge.value", "did you mean 'expected'?"),
        ({"type": "equals", "value": "x"}, "judge.value", "did you mean 'expected'?"),
        ({"type": "regex", "value": "x"}, "judge.value", "did you mean 'pattern'?"),
        ({"type": "json-schema"}, "judge", "exactly one of 'schema'"),
        (
            {"type": "json-schema", "schema": {}, "schema_file": "fixtures/x.json"},
            "judge",
            "exactly one of",
        ),
        (
            {"type": "json-schema", "schema": {"type": "nonsense"}},
            "judge.schema",
            "not a valid JSON Schema",
        ),
        ({"type": "threshold", "key": "a..b", "threshold": 1}, "judge.key", "dotted path"),
        (
            {"type": "threshold", "key": "a", "threshold": "high"},
            "judge.threshold",
            "must be a number",
        ),
        ({"type": "threshold", "key": "a"}, "judge.threshold", "is required"),
    ],
)
def test_config_problems_name_the_field(
    tmp_path: Path, config: dict[str, Any], field: str, message: str
) -> None:
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
    result = run_judge(
        build_judge(config),
        Task(id="t", prompt="p", judge=config),
        Work("{}"),
        JudgeContext(suite_dir=suite),
    )
    assert result.error and "inside fixtures/" in result.error


@pytest.mark.parametrize(
    "pattern, output, details",
    [
        # as the suite spells it ('\d+' in YAML), not as repr() shows it ('\\d+')
        (r"v\d+\.\d+", "no version", r"pattern 'v\d+\.\d+' not found"),
        (r"C:\\Users", "D:", r"pattern 'C:\\Users' not found"),
        ("it's", "its", "pattern 'it's' not found"),
        ("a\tb", "ab", r"pattern 'a\tb' not found"),  # a real tab: escaped, one line
    ],
)
def test_regex_feedback_shows_the_pattern_as_written(
    pattern: str, output: str, details: str
) -> None:
    assert judge({"type": "regex", "pattern": pattern}, output).details == details


# --- regex on untrusted output: bounded time, other threads keep running ------------------

EXPLOSIVE = {"type": "regex", "pattern": r"(a|aa)+$", "timeout": 0.5}


def test_catastrophic_backtracking_times_out_as_a_failure() -> None:
    started = time.monotonic()
    result = judge(EXPLOSIVE, "a" * 40 + "!")
    # Left to run, this search takes about 3 minutes; 30 s holds on a loaded machine.
    assert time.monotonic() - started < 30
    assert (result.passed, result.score, result.error) == (False, 0.0, None)
    assert result.details.startswith("pattern '(a|aa)+$' gave up after 0.5s")
    assert "backtrack" in result.details
    assert result.data == {"timed_out": True}


def test_a_slow_search_does_not_hold_the_gil() -> None:
    results: list[JudgeResult] = []
    # 3 s of search: 10 ticks of this thread fit in it even on a loaded machine
    slow = {**EXPLOSIVE, "timeout": 3}
    worker = threading.Thread(target=lambda: results.append(judge(slow, "a" * 40 + "!")))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.01)
    worker.join()
    assert results and results[0].data == {"timed_out": True}
    assert ticks >= 10  # with the GIL held, this thread would not run until the search ends


def test_reviewers_pattern_finishes_at_once() -> None:
    result = judge({"type": "regex", "pattern": r"^(\w+\s?)+$"}, "a" * 27 + "!")
    # finished (well within the default 5 s timeout), not given up on
    assert not result.passed and result.details.endswith("not found")


@pytest.mark.parametrize(
    "config, field, message",
    [
        ({"type": "regex", "pattern": "a{2,1}"}, "judge.pattern", "invalid regular expression"),
        ({"type": "regex", "pattern": "x", "timeout": 0}, "judge.timeout", "seconds > 0"),
        ({"type": "regex", "pattern": "x", "timeout": "1s"}, "judge.timeout", "seconds > 0"),
    ],
)
def test_regex_config_problems(
    tmp_path: Path, config: dict[str, Any], field: str, message: str
) -> None:
    problems = validate_judge_config(config, tmp_path)
    assert any(f == field and message in m for f, m in problems), problems


# --- fenced blocks: fences pair up (CommonMark) -------------------------------------------


@pytest.mark.parametrize(
    "output",
    [
        'Code:\n```python\nprint("hi")\n```\nData:\n```json\n{"name": "Ada", "age": 36}\n```\n',
        'Shell:\n```\nls -la\n```\nthen\n```json\n{"name": "Ada", "age": 36}\n```\n',
        '~~~json\n{"name": "Ada", "age": 36}\n~~~\n',
        '````json\n{"name": "Ada", "age": 36}\n````\n',
        '```\n{"name": "Ada", "age": 36}\n```\n',
    ],
)
def test_json_block_is_found_whatever_comes_before_it(output: str) -> None:
    result = judge({"type": "json-schema", "schema": PERSON}, output)
    assert (result.passed, result.error) == (True, None), result.details


def test_a_longer_fence_holds_a_shorter_one() -> None:
    output = (
        'How to answer:\n````markdown\n```json\n{"name": "example", "age": "n"}\n```\n'
        '````\nMy answer:\n```json\n{"name": "Ada", "age": 36}\n```\n'
    )
    result = judge({"type": "json-schema", "schema": PERSON}, output)
    assert (result.passed, result.error) == (True, None), result.details


# --- non-finite numbers are not numbers ----------------------------------------------------


@pytest.mark.parametrize(
    "output, shown",
    [
        ('{"m": Infinity}', "Infinity is not a JSON number"),
        ('{"m": -Infinity}', "-Infinity is not a JSON number"),
        ('{"m": NaN}', "NaN is not a JSON number"),
        ('{"m": 1e999}', "1e999 is too large"),
        ('Here:\n```json\n{"m": 1e999}\n```', "1e999 is too large"),
    ],
)
def test_threshold_refuses_non_finite_numbers(output: str, shown: str) -> None:
    result = judge({"type": "threshold", "key": "m", "threshold": 0.5}, output)
    assert (result.passed, result.score, result.error) == (False, 0.0, None)
    assert "non-finite number" in result.details and shown in result.details


@pytest.mark.parametrize("output", ['{"x": NaN}', '{"x": Infinity}', '{"x": 1e999}', "NaN"])
def test_json_schema_refuses_non_finite_numbers(output: str) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number", "maximum": 10}}}
    result = judge({"type": "json-schema", "schema": schema}, output)
    assert (result.passed, result.error) == (False, None)
    assert "non-finite number" in result.details


def test_deeply_nested_json_is_a_failure_not_a_crash() -> None:
    result = judge({"type": "json-schema", "schema": {}}, "[" * 100_000)
    assert (result.passed, result.error) == (False, None)
