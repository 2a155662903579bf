"""`composite`: tests, static analysis and a rubric in one weighted judgement.

    judge:
      type: composite
      pytest: {test_file: fixtures/test_add.py}   # a pytest judge config (type implied)
      lint: true                                  # or a lint config: {select: [E, F]}
      rubric: {evaluator: code-review}            # a rubric judge config (type implied)
      weights: {pytest: 0.3, lint: 0.2, rubric: 0.5}   # the defaults
      pass_threshold: 0.7
      fail_on: blocker

Score = weighted mean over the parts present, weights renormalised; a lint part with no Python
block to check is left out. A failing pytest part is a Blocker: the composite fails whatever
its score (so do the rubric's Blockers, unless `fail_on: none`). Any part that cannot judge
makes the whole judgement an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.work import Work
from ..evaluators.scoring import weighted_mean
from .base import (
    Judge,
    JudgeContext,
    JudgeSpec,
    build_judge,
    run_judge,
    schema_problems,
    validate_judge_config,
)
from .rubric import preflight as rubric_preflight

PARTS = ("pytest", "lint", "rubric")
DEFAULT_WEIGHTS = {"pytest": 0.3, "lint": 0.2, "rubric": 0.5}
DEFAULT_THRESHOLD = 0.7


def part_config(name: str, value: Any) -> dict[str, Any] | None:
    """A part's judge config with its type filled in; None when the part is absent/off."""
    if value is None or value is False:
        return None
    if value is True:
        return {"type": name}
    return {"type": name, **{k: v for k, v in dict(value).items() if k != "type"}}


def combine(
    parts: Mapping[str, JudgeResult],
    weights: Mapping[str, float],
    pass_threshold: float,
    fail_on: str,
) -> tuple[bool, float, list[dict[str, Any]], str]:
    """Pure: (passed, score, blocker findings, verdict) from the parts' results."""
    scored = [
        (r.score, weights[name])
        for name, r in parts.items()
        if _applicable(name, r) and weights[name] > 0
    ]
    score = weighted_mean(scored) if scored else 0.0
    blockers: list[dict[str, Any]] = []
    if "pytest" in parts and not parts["pytest"].passed:
        blockers.append(
            {
                "id": "T1",
                "severity": "blocker",
                "dimension": "tests",
                "title": "tests fail",
                "description": parts["pytest"].details,
                "location": None,
                "fix": None,
            }
        )
    rubric = parts.get("rubric")
    if rubric is not None and fail_on == "blocker":
        ev = rubric.data.get("evaluation") or {}
        blockers += [f for f in ev.get("findings", []) if f.get("severity") == "blocker"]
    if not scored:
        return False, score, blockers, "no part could be scored"
    if blockers:
        return False, score, blockers, f"{len(blockers)} blocker finding(s)"
    if score < pass_threshold:
        return False, score, blockers, f"score {score:.2f} below threshold {pass_threshold:.2f}"
    return True, score, blockers, f"score {score:.2f} ≥ threshold {pass_threshold:.2f}"


def _part_dict(name: str, result: JudgeResult) -> dict[str, Any]:
    out = result.to_dict()
    if name == "rubric":
        out.pop("data", None)  # the rubric's evaluation is data["evaluation"] of the composite
    return out


def _applicable(name: str, result: JudgeResult) -> bool:
    return not (name == "lint" and result.data.get("lint", {}).get("applicable") is False)


class CompositeJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.parts: dict[str, Judge] = {}
        for name in PARTS:
            sub = part_config(name, config.get(name))
            if sub is not None:
                self.parts[name] = build_judge(sub)
        self.weights = {**DEFAULT_WEIGHTS, **dict(config.get("weights") or {})}
        self.pass_threshold = float(config.get("pass_threshold", DEFAULT_THRESHOLD))
        self.fail_on = str(config.get("fail_on", "blocker"))

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        results = {name: run_judge(j, task, work, ctx) for name, j in self.parts.items()}
        errors = [f"{name}: {r.error}" for name, r in results.items() if r.error]
        if errors:
            transient = all(r.transient for r in results.values() if r.error)
            return JudgeResult.failure(
                "composite part error: " + "; ".join(errors), transient=transient
            )
        passed, score, blockers, verdict = combine(
            results, self.weights, self.pass_threshold, self.fail_on
        )
        used = {
            n: self.weights[n]
            for n, r in results.items()
            if _applicable(n, r) and self.weights[n] > 0
        }
        total = sum(used.values())
        parts = {
            name: {
                "weight": round(used[name] / total, 10) if name in used else 0.0,
                "applicable": _applicable(name, r),
                **_part_dict(name, r),
            }
            for name, r in results.items()
        }
        data: dict[str, Any] = {
            "composite": {
                "score": score,
                "passed": passed,
                "verdict": verdict,
                "pass_threshold": self.pass_threshold,
                "fail_on": self.fail_on,
                "parts": parts,
                "blockers": blockers,
            }
        }
        if "rubric" in results and "evaluation" in results["rubric"].data:
            data["evaluation"] = results["rubric"].data["evaluation"]
        lines = [f"composite: {'pass' if passed else 'FAIL'}, {verdict}"]
        for name, part in parts.items():
            weight = f"weight {part['weight']:.2f}" if part["applicable"] else "not applicable"
            first = (part["details"] or "").strip().splitlines()[:1] or [""]
            lines.append(f"  {name} {part['score']:.2f} ({weight}): {first[0]}")
        return JudgeResult(passed=passed, score=score, details="\n".join(lines), data=data)


def _check(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    """The full schema and every part's own config, in one pass (see COMPOSITE_SCHEMA)."""
    problems = schema_problems(config, COMPOSITE_SCHEMA)
    present = [n for n in PARTS if config.get(n) is not None and config.get(n) is not False]
    if not present:
        problems.append(("", "needs at least one of pytest, lint, rubric"))
    for name in present:
        value = config[name]
        if not (isinstance(value, Mapping) or (name == "lint" and value is True)):
            continue  # the schema has said what it must be
        if isinstance(value, Mapping) and value.get("type") not in (None, name):
            problems.append((f"{name}.type", f"must be {name!r} or left out"))
            continue
        problems += validate_judge_config(part_config(name, value), suite_dir, prefix=name)
    weights = config.get("weights") or {}
    if isinstance(weights, Mapping) and all(
        isinstance(weights.get(n, 0), int | float) for n in PARTS
    ):
        merged = {**DEFAULT_WEIGHTS, **{n: weights[n] for n in PARTS if n in weights}}
        if present and not any(merged[n] > 0 for n in present):
            problems.append(("weights", "the parts present all have weight 0"))
    return problems


WEIGHT = {"type": "number", "minimum": 0, "errorMessage": "must be a number ≥ 0"}
# The full schema of a composite config. `_check` applies it beside the parts' own checks, so
# every problem shows in one pass: the registry runs a check only once the registered schema
# (which asserts the type alone) passes.
COMPOSITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"const": "composite"},
        "pytest": {
            "type": "object",
            "errorMessage": "must be a pytest judge config (e.g. {test_file: fixtures/test_x.py})",
        },
        "lint": {
            "type": ["boolean", "object"],
            "errorMessage": "must be true, false or a lint config (e.g. {select: [E, F]})",
        },
        "rubric": {
            "type": "object",
            "errorMessage": "must be a rubric judge config (e.g. {evaluator: code-review})",
        },
        "weights": {
            "type": "object",
            "properties": {n: WEIGHT for n in PARTS},
            "additionalProperties": False,
        },
        "pass_threshold": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "errorMessage": "must be a number between 0 and 1",
        },
        "fail_on": {
            "enum": ["blocker", "none"],
            "errorMessage": "must be 'blocker' (any blocker fails) or 'none'",
        },
    },
    "patternProperties": {"^x-": {}},
    "additionalProperties": False,
}


def _deterministic(config: Mapping[str, Any]) -> bool:
    """Tests and lint alone decide without a model; a rubric part asks one."""
    return part_config("rubric", config.get("rubric")) is None


COMPOSITE_SPEC = JudgeSpec(
    type="composite",
    summary="weighted pytest + lint + rubric; a failing test is a blocker",
    schema={"type": "object", "required": ["type"], "properties": {"type": {"const": "composite"}}},
    build=CompositeJudge,
    check=_check,
    deterministic=_deterministic,
    preflight=rubric_preflight,  # its rubric part's evaluator (rubric_configs finds it)
)
