"""Judges made of judges: `all`, `any` and `weighted`. Nested configs are validated with the
same rules as top-level ones (field names like `judge.judges[1].expected`), and an error in
any nested judge makes the whole judgement an error: a broken judge is never a skill failure.

Weighted entries keep the nested judge apart from its weight: `{weight: 2, judge: {...}}`.

Every problem is reported in one pass, the combinator's own and its nested judges' alike. The
registry runs a judge's `check` only once its registered schema passes, so the registered
schema asserts no more than the shape the walk needs (a `judges` list); the full schema
(`ALL_SCHEMA`, `ANY_SCHEMA`, `WEIGHTED_SCHEMA`) is applied by the check, beside the walk.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.work import Work
from .base import (
    ConfigCheck,
    Judge,
    JudgeContext,
    JudgeSpec,
    build_judge,
    is_deterministic,
    run_judge,
    schema_problems,
    validate_judge_config,
)

X_KEYS: dict[str, Any] = {"^x-": {}}
JUDGE_LIST = {
    "type": "array",
    "minItems": 1,
    "errorMessage": "must be a non-empty list of judge configs",
}
ENTRY_LIST = {
    "type": "array",
    "minItems": 1,
    "errorMessage": "must be a non-empty list of {weight, judge} entries",
}
THRESHOLD = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    "errorMessage": "must be a number between 0 and 1",
}


def _label(config: Mapping[str, Any]) -> str:
    return str(config.get("type", "?"))


def _run_all(
    judges: list[tuple[str, Judge]], task: Task, work: Work, ctx: JudgeContext
) -> tuple[list[JudgeResult], JudgeResult | None]:
    """Run every nested judge; return the results, and an error result if any nested one
    could not judge (the first such error, with the others listed)."""
    results = [run_judge(j, task, work, ctx) for _, j in judges]
    errors = [f"judges[{i}] ({judges[i][0]}): {r.error}" for i, r in enumerate(results) if r.error]
    if errors:
        # Worth a retry only when every nested error is: a permanent one would recur.
        transient = all(r.transient for r in results if r.error)
        return results, JudgeResult.failure(
            "nested judge error: " + "; ".join(errors), transient=transient
        )
    return results, None


def _details(judges: list[tuple[str, Judge]], results: list[JudgeResult]) -> str:
    lines = []
    for i, ((label, _), r) in enumerate(zip(judges, results, strict=True)):
        verdict = "pass" if r.passed else "FAIL"
        first = (r.details or "").strip().replace("\n", "\n    ")
        lines.append(f"[{i}] {label} {verdict} ({r.score:.2f}): {first}")
    return "\n".join(lines)


def _sub_data(results: list[JudgeResult]) -> dict[str, Any]:
    return {"judges": [r.to_dict() for r in results]}


class BooleanJudge:
    """`all`: every nested judge passes, score = mean of the nested scores.
    `any`: at least one passes, score = the best nested score."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.every = config["type"] == "all"
        self.judges = [(_label(c), build_judge(c)) for c in config["judges"]]

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        results, error = _run_all(self.judges, task, work, ctx)
        if error:
            return error
        scores = [r.score for r in results]
        if self.every:
            passed, score = all(r.passed for r in results), sum(scores) / len(scores)
        else:
            passed, score = any(r.passed for r in results), max(scores)
        return JudgeResult(
            passed=passed,
            score=score,
            details=_details(self.judges, results),
            data=_sub_data(results),
        )


class WeightedJudge:
    """Score = weighted mean of nested scores; passes when score ≥ `pass_threshold` (0.7)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        entries = config["judges"]
        self.weights = [float(e["weight"]) for e in entries]
        self.judges = [
            (f"{_label(e['judge'])} ×{e['weight']}", build_judge(e["judge"])) for e in entries
        ]
        self.threshold = float(config.get("pass_threshold", 0.7))

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        results, error = _run_all(self.judges, task, work, ctx)
        if error:
            return error
        total = sum(self.weights)
        score = sum(w * r.score for w, r in zip(self.weights, results, strict=True)) / total
        passed = score >= self.threshold
        head = f"weighted score {score:.3f} {'>=' if passed else '<'} {self.threshold}"
        return JudgeResult(
            passed=passed,
            score=score,
            details=head + "\n" + _details(self.judges, results),
            data=_sub_data(results),
        )


def _check_nested(schema: Mapping[str, Any]) -> ConfigCheck:
    def check(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
        problems = schema_problems(config, schema)
        for i, sub in enumerate(config["judges"]):
            problems += validate_judge_config(sub, suite_dir, prefix=f"judges[{i}]")
        return problems

    return check


def _check_weighted(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    problems = schema_problems(config, WEIGHTED_SCHEMA)
    for i, entry in enumerate(config["judges"]):
        # an entry that is not a mapping, or has no mapping `judge`, the schema reports
        if isinstance(entry, Mapping) and isinstance(entry.get("judge"), Mapping):
            problems += validate_judge_config(
                entry["judge"], suite_dir, prefix=f"judges[{i}].judge"
            )
    return problems


def _list_schema(judge_type: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", "judges"],
        "properties": {"type": {"const": judge_type}, "judges": JUDGE_LIST},
        "patternProperties": X_KEYS,
        "additionalProperties": False,
    }


def _walkable(judge_type: str, judges: Mapping[str, Any] = JUDGE_LIST) -> dict[str, Any]:
    """The registered schema: just what the check's walk needs, a non-empty `judges` list."""
    return {
        "type": "object",
        "required": ["type", "judges"],
        "properties": {"type": {"const": judge_type}, "judges": judges},
    }


def _all_deterministic(config: Mapping[str, Any]) -> bool:
    """A combination is deterministic when every judge in it is."""
    if config["type"] == "weighted":
        return all(is_deterministic(entry["judge"]) for entry in config["judges"])
    return all(is_deterministic(judge) for judge in config["judges"])


ALL_SCHEMA = _list_schema("all")
ANY_SCHEMA = _list_schema("any")
WEIGHTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "judges"],
    "properties": {
        "type": {"const": "weighted"},
        "judges": {
            **ENTRY_LIST,
            "items": {
                "type": "object",
                "required": ["weight", "judge"],
                "properties": {
                    "weight": {
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "errorMessage": "must be a number > 0",
                    },
                    "judge": {
                        "type": "object",
                        "errorMessage": "must be a judge config (a mapping)",
                    },
                },
                "patternProperties": X_KEYS,
                "additionalProperties": False,
            },
        },
        "pass_threshold": THRESHOLD,
    },
    "patternProperties": X_KEYS,
    "additionalProperties": False,
}

ALL_SPEC = JudgeSpec(
    type="all",
    summary="every nested judge passes",
    schema=_walkable("all"),
    build=BooleanJudge,
    check=_check_nested(ALL_SCHEMA),
    deterministic=_all_deterministic,
)

ANY_SPEC = JudgeSpec(
    type="any",
    summary="at least one nested judge passes",
    schema=_walkable("any"),
    build=BooleanJudge,
    check=_check_nested(ANY_SCHEMA),
    deterministic=_all_deterministic,
)

WEIGHTED_SPEC = JudgeSpec(
    type="weighted",
    summary="weighted mean of nested judges' scores reaches pass_threshold",
    schema=_walkable("weighted", ENTRY_LIST),
    build=WeightedJudge,
    check=_check_weighted,
    deterministic=_all_deterministic,
)
