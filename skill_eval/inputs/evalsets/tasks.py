"""The tasks an eval set maps to, whatever its shape: one per eval (its prompt, its input
files, its judge made of every check it gives, its observers) and one trigger task per query.

expected_output is a description of success in words: it is the grader's context when the
eval has statements a model grades, the task's description when it has only other checks,
and becomes one graded statement only when the eval gives nothing else to judge by (said so).
It never becomes the task's `reference` (a reference is an output every judge must pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checks import judge_for
from .records import EvalCase, EvalsFile, bad
from .triggers import TriggerSet

# Set on a judge whose single statement was made from expected_output (the eval had nothing
# else): export leaves it out again, so evals.json -> suite -> evals.json holds.
DERIVED_KEY = "x-derived-from-expected-output"


@dataclass
class Mapped:
    """The tasks, where each came from (`evals[3]`, `queries[0]`: for messages), and one line
    for each thing left behind."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def task_id_of(case: EvalCase) -> str:
    if case.name is not None:
        return case.name
    return f"eval-{case.id}" if isinstance(case.id, int) else str(case.id)


def posix_relative(value: str) -> str:
    """A relative path as the suite writes it: `/` between parts (evals.json written on
    Windows may use `\\`)."""
    return value.replace("\\", "/")


def files_note(files: Sequence[str]) -> str:
    """What is appended to the prompt of an eval with input files. skill-creator tells its
    executor "Input files: ..." beside the prompt; a suite task has only its prompt, so the
    list goes there (export strips exactly this text again)."""
    return f"\n\nInput files (in your working directory): {', '.join(files)}" if files else ""


def judge_of(case: EvalCase, dropped: list[str], where: str) -> dict[str, Any] | None:
    """The eval's judge (checks.judge_for); with nothing to judge by but expected_output (or,
    lacking that, the eval's description of what it checks), one statement made from it; with
    none, None (the eval is left out)."""
    statements = list(case.expectations)
    derived = False
    nothing = not statements and not case.checks and case.rubric is None
    described = case.expected_output.strip() or case.description.strip()
    if nothing and described:
        statements = [f"The result meets this description of success: {described}"]
        derived = True
        used = "expected_output" if case.expected_output.strip() else "its description"
        dropped.append(f"{where}: no checks; graded as one statement made from {used}")
    judge = judge_for(
        statements,
        case.checks,
        threshold=case.threshold,
        expected_output=case.expected_output,
        rubric=case.rubric,
        rubric_threshold=case.rubric_threshold,
    )
    if judge is None:
        dropped.append(
            f"{where}: no checks, no expected_output, no description: nothing to judge, "
            "eval not imported"
        )
        return None
    if derived:
        judge[DERIVED_KEY] = True
    return judge


def _description(case: EvalCase) -> str:
    """The task's description: the eval's claim, and expected_output when no model-graded
    statement takes it as context."""
    parts = [case.description] if case.description else []
    if case.expected_output.strip() and not case.expectations:
        parts.append(f"Expected output: {case.expected_output.strip()}")
    return "\n".join(parts)


TEXT_JUDGES = ("contains", "not-contains", "regex", "not-regex")


def over_work(config: Any) -> Any:
    """A judge config whose text judges (with no `file` of their own) read the whole work:
    on an agent task a check may hold in the reply or in a file the agent wrote."""
    if isinstance(config, list):
        return [over_work(c) for c in config]
    if not isinstance(config, dict):
        return config
    out = {k: over_work(v) if k in ("judges", "judge") else v for k, v in config.items()}
    if out.get("type") in TEXT_JUDGES and "file" not in out:
        out["scope"] = "work"
    return out


def eval_task(case: EvalCase, evals: EvalsFile, judge: dict[str, Any]) -> dict[str, Any]:
    files = [posix_relative(f) for f in case.files]
    if files:  # an agent task: its checks read the reply and the files it wrote
        judge = over_work(judge)
    task: dict[str, Any] = {"id": task_id_of(case), "prompt": case.prompt + files_note(files)}
    if description := _description(case):
        task["description"] = description
    if case.category is not None:
        task["category"] = case.category
    if case.timeout_seconds is not None:
        task["timeout_seconds"] = case.timeout_seconds
    if files:
        task["files"] = files
    task["judge"] = judge
    if case.observers:
        task["observers"] = [over_work(dict(o)) if files else dict(o) for o in case.observers]
    task["source"] = {"format": evals.source_format, "eval_id": case.id, **case.source}
    return task


def map_tasks(
    evals: EvalsFile | None, triggers: TriggerSet | None, evals_path: Path | None,
    trigger_path: Path | None,
) -> Mapped:  # fmt: skip
    """The suite's tasks; `dropped` gains a line per thing left behind. Two tasks with one id
    is bad input naming both."""
    out = Mapped()
    owner: dict[str, str] = {}

    def claim(task_id: str, where: str, path: Path | None) -> None:
        if task_id in owner:
            raise bad(path or Path("."), where, f"task id {task_id!r} is also {owner[task_id]}'s")
        owner[task_id] = where

    names = [case.name for case in evals.evals] if evals is not None else []
    for i, case in enumerate(evals.evals if evals is not None else ()):
        where = f"{evals.list_key}[{i}]" if evals is not None else ""
        out.dropped += [f"{where}.{key}: no place in a task suite" for key in case.extra]
        out.dropped += list(case.dropped)
        judge = judge_of(case, out.dropped, where)
        if judge is None or evals is None:
            continue
        task = eval_task(case, evals, judge)
        if case.name is not None and names.count(case.name) > 1:  # a title, not an id
            task["id"] = f"eval-{case.id}" if isinstance(case.id, int) else str(case.id)
            out.dropped.append(f"{where}: name {case.name!r} is not unique; task id {task['id']!r}")
        claim(task["id"], where, evals_path)
        out.tasks.append(task)
        out.origins.append(where)
    for i, query in enumerate(triggers.queries if triggers is not None else ()):
        key = triggers.list_key if triggers is not None else ""
        where = f"trigger set {key}[{i}]"
        out.dropped += [f"{where}.{k}: no place in a trigger task" for k in query.extra]
        given = triggers.ids[i] if triggers is not None else None
        task_id = given if given is not None and given not in owner else f"trigger-{i + 1}"
        claim(task_id, where, trigger_path or evals_path)
        out.tasks.append(
            {"id": task_id, "query": query.query, "should_trigger": query.should_trigger}
        )
        out.origins.append(where)
    return out


__all__ = [
    "DERIVED_KEY",
    "Mapped",
    "eval_task",
    "files_note",
    "judge_of",
    "map_tasks",
    "task_id_of",
]
