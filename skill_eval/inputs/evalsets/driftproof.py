"""Driftproof's eval suites, as its public suites write them (driftproofhq/driftproof,
`suites/<skill>/evals.json`):

    {"skill": str, "version": "1.0", "format": "agentskills.io/evals",
     "cases": [{"id", "claim", "prompt", "rubric": str, "pass_threshold": 0.7,
                "grounding": str, "checks": [{"name", "kind": "regex", "pattern",
                                              "flags": "im"} | {"kind": "contains", ...}]}]}

A case is a task: its `rubric` a model scores 0..1 (`llm-rubric`), passing at its
`pass_threshold` (0.7 when not given, as Driftproof's runner does; `threshold` and `criteria`
are its aliases). Its `checks` are deterministic judges recorded as the task's observers:
Driftproof reports them beside the grade and never folds them into a case's outcome
(lib/checks.js: "supplementary evidence only"), and an observer is exactly that here. `claim`
becomes the task's description and `grounding` (where SKILL.md makes the claim) stays in the
task's `source`. A rubric object `{checks, pass_threshold}` (an earlier description of the
format) is read too: its checks gate, a threshold above 1 counting checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .checks import Checks, read_assertions
from .records import EvalCase, EvalsFile, bad, check_sizes, is_text, skill_name_of
from .skill_creator import parse_case

FORMAT = "Driftproof eval set"
DEFAULT_THRESHOLD = 0.7  # Driftproof's lib/skill.js, for a case that gives none
RUBRIC_KEYS = ("rubric", "criteria")
THRESHOLD_KEYS = ("pass_threshold", "threshold")
OWN_KEYS = (*RUBRIC_KEYS, *THRESHOLD_KEYS, "claim", "grounding", "checks")
TOP_KEYS = ("skill", "skill_name", "cases", "version", "format")
CHECK_SHAPE = "check objects ({name, kind: regex | contains | not_contains, pattern | value})"


def parse_driftproof(data: Mapping[str, Any], path: Path) -> EvalsFile:
    name, note, named = skill_name_of(data, ("skill", "skill_name"), path)
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise bad(path, "cases", "must be a non-empty list of cases")
    check_sizes(path, cases, "cases")
    found: list[EvalCase] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(cases):
        case = parse_driftproof_case(entry, path, f"cases[{i}]", i)
        if case.id in seen:
            raise bad(
                path, f"cases[{i}].id", f"duplicate id {case.id!r}: cases[{seen[case.id]}] too"
            )
        seen[case.id] = i
        found.append(case)
    return EvalsFile(
        skill_name=name,
        evals=tuple(found),
        extra=tuple(str(k) for k in data if k not in TOP_KEYS),
        notes=(note,) if note else (),
        source_format=FORMAT,
        list_key="cases",
        named=named,
    )


def parse_driftproof_case(entry: Any, path: Path, where: str, index: int) -> EvalCase:
    if not isinstance(entry, Mapping):
        raise bad(path, where, "must be an object with id, prompt and rubric")
    base = parse_case({k: v for k, v in entry.items() if k not in OWN_KEYS}, path, where, index)
    claim = _text(entry, "claim", path, where)
    grounding = _text(entry, "grounding", path, where)
    rubric_key = next((k for k in RUBRIC_KEYS if k in entry), RUBRIC_KEYS[0])
    rubric = entry.get(rubric_key)
    threshold = _threshold(entry, path, where)
    checks = read_assertions(path, f"{where}.checks", entry.get("checks"), shape=CHECK_SHAPE)
    if checks.statements:
        raise bad(path, f"{where}.checks", f"must hold {CHECK_SHAPE}, not statements")
    gating, share = Checks(), None
    if isinstance(rubric, Mapping):  # {checks, pass_threshold}: the checks decide
        gating, share = _rubric_object(path, f"{where}.{rubric_key}", rubric)
        rubric = None
    elif rubric is not None and not is_text(rubric):
        raise bad(path, f"{where}.{rubric_key}", "must be a non-empty string (what a model grades)")
    if rubric is None and not gating.judges and not base.expectations and not base.checks:
        raise bad(path, f"{where}.rubric", "must be a non-empty string (what a model grades)")
    source = {"grounding": grounding} if grounding else {}
    return EvalCase(
        id=base.id,
        prompt=base.prompt,
        expected_output=base.expected_output,
        files=base.files,
        expectations=base.expectations,
        name=base.name,
        extra=base.extra,
        checks=base.checks + gating.judges,
        threshold=share,
        rubric=str(rubric).strip() if rubric is not None else None,
        rubric_threshold=(threshold if threshold is not None else DEFAULT_THRESHOLD)
        if rubric is not None
        else None,
        observers=observers_of(checks.judges),
        category=base.category,
        description=claim or "",
        source=source,
        dropped=base.dropped + checks.dropped + gating.dropped,
    )


def observers_of(judges: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    """Each check as an observer named after it (`x-name`, else its type), names made unique."""
    out: list[dict[str, Any]] = []
    taken: set[str] = set()
    for judge in judges:
        config = {k: v for k, v in judge.items() if k != "x-name"}
        name = str(judge.get("x-name") or judge["type"])
        unique, n = name, 2
        while unique in taken:
            unique, n = f"{name}-{n}", n + 1
        taken.add(unique)
        out.append({"name": unique, **config})
    return tuple(out)


def _text(entry: Mapping[str, Any], key: str, path: Path, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not is_text(value):
        raise bad(path, f"{where}.{key}", "must be a non-empty string")
    return str(value).strip()


def _threshold(entry: Mapping[str, Any], path: Path, where: str) -> float | None:
    """The case's pass threshold: a share of the rubric's 0..1 score."""
    key = next((k for k in THRESHOLD_KEYS if k in entry), None)
    if key is None:
        return None
    value = entry[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise bad(
            path,
            f"{where}.{key}",
            f"must be a number from 0 to 1 (the share of the rubric's score); got {value!r}",
        )
    return float(value)


def _rubric_object(
    path: Path, where: str, rubric: Mapping[str, Any]
) -> tuple[Checks, float | None]:
    """`{checks, pass_threshold}`: the checks as judges, and the share of them that must pass
    (a threshold above 1 is a number of checks)."""
    checks = read_assertions(path, f"{where}.checks", rubric.get("checks"), shape=CHECK_SHAPE)
    if checks.statements:
        raise bad(path, f"{where}.checks", f"must hold {CHECK_SHAPE}, not statements")
    checks = Checks(
        judges=checks.judges,
        dropped=checks.dropped
        + tuple(
            f"{where}.{k}: no place in a task suite"
            for k in rubric
            if k not in ("checks", "pass_threshold")
        ),
    )
    threshold = rubric.get("pass_threshold")
    if threshold is None:
        return checks, None
    return checks, check_share(path, f"{where}.pass_threshold", threshold, len(checks.judges))


def check_share(path: Path, where: str, threshold: Any, count: int) -> float:
    """A pass threshold over `count` checks as a share: one from 0 to 1 is a share already;
    a whole number above 1 counts checks (2 of 4: 0.5)."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise bad(path, where, "must be a number")
    if 0 <= threshold <= 1:
        return float(threshold)
    if float(threshold).is_integer() and 1 < threshold <= count:
        return threshold / count
    raise bad(
        path,
        where,
        f"must be a share between 0 and 1, or a number of checks (at most {count}); "
        f"got {threshold!r}",
    )


__all__ = ["FORMAT", "check_share", "observers_of", "parse_driftproof", "parse_driftproof_case"]
