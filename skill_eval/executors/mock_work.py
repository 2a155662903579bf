"""Scripted agent work for the mock executor: a `--mock-outputs` entry may be an object

    {text: "Done.", files: {report.md: "# Sales\\n..."}, tools: [{name: Skill, input: {skill: x}}]}

instead of plain text. The mock writes `files` into the attempt's workspace (confined to it:
no absolute paths, no `..`) and returns `tools` as the transcript, so every judge of files and
tool calls runs end to end in CI without a model. For a trigger task, `{triggered: true}`
makes the arm's skill invoked (a `Skill` call naming it), `{triggered: false}` not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.model import clean_text
from ..core.work import ToolCall

OUTPUT_KEYS = frozenset({"text", "files", "tools", "triggered"})


@dataclass(frozen=True)
class ScriptedWork:
    text: str
    files: Mapping[str, str]
    tools: tuple[ToolCall, ...]
    triggered: bool | None = None  # trigger tasks: whether the arm's skill gets invoked


def path_problem(path: str) -> str | None:
    if not path or path.startswith(("/", "\\")) or ":" in path[:3]:
        return f"files: {path!r} must be a path relative to the workspace"
    if ".." in PurePosixPath(path.replace("\\", "/")).parts:
        return f"files: {path!r} must not contain '..'"
    return None


def check_output(value: Any) -> str | None:
    """Why a scripted output is not usable (text, or the object above), or None."""
    if isinstance(value, str):
        return None
    if not isinstance(value, Mapping):
        return "output must be a string or a mapping with text, files and tools"
    extra = sorted(str(k) for k in value if k not in OUTPUT_KEYS)
    if extra:
        return f"unknown key {extra[0]!r}; allowed: files, text, tools, triggered"
    if not isinstance(value.get("triggered", False), bool):
        return "triggered: must be true or false"
    if not isinstance(value.get("text", ""), str):
        return "text: must be a string"
    files = value.get("files") or {}
    if not isinstance(files, Mapping):
        return "files: must be a mapping of workspace path to content"
    for path, content in files.items():
        if not isinstance(path, str) or not isinstance(content, str):
            return "files: each entry must map a path to text content"
        if (problem := path_problem(path)) is not None:
            return problem
    tools = value.get("tools") or []
    if not isinstance(tools, list):
        return "tools: must be a list of {name, input}"
    for i, call in enumerate(tools):
        if (
            not isinstance(call, Mapping)
            or not isinstance(call.get("name"), str)
            or not isinstance(call.get("input", {}), Mapping)
        ):
            return f"tools[{i}]: must be a mapping with a name (string) and an input (mapping)"
    return None


def clean_output(value: Any) -> Any:
    """Scripted text is model output as far as the run is concerned: lone surrogates go."""
    if isinstance(value, str):
        return clean_text(value)
    out = dict(value)
    if "text" in out:
        out["text"] = clean_text(out["text"])
    if out.get("files"):
        out["files"] = {p: clean_text(c) for p, c in out["files"].items()}
    return out


def scripted(value: Any) -> ScriptedWork:
    if isinstance(value, str):
        return ScriptedWork(value, {}, ())
    tools = tuple(
        ToolCall(name=str(c["name"]), input=dict(c.get("input") or {}), ok=bool(c.get("ok", True)))
        for c in value.get("tools") or ()
    )
    triggered = value.get("triggered")
    return ScriptedWork(
        str(value.get("text", "")),
        dict(value.get("files") or {}),
        tools,
        triggered if isinstance(triggered, bool) else None,
    )


def write_files(workspace: Path, files: Mapping[str, str]) -> None:
    """Write scripted files inside `workspace`; a path that would land outside is refused
    (checked on the resolved path too, so a symlink planted in a task's files cannot lead
    out)."""
    root = workspace.resolve()
    for path, content in files.items():
        problem = path_problem(path)
        target = (workspace / path).resolve()
        if problem is not None or not target.is_relative_to(root):
            raise ValueError(problem or f"files: {path!r} would land outside the workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
