"""One reader for the eval sets skills carry, whatever wrote them, and where a skill keeps them.

    skill-creator / agentskills.io   {skill_name, evals: [{id, prompt, expected_output, files,
                                      expectations | assertions}]}      (interop/formats.py)
    Driftproof                       {skill, cases: [{id, prompt, claim, files,
                                      rubric: {pass_threshold, checks: [{type, pattern|value}]}}]}
    trigger set                      [{query, should_trigger}]

A Driftproof case is an eval: its `claim` a statement graded by a model, its rubric's checks
deterministic judges of which `pass_threshold` (a share 0..1, or a count of checks) must pass.
`read_eval_set` tells the shapes apart by their keys; the import (interop/importer.py) maps
every one to tasks and judges the same way (references/interop.md).

A skill keeps its evals in `<skill>/evals/`: `evals.json` and a trigger set beside it
(`trigger-eval.json` or `trigger_eval.json`), or a suite of our own, `task_suite.yaml`
(`find_skill_evals`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .assertions import Checks, bad, is_text, read_assertions
from .formats import (
    EvalCase,
    EvalsFile,
    TriggerQuery,
    parse_case,
    parse_evals,
    parse_trigger_set,
    read_json,
    skill_name_of,
)

DRIFTPROOF = "Driftproof eval set"
EVALS_FOLDER = "evals"
EVALS_FILE = "evals.json"
SUITE_FILE = "task_suite.yaml"
TRIGGER_FILES = (
    "trigger-eval.json",
    "trigger_eval.json",
    "trigger-evals.json",
    "trigger_evals.json",
)
CASE_KEYS = ("id", "prompt", "claim", "rubric", "files", "name", "expected_output")
RUBRIC_KEYS = ("pass_threshold", "checks")


def is_trigger_set(data: Any) -> bool:
    """Whether JSON data is a trigger set (a list of objects with `query`) rather than evals."""
    return isinstance(data, list) and any(isinstance(e, Mapping) and "query" in e for e in data)


def read_eval_set(path: Path) -> EvalsFile:
    """The evals of an evals.json of any shape above; a UsageError naming file, eval and field
    when it cannot be read."""
    data = read_json(path, "eval set")
    if is_trigger_set(data):
        raise bad(path, "top level", "is a trigger set ([{query, should_trigger}]), not evals")
    if isinstance(data, Mapping) and "cases" in data and "evals" not in data:
        return parse_driftproof(data, path)
    return parse_evals(data, path)


def read_trigger_set(path: Path) -> list[TriggerQuery]:
    return parse_trigger_set(read_json(path, "trigger eval set"), path)


def parse_driftproof(data: Mapping[str, Any], path: Path) -> EvalsFile:
    name, note = skill_name_of(data, ("skill", "skill_name"), path)
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise bad(path, "cases", "must be a non-empty list of cases")
    found: list[EvalCase] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(cases):
        where = f"cases[{i}]"
        if not isinstance(entry, Mapping):
            raise bad(path, where, "must be an object with id, prompt and claim or rubric")
        base = parse_case({k: v for k, v in entry.items() if k in CASE_KEYS}, path, where, i)
        if base.id in seen:
            raise bad(path, f"{where}.id", f"duplicate id {base.id!r}: cases[{seen[base.id]}] too")
        seen[base.id] = i
        claim = entry.get("claim")
        if claim is not None and not is_text(claim):
            raise bad(path, f"{where}.claim", "must be a non-empty string")
        checks, threshold = _rubric(path, f"{where}.rubric", entry.get("rubric"))
        statements = (str(claim).strip(),) if claim is not None else ()
        found.append(
            EvalCase(
                id=base.id,
                prompt=base.prompt,
                expected_output=base.expected_output,
                files=base.files,
                expectations=statements,
                name=base.name,
                extra=tuple(str(k) for k in entry if k not in CASE_KEYS),
                checks=checks.judges,
                threshold=threshold,
                dropped=checks.dropped,
            )
        )
    return EvalsFile(
        skill_name=name,
        evals=tuple(found),
        extra=tuple(str(k) for k in data if k not in ("skill", "skill_name", "cases")),
        notes=(note,) if note else (),
        source_format=DRIFTPROOF,
        list_key="cases",
    )


def _rubric(path: Path, where: str, rubric: Any) -> tuple[Checks, float | None]:
    if rubric is None:
        return Checks(), None
    if not isinstance(rubric, Mapping):
        raise bad(path, where, "must be an object with checks and pass_threshold")
    shape = "check objects ({type: regex | contains, pattern | value})"
    checks = read_assertions(path, f"{where}.checks", rubric.get("checks"), shape=shape)
    checks = Checks(
        judges=checks.judges,
        dropped=checks.dropped
        + tuple(f"{where}.{k}: no place in a task suite" for k in rubric if k not in RUBRIC_KEYS),
    )
    if checks.statements:
        raise bad(path, f"{where}.checks", f"must hold {shape}, not statements")
    threshold = rubric.get("pass_threshold")
    if threshold is None:
        return checks, None
    count = len(checks.judges)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise bad(path, f"{where}.pass_threshold", "must be a number")
    if 0 <= threshold <= 1:
        return checks, float(threshold)
    if float(threshold).is_integer() and 1 < threshold <= count:
        return checks, threshold / count  # a count of checks
    raise bad(
        path,
        f"{where}.pass_threshold",
        f"must be a share between 0 and 1, or a number of checks (at most {count}); "
        f"got {threshold!r}",
    )


@dataclass(frozen=True)
class SkillEvals:
    """Where a skill keeps its evals (None: not there)."""

    skill_dir: Path
    evals_json: Path | None = None
    trigger_set: Path | None = None
    suite: Path | None = None  # evals/task_suite.yaml, when there is no evals.json

    @property
    def found(self) -> bool:
        return any(p is not None for p in (self.evals_json, self.trigger_set, self.suite))

    def describe(self) -> str:
        parts = [p.name for p in (self.evals_json, self.trigger_set, self.suite) if p]
        return " + ".join(parts) if parts else "no evals"


def find_skill_evals(skill_dir: Path) -> SkillEvals:
    """The eval files of the skill in `skill_dir` (the folder holding SKILL.md)."""
    folder = skill_dir / EVALS_FOLDER
    evals = folder / EVALS_FILE
    triggers = next((folder / n for n in TRIGGER_FILES if (folder / n).is_file()), None)
    suite = folder / SUITE_FILE
    return SkillEvals(
        skill_dir=skill_dir,
        evals_json=evals if evals.is_file() else None,
        trigger_set=triggers,
        suite=suite if suite.is_file() and not evals.is_file() else None,
    )


def eval_set_kind(path: Path) -> str:
    """`evals` or `triggers`: what a JSON file given as --task-suite holds."""
    data = read_json(path, "eval set")
    return "triggers" if is_trigger_set(data) else "evals"


def require_skill_md(skill_dir: Path) -> None:
    if not (skill_dir / "SKILL.md").is_file():
        raise UsageError(f"{skill_dir}: not a skill folder (no SKILL.md)", path=str(skill_dir))


__all__ = [
    "DRIFTPROOF",
    "SkillEvals",
    "eval_set_kind",
    "find_skill_evals",
    "is_trigger_set",
    "parse_driftproof",
    "read_eval_set",
    "read_trigger_set",
    "require_skill_md",
]
