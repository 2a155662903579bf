"""quick_valid never says yes where jsonschema says no (it would hide a problem), and says
yes for the real suites (or validate would import jsonschema after all)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from skill_eval.core.quickschema import quick_valid

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = REPO / "skill_eval" / "schemas"
SUITE_SCHEMA = json.loads((SCHEMAS / "task_suite.schema.json").read_text())
SUITES = sorted((REPO / "task_suites").glob("*/task_suite.yaml"))
ARTIFACT_SCHEMA = json.loads((SCHEMAS / "evaluation.schema.json").read_text())
GOLDEN = REPO / "tests" / "data" / "golden" / "demo-artifact.json"


def _agrees(instance: Any, schema: Any) -> None:
    quick = quick_valid(instance, schema)
    real = Draft202012Validator(schema).is_valid(instance)
    if quick is not None:
        assert quick == real, (instance, schema)


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: p.parent.name)
def test_shipped_suites_are_quickly_valid(suite: Path) -> None:
    assert quick_valid(yaml.safe_load(suite.read_text()), SUITE_SCHEMA) is True


CASES: list[tuple[Any, Any]] = [
    (1, {"type": "integer"}),
    (1.0, {"type": "integer"}),
    (1.5, {"type": "integer"}),
    (True, {"type": "integer"}),
    (True, {"type": "number"}),
    (None, {"type": ["null", "string"]}),
    ("ab", {"minLength": 3}),
    ("abc", {"maxLength": 2}),
    ([1], {"minItems": 2}),
    (1, {"enum": [True]}),
    (True, {"enum": [1]}),
    (1, {"enum": [1.0]}),
    (1, {"const": True}),
    ({"a": 1}, {"const": {"a": 1.0}}),
    ([1, True], {"const": [1, 1]}),
    ("x", {"pattern": "^y"}),
    ("axb", {"pattern": "x"}),
    (5, {"exclusiveMinimum": 5}),
    (5, {"minimum": 5}),
    (5, {"maximum": 4}),
    (5, {"exclusiveMaximum": 6}),
    (["a", "a"], {"uniqueItems": True}),
    ([1, 1.0], {"uniqueItems": True}),
    ({"a": 1, "b": 2}, {"properties": {"a": {}}, "additionalProperties": False}),
    (
        {"x-y": 1},
        {"patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False},
    ),
    ({"A": 1}, {"propertyNames": {"pattern": "^[a-z]+$"}}),
    ({}, {"required": ["a"]}),
    ("s", {"required": ["a"]}),
    (3, {"oneOf": [{"type": "integer"}, {"type": "number"}]}),
    ("s", {"anyOf": [{"type": "integer"}, {"minLength": 1}]}),
    (3, {"not": {"type": "string"}}),
    (3, {"allOf": [{"minimum": 1}, {"maximum": 2}]}),
    (3, {"$defs": {"n": {"type": "string"}}, "$ref": "#/$defs/n"}),
    ([1, "x"], {"items": {"type": "integer"}}),
    (3, {"if": {"type": "integer"}}),
    (3, {"format": "email", "description": "annotations only"}),
    (3, True),
    (3, False),
    (3, {"if": {"type": "integer"}, "then": {"minimum": 5}}),
    (7, {"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"minLength": 9}}),
    ("ab", {"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"minLength": 9}}),
    ("ab", {"if": {"type": "integer"}, "then": {"minimum": 5}}),
    (3, {"then": {"type": "string"}, "else": {"type": "string"}}),
    (
        {"q": 1},
        {"if": {"required": ["q"]}, "then": {"required": ["s"]}, "else": {"required": ["p"]}},
    ),
]


@pytest.mark.parametrize(("instance", "schema"), CASES)
def test_agrees_with_jsonschema(instance: Any, schema: Any) -> None:
    _agrees(instance, schema)


def test_unknown_keyword_is_unsure() -> None:
    assert quick_valid(3, {"dependentRequired": {"a": ["b"]}}) is None
    assert quick_valid(3, {"$ref": "other.json#/x"}) is None


_ODD = [None, True, 0, -1, 1.5, "", "x", [], ["a", "a"], {}, {"zz": 1}, "a" * 300]


def _mutate(doc: Any, rng: random.Random) -> Any:
    """The document with one value somewhere replaced, deleted or given an extra key."""
    doc = copy.deepcopy(doc)
    node, path = doc, []
    while isinstance(node, dict | list) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return rng.choice(_ODD)
    parent, key = path[-1]
    action = rng.random()
    if action < 0.15 and isinstance(parent, dict):
        del parent[key]
    elif action < 0.25 and isinstance(parent, dict):
        parent[rng.choice(["extra", "x-note", "Tasks", "judge"])] = rng.choice(_ODD)
    else:
        parent[key] = rng.choice(_ODD)
    return doc


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: p.parent.name)
def test_mutated_suites_agree_with_jsonschema(suite: Path) -> None:
    rng = random.Random(14)
    doc = yaml.safe_load(suite.read_text())
    validator = Draft202012Validator(SUITE_SCHEMA)
    sure = 0
    for _ in range(300):
        mutated = _mutate(doc, rng)
        quick = quick_valid(mutated, SUITE_SCHEMA)
        if quick is not None:
            sure += 1
            assert quick == validator.is_valid(mutated), mutated
    assert sure > 250  # the schema's keywords are all understood


def test_mutated_artifacts_agree_with_jsonschema() -> None:
    """The artifact schema too (artifact.validate goes through schema_problems)."""
    rng = random.Random(16)
    doc = json.loads(GOLDEN.read_text())
    validator = Draft202012Validator(ARTIFACT_SCHEMA)
    assert quick_valid(doc, ARTIFACT_SCHEMA) is validator.is_valid(doc) is True
    for _ in range(200):
        mutated = _mutate(doc, rng)
        quick = quick_valid(mutated, ARTIFACT_SCHEMA)
        if quick is not None:
            assert quick == validator.is_valid(mutated), mutated
