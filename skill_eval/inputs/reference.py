"""A task's `reference`: a known-good output the suite's author wrote, and the empty output, as
the judges would see them after an attempt.

    reference: "# acme 2.1.0\\n## Added\\n..."                    # a text task
    reference: {text: "Wrote report.md", files: {report.md: "..."}, tools: [{name: Write}]}

The object form is the mock executor's scripted work (executors/mock_work.py): its files are
written over the task's input files in a fresh temporary workspace and its tools are the
transcript, so a file or tool judge reads a reference exactly as it reads an attempt. The
empty output is an attempt that did nothing: no text, no tool call, no file written.

A reference is suite data, not candidate output, but it is bounded all the same (at most
MAX_REFERENCE_CHARS characters of text and file content, MAX_REFERENCE_FILES files and
MAX_REFERENCE_TOOLS tool calls), and it is never sent to the model under test.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from ..core.model import Task
from ..core.work import ToolCall, Work

MAX_REFERENCE_CHARS = 256 * 1024
MAX_REFERENCE_FILES = 100
MAX_REFERENCE_TOOLS = 200
Sample = Literal["reference", "empty"]


def _size(reference: Any) -> int:
    if isinstance(reference, str):
        return len(reference)
    files = reference.get("files")
    contents = files.values() if isinstance(files, Mapping) else ()
    text = reference.get("text")
    return (len(text) if isinstance(text, str) else 0) + sum(
        len(c) for c in contents if isinstance(c, str)
    )


def reference_problems(task: Mapping[str, Any], agent: bool) -> list[tuple[str, str]]:
    """What the suite schema cannot say about a task's `reference` (its shape is the schema's):
    (field, message) pairs. `agent`: whether the task is an agent task (it has a workspace
    to write files in)."""
    if "reference" not in task:
        return []
    reference = task["reference"]
    if "query" in task or "should_trigger" in task:
        return [("reference", "a trigger task takes no reference: its judge is implied")]
    if not isinstance(reference, str | Mapping):
        return []  # the schema has said what it must be
    found: list[tuple[str, str]] = []
    size = _size(reference)
    if size > MAX_REFERENCE_CHARS:
        found.append(
            (
                "reference",
                f"holds {size} characters of text and files; a reference holds at most "
                f"{MAX_REFERENCE_CHARS}",
            )
        )
    files = reference.get("files") if isinstance(reference, Mapping) else None
    tools = reference.get("tools") if isinstance(reference, Mapping) else None
    if isinstance(files, Mapping):
        from ..executors.mock_work import path_problem  # the mock executor's own rule

        if files and not agent:
            found.append(
                (
                    "reference.files",
                    "only an agent task (files: or allowed_tools:) has a workspace to "
                    "write files in",
                )
            )
        if len(files) > MAX_REFERENCE_FILES:
            found.append(("reference.files", f"at most {MAX_REFERENCE_FILES} files"))
        found += [
            (f"reference.files[{path!r}]", "must be a path relative to the workspace, no '..'")
            for path in files
            if path_problem(str(path)) is not None
        ]
    if isinstance(tools, list) and len(tools) > MAX_REFERENCE_TOOLS:
        found.append(("reference.tools", f"at most {MAX_REFERENCE_TOOLS} tool calls"))
    if size == 0 and not files and not tools:
        found.append(
            (
                "reference",
                "is empty: a reference is a known-good output, and a judge must fail an empty one",
            )
        )
    return found


def _parts(
    reference: str | Mapping[str, Any],
) -> tuple[str, Mapping[str, str], tuple[ToolCall, ...]]:
    if isinstance(reference, str):
        return reference, {}, ()
    tools = tuple(
        ToolCall(name=str(c["name"]), input=dict(c.get("input") or {}), ok=bool(c.get("ok", True)))
        for c in reference.get("tools") or ()
    )
    return str(reference.get("text") or ""), dict(reference.get("files") or {}), tools


@contextmanager
def sample_work(task: Task, suite_dir: Path, sample: Sample) -> Iterator[Work]:
    """The work of `task`'s reference (the task must have one) or of the empty output, as a
    judge sees an attempt's. An agent task gets a fresh temporary workspace holding its input
    files (and the reference's files), deleted on exit; nothing is written anywhere else."""
    text, files, tools = ("", {}, ()) if sample == "empty" else _parts(task.reference or "")
    if not task.is_agent_task:
        yield Work(text=text, transcript=tools)
        return
    from ..core.task_files import expand_task_files
    from ..core.workspace import AttemptWorkspace  # the runner's own workspace
    from ..executors.mock_work import write_files

    workspace = AttemptWorkspace.create()
    try:
        workspace.copy_in(expand_task_files(task.files, suite_dir))
        write_files(workspace.path, files)
        yield Work(text=text, transcript=tools, files=workspace.snapshot())
    finally:
        workspace.finish(keep=False)


__all__ = [
    "MAX_REFERENCE_CHARS",
    "MAX_REFERENCE_FILES",
    "MAX_REFERENCE_TOOLS",
    "Sample",
    "reference_problems",
    "sample_work",
]
