"""Driftproof's eval suites, as its public suites write them (driftproofhq/driftproof,
`suites/<skill>/evals.json`), and other eval sets that keep their evals under `cases`:

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
task's `source`. Every other field is read as skill_creator.py reads an eval. A rubric object
`{checks, pass_threshold}` (an earlier description of the format) is read too: its checks
gate, a threshold above 1 counting checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .operators import KIND_KEYS, typed_check
from .records import EvalCase, EvalsFile, bad, check_sizes, is_text, skill_name_of
from .skill_creator import parse_case

FORMAT = "Driftproof eval set"
CASES_FORMAT = "eval set (cases)"
DEFAULT_THRESHOLD = 0.7  # Driftproof's lib/skill.js, for a case that gives none
OWN_KEYS = ("claim", "grounding", "checks", "criteria")
TOP_KEYS = ("skill", "skill_name", "cases", "version", "format")


def is_driftproof(data: Mapping[str, Any]) -> bool:
    """Driftproof's own format: its `format` key, or cases graded by a rubric string."""
    cases = data.get("cases")
    graded = isinstance(cases, list) and any(
        isinstance(c, Mapping) and (is_text(c.get("rubric")) or "claim" in c) for c in cases
    )
    return data.get("format") == "agentskills.io/evals" or graded


def parse_driftproof(data: Mapping[str, Any], path: Path) -> EvalsFile:
    name, note, named = skill_name_of(data, ("skill", "skill_name"), path)
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise bad(path, "cases", "must be a non-empty list of cases")
    check_sizes(path, cases, "cases")
    ours = is_driftproof(data)
    found: list[EvalCase] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(cases):
        case = parse_driftproof_case(entry, path, f"cases[{i}]", i, ours)
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
        source_format=FORMAT if ours else CASES_FORMAT,
        list_key="cases",
        named=named,
    )


def parse_driftproof_case(
    entry: Any, path: Path, where: str, index: int, driftproof: bool = True
) -> EvalCase:
    if not isinstance(entry, Mapping):
        raise bad(path, where, "must be an object with id, prompt and rubric")
    rest = {k: v for k, v in entry.items() if k not in OWN_KEYS}
    if "rubric" not in rest and "criteria" in entry:
        rest["rubric"] = entry["criteria"]
    legacy = rest.get("rubric")
    if isinstance(legacy, Mapping):  # {checks, pass_threshold}: the checks decide
        rest.pop("rubric")
    base = parse_case(rest, path, where, index)
    claim = _text(entry, "claim", path, where)
    grounding = _text(entry, "grounding", path, where)
    observers, dropped = _observers(path, f"{where}.checks", entry.get("checks"))
    if isinstance(legacy, Mapping):
        gating, share, more = _rubric_object(path, f"{where}.rubric", legacy)
        base = replace(
            base, checks=base.checks + gating, threshold=share, dropped=base.dropped + more
        )
    threshold = base.rubric_threshold
    if base.rubric is not None and threshold is None and driftproof:
        threshold = DEFAULT_THRESHOLD
    return replace(
        base,
        rubric_threshold=threshold,
        observers=observers,
        description="\n".join(p for p in (claim, base.description) if p),
        source={"grounding": grounding} if grounding else {},
        dropped=base.dropped + dropped,
    )


def _observers(
    path: Path, where: str, value: Any
) -> tuple[tuple[dict[str, Any], ...], tuple[str, ...]]:
    """Each check as an observer named after it (`name`, else its kind), names made unique."""
    if value is None or value == []:
        return (), ()
    if not isinstance(value, list):
        raise bad(path, where, "must be a list of {name, kind, pattern | value} objects")
    out: list[dict[str, Any]] = []
    dropped: list[str] = []
    taken: set[str] = set()
    for i, entry in enumerate(value):
        spot = f"{where}[{i}]"
        kind_key = next((k for k in KIND_KEYS if isinstance(entry, Mapping) and k in entry), None)
        if kind_key is None:
            raise bad(path, spot, "must be a check object ({name, kind, pattern | value})")
        found = typed_check(path, spot, entry, kind_key)
        dropped += found.dropped
        for judge in found.judges:
            config = {k: v for k, v in judge.items() if k != "x-name"}
            name = str(judge.get("x-name") or judge["type"])
            unique, n = name, 2
            while unique in taken:
                unique, n = f"{name}-{n}", n + 1
            taken.add(unique)
            out.append({"name": unique, **config})
    return tuple(out), tuple(dropped)


def _text(entry: Mapping[str, Any], key: str, path: Path, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not is_text(value):
        raise bad(path, f"{where}.{key}", "must be a non-empty string")
    return str(value).strip()


def _rubric_object(
    path: Path, where: str, rubric: Mapping[str, Any]
) -> tuple[tuple[dict[str, Any], ...], float | None, tuple[str, ...]]:
    """`{checks, pass_threshold}`: the checks as judges, the share of them that must pass (a
    threshold above 1 is a number of checks), and what was left out."""
    checks = rubric.get("checks")
    if not isinstance(checks, list) or not checks:
        raise bad(path, f"{where}.checks", "must be a non-empty list of check objects")
    judges: list[dict[str, Any]] = []
    dropped = [
        f"{where}.{k}: no place in a task suite"
        for k in rubric
        if k not in ("checks", "pass_threshold")
    ]
    for i, entry in enumerate(checks):
        spot = f"{where}.checks[{i}]"
        kind_key = next((k for k in KIND_KEYS if isinstance(entry, Mapping) and k in entry), None)
        if kind_key is None:
            raise bad(path, spot, "must be a check object ({type, pattern | value})")
        found = typed_check(path, spot, entry, kind_key)
        judges += found.judges
        dropped += found.dropped
    threshold = rubric.get("pass_threshold")
    if threshold is None:
        return tuple(judges), None, tuple(dropped)
    share = check_share(path, f"{where}.pass_threshold", threshold, len(judges))
    return tuple(judges), share, tuple(dropped)


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


__all__ = ["FORMAT", "check_share", "is_driftproof", "parse_driftproof", "parse_driftproof_case"]
