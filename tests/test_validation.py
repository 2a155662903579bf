"""validation.schema_problems: one wording for every schema skill-eval reads, each problem
located by file, line and field, read from the error's attributes (never from its English)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.validation import schema_problems
from skill_eval.errors import Problem
from tests.helpers import REPO

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "items"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "label": {"type": "string", "pattern": r"\S"},
        "count": {"type": "integer", "minimum": 1, "maximum": 9},
        "ratio": {"type": "number", "exclusiveMinimum": 0},
        "mode": {"enum": ["fast", "slow"]},
        "kind": {"const": "thing"},
        "note": {"type": ["string", "null"]},
        "tags": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string"}},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id"],
                "additionalProperties": False,
                "properties": {"id": {"type": "string"}, "weight": {"type": "number"}},
            },
        },
        "size": {"type": "number", "errorMessage": "must be a size in bytes"},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 1}]},
    },
    "patternProperties": {"^x-": {}},
    "additionalProperties": False,
}
GOOD: dict[str, Any] = {"name": "n", "items": [{"id": "a"}]}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"name": None}, "name: is required"),
        ({"name": ""}, "name: must be a non-empty string"),
        ({"label": "   "}, "label: must be a non-empty string"),
        ({"name": 3}, "name: must be a string, got an integer 3"),
        ({"name": True}, "name: must be a string, got a boolean true"),
        ({"count": "3"}, "count: must be an integer, got a string '3'"),
        ({"count": 0}, "count: must be at least 1"),
        ({"count": 10}, "count: must be at most 9"),
        ({"ratio": 0}, "ratio: must be greater than 0"),
        ({"mode": "medium"}, "mode: must be one of 'fast', 'slow', got a string 'medium'"),
        ({"kind": "other"}, "kind: must be 'thing'"),
        ({"note": 1.5}, "note: must be a string or null, got a number 1.5"),
        ({"tags": []}, "tags: must be a non-empty list"),
        ({"tags": ["a", "a"]}, "tags: must not repeat an item"),
        ({"tags": {"a": 1}}, "tags: must be a list, got a mapping"),
        ({"items": [{}]}, "items[0].id: is required"),
        (
            {"items": [{"id": "a", "wieght": 1}]},
            "items[0].wieght: unknown key 'wieght' (did you mean 'weight'?); allowed: id, weight",
        ),
        (
            {"colour": "red"},
            "colour: unknown key 'colour'; allowed: name, label, count, ratio, "
            "mode, kind, note, tags, items, size, either",
        ),
        ({"size": "big"}, "size: must be a size in bytes"),
        ({"either": ""}, "either: must be a non-empty string"),
    ],
)
def test_each_keyword_has_one_wording(change: dict[str, Any], expected: str) -> None:
    data = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    assert [f"{p.field}: {p.message}" for p in schema_problems(data, SCHEMA)] == [expected]


def test_x_keys_are_allowed_and_a_good_value_has_no_problem() -> None:
    assert schema_problems({**GOOD, "x-owner": "me"}, SCHEMA) == []


def test_problems_name_the_file_and_the_line_of_the_field_or_its_parent() -> None:
    data = {"items": [{"id": 1}, {"weight": 1}]}
    lines = {
        (): 1,
        ("items",): 2,
        ("items", 0): 3,
        ("items", 0, "id"): 3,
        ("items", 1): 4,
        ("items", 1, "weight"): 4,
    }
    problems = schema_problems(data, SCHEMA, path="f.yaml", lines=lines)
    assert [str(p) for p in problems] == [
        "f.yaml:3: items[0].id: must be a string, got an integer 1",
        "f.yaml:4: items[1].id: is required",  # missing: the line of its mapping
        "f.yaml:1: name: is required",
    ]
    assert problems[0] == Problem(
        "f.yaml", "must be a string, got an integer 1", line=3, field="items[0].id"
    )


def test_a_prefix_goes_before_every_field_and_the_whole_value_keeps_it() -> None:
    problems = schema_problems([1], {"type": "object"}, prefix="judge")
    assert [(p.field, p.message) for p in problems] == [("judge", "must be a mapping, got a list")]
    problems = schema_problems({"items": []}, SCHEMA, prefix="tasks[2]")
    assert [p.field for p in problems] == ["tasks[2].name"]


def test_a_message_is_one_short_line_even_for_keywords_without_a_wording() -> None:
    schema = {"not": {"type": "string"}}
    (problem,) = schema_problems("x" * 5000 + "\nsecond line", schema)
    assert "\n" not in problem.message and len(problem.message) <= 200


def test_the_same_problem_twice_is_reported_once() -> None:
    schema = {"type": "string", "minLength": 1, "pattern": r"\S"}
    assert [p.message for p in schema_problems("", schema)] == ["must be a non-empty string"]


def test_only_validation_turns_schema_errors_into_messages() -> None:
    """The one explainer: no other module iterates jsonschema errors, except the json-schema
    judge, whose messages are a judgement of the output, not of a file skill-eval reads."""
    users = sorted(
        str(p.relative_to(REPO))
        for p in (REPO / "skill_eval").rglob("*.py")
        if "iter_errors(" in p.read_text(encoding="utf-8")
    )
    assert users == [
        str(Path("skill_eval/core/validation.py")),
        str(Path("skill_eval/judges/json_output.py")),
    ]
