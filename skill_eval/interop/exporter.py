"""`skill-eval export`: a task suite as skill-creator's evals.json (and trigger eval set).

The reverse of importer.py where there is one: each task with an `expectations` judge (alone
or inside `all`) becomes an eval with its statements and expected_output (without one, the
text of the task's `reference`: a known-good output shows the grader what success looks
like; its files and tool calls have no place in evals.json and are listed); its input files are
copied below the skill root at the same relative path. The eval id is the one the task was
imported with, else N of a task id `eval-N`, else the next free integer (the task id then
goes to `eval_name`). Judges with no evals.json equivalent (contains, pytest, llm-rubric, ...)
and task settings evals.json cannot hold are listed in `ExportResult.dropped`; the task is
still exported, with the statements it has.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.paths import atomic_write_text
from ..core.safeyaml import load_yaml_file
from ..errors import UsageError
from ..inputs.evalsets.records import EvalCase, EvalsFile, TriggerQuery, default_files_root
from ..inputs.evalsets.tasks import DERIVED_KEY, files_note
from ..inputs.evalsets.triggers import trigger_set_document
from ..inputs.suite import load_suite
from .files import copy_all, plan_copies, writing
from .importer import SOURCE_FORMAT

_EVAL_N = re.compile(r"^eval-(\d+)$")
CARRIED = {"id", "prompt", "files", "judge", "source", "query", "should_trigger", "reference"}


@dataclass(frozen=True)
class ExportResult:
    evals_path: Path
    evals: int
    trigger_queries: int
    trigger_path: Path | None
    files_copied: int
    dropped: list[str] = field(default_factory=list)


def statements_of(
    judge: Mapping[str, Any], where: str, dropped: list[str]
) -> tuple[list[str], str]:
    """(statements, expected_output) a judge holds; `dropped` gains a line per judge with no
    evals.json equivalent. `all` is a conjunction, as evals.json's list is: its children's
    statements are gathered."""
    kind = judge.get("type")
    if kind == "expectations":
        derived = bool(judge.get(DERIVED_KEY))  # made from expected_output by the import
        return (
            [] if derived else [str(s) for s in judge.get("expectations") or ()],
            str(judge.get("expected_output") or ""),
        )
    if kind == "all":
        statements: list[str] = []
        expected = ""
        for i, child in enumerate(judge.get("judges") or ()):
            found, text = statements_of(child, f"{where}.judges[{i}]", dropped)
            statements += found
            expected = expected or text
        return statements, expected
    dropped.append(f"{where}: judge type {kind!r} has no evals.json equivalent")
    return [], ""


def reference_text(raw: Mapping[str, Any], expected: str, where: str, dropped: list[str]) -> str:
    """The eval's expected_output: the judge's, else the text of the task's reference (a
    known-good output shows the grader what success looks like); what has no place goes to
    `dropped`."""
    reference = raw.get("reference")
    if reference is None:
        return expected
    if expected:
        dropped.append(
            f"{where}.reference: no place in evals.json (expected_output is the judge's)"
        )
        return expected
    if isinstance(reference, str):
        return reference
    if reference.get("files") or reference.get("tools"):
        dropped.append(
            f"{where}.reference: its files and tool calls have no place in evals.json"
            + ("; its text became expected_output" if reference.get("text") else "")
        )
    return str(reference.get("text") or "")


def _imported_id(raw: Mapping[str, Any]) -> int | str | None:
    source = raw.get("source")
    if isinstance(source, Mapping) and source.get("format") == SOURCE_FORMAT:
        value = source.get("eval_id")
        if isinstance(value, int | str) and not isinstance(value, bool):
            return value
    return None


def eval_ids(raws: list[Mapping[str, Any]]) -> list[int | str]:
    """One unique evals.json id per task: as imported, else N of `eval-N`, else the next
    free integer."""
    chosen: list[int | str | None] = []
    used: set[int | str] = set()
    for raw in raws:
        match = _EVAL_N.match(str(raw["id"]))
        value = _imported_id(raw)
        if value is None and match:
            value = int(match.group(1))
        if value is not None and value in used:
            value = None
        if value is not None:
            used.add(value)
        chosen.append(value)
    next_free = max([v for v in used if isinstance(v, int)], default=0) + 1
    out: list[int | str] = []
    for value in chosen:
        if value is None:
            value = next_free
            next_free += 1
        out.append(value)
    return out


def _refuse_existing(path: Path, force: bool) -> None:
    if os.path.lexists(path) and not force:
        raise UsageError(f"{path}: already exists (use --force to overwrite)", path=str(path))
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise UsageError(f"{path}: exists and is not a regular file", path=str(path))


def _eval_case(
    raw: Mapping[str, Any],
    where: str,
    eval_id: int | str,
    dropped: list[str],
    entries: list[tuple[str, str]],
) -> EvalCase:
    """The eval of one ordinary task; what evals.json has no place for is added to `dropped`,
    its input files (where, path) to `entries`."""
    dropped += [
        f"{where}.{key}: no place in evals.json"
        for key in raw
        if key not in CARRIED and not str(key).startswith("x-")
    ]
    statements, expected = statements_of(raw["judge"], f"{where}.judge", dropped)
    default_name = f"eval-{eval_id}" if isinstance(eval_id, int) else str(eval_id)
    files = tuple(str(f) for f in raw.get("files") or ())
    entries += [(f"{where}.files[{j}]", f) for j, f in enumerate(files)]
    prompt = str(raw["prompt"])
    note = files_note(files)
    if note and prompt.endswith(note):  # added by import: evals.json lists files apart
        prompt = prompt[: -len(note)]
    return EvalCase(
        id=eval_id,
        prompt=prompt,
        expected_output=reference_text(raw, expected, where, dropped),
        files=files,
        expectations=tuple(statements),
        name=None if raw["id"] == default_name else str(raw["id"]),
    )


def export_suite(
    suite_file: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    trigger_set: str | os.PathLike[str] | None = None,
    files_root: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ExportResult:
    """Write evals.json for the suite at `suite_file` to `output` (+ the trigger tasks to
    `trigger_set`), input files below `files_root` (default: the skill root `output`
    implies). Refuses existing outputs unless `force`."""
    suite = load_suite(suite_file)
    _, data, _ = load_yaml_file(suite.path)
    raw_tasks: list[Mapping[str, Any]] = list(data["tasks"])
    out_path = Path(output)
    trigger_path = Path(trigger_set) if trigger_set is not None else None
    _refuse_existing(out_path, force)
    if trigger_path is not None:
        _refuse_existing(trigger_path, force)
    dropped = [
        f"suite {key}: no place in evals.json"
        for key in data
        if key in ("allowed_tools", "observers")
    ]
    triggers: list[TriggerQuery] = []
    eval_raws = [r for r in raw_tasks if "should_trigger" not in r]
    ids = iter(eval_ids(eval_raws))
    cases: list[EvalCase] = []
    entries: list[tuple[str, str]] = []
    for index, raw in enumerate(raw_tasks):
        where = f"tasks[{index}] ({raw['id']})"
        if "should_trigger" in raw:
            triggers.append(TriggerQuery(str(raw["query"]), bool(raw["should_trigger"])))
            continue
        cases.append(_eval_case(raw, where, next(ids), dropped, entries))
    if triggers and trigger_path is None:
        dropped.append(
            f"{len(triggers)} trigger task(s): give --trigger-set FILE to export "
            "them as a trigger eval set"
        )
    root = Path(files_root) if files_root is not None else default_files_root(out_path)
    plan = plan_copies(entries, suite.directory, root.resolve(), source=suite.path, force=force)
    document = EvalsFile(skill_name=suite.skill_id, evals=tuple(cases)).to_dict()
    with writing():
        copied = copy_all(plan)
        atomic_write_text(out_path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        if trigger_path is not None and triggers:
            atomic_write_text(
                trigger_path,
                json.dumps(trigger_set_document(triggers), indent=2, ensure_ascii=False) + "\n",
            )
    return ExportResult(
        evals_path=out_path,
        evals=len(cases),
        trigger_queries=len(triggers) if trigger_path is not None else 0,
        trigger_path=trigger_path if triggers else None,
        files_copied=copied,
        dropped=dropped,
    )
