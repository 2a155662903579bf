"""Judges of work, not only of words: `file-exists`, `tool-called`, `skill-used`, and the file
reading that lets `contains`, `not-contains`, `regex`, `equals` and `json-schema` judge a
workspace file (`file: report.md`) instead of the output text.

Files are what the attempt created or changed (`work.files`: its workspace, or the kept copy
on `rejudge`); tool calls are its transcript (`work.transcript`, completed calls only); a skill
is used by a Skill call naming it or a Read of its SKILL.md (core/transcript.py).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ..core.bounded import FileTooLarge, read_bounded, read_prefix
from ..core.model import JudgeResult, Task
from ..core.work import ToolCall, Work
from ..core.workspace import list_files
from ..executors.catalog import skill_invocations
from .base import JudgeContext, JudgeSpec
from .work_text import SCOPE as SCOPE
from .work_text import work_text

X_KEYS: dict[str, Any] = {"^x-": {}}
# `file:` on a text judge: a workspace path or glob (relative, never through `..`).
FILE_PATH = {
    "type": "string",
    "minLength": 1,
    "pattern": r"^(?![/\\])(?!.*(^|[/\\])\.\.([/\\]|$)).+$",
    "errorMessage": "must be a path or glob relative to the workspace (no leading /, no '..')",
}
WORKSPACE_PATH = FILE_PATH
_GLOB_CHARS = frozenset("*?[")
MATCH_TIMEOUT = 5.0


# --- the workspace's files --------------------------------------------------------------------


def workspace_files(work: Work) -> dict[str, Path | None]:
    """Workspace path -> where its content is (None when its workspace was not kept): the
    files the attempt created or changed, plus, when its workspace is at hand, every other
    regular file in it (the task's inputs), MAX_WORKSPACE_FILES at most."""
    found: dict[str, Path | None] = {}
    snapshot = work.files
    if snapshot is None:
        return found
    root = snapshot.root
    if root is not None and root.is_dir():
        for relative, _ in list_files(root).files:  # harness plumbing (.claude, ...) left out
            found[relative] = root / relative
    for f in snapshot.files:
        found[f.path] = (f.root / f.path) if f.root is not None else None
    return found


def matching(pattern: str, paths: Iterable[str]) -> list[str]:
    """The paths `pattern` names: itself, or a glob's matches (`*` crosses folders)."""
    if not _GLOB_CHARS & set(pattern):
        wanted = PurePosixPath(pattern.replace("\\", "/")).as_posix()
        return [p for p in paths if p == wanted]
    return sorted(p for p in paths if fnmatch.fnmatchcase(p, pattern))


def as_written(pattern: str) -> str:
    r"""A suite's pattern quoted as its author wrote it: `'\d+'`, where repr() would double
    every backslash (`'\\d+'`). Only unprintable characters are escaped."""
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in pattern) + "'"


def judge_file_or_text(
    file: str | None, work: Work, judge_text: Callable[[str], JudgeResult]
) -> JudgeResult:
    """`judge_text` on the output text, or with `file` on each matching workspace file (all
    must pass; the score is their mean). No such file fails: "report.md was not created"."""
    if file is None:
        return judge_text(work.text)
    files = workspace_files(work)
    names = matching(file, files)
    if not names:
        return JudgeResult(
            False,
            0.0,
            f"{file} was not created"
            if not _GLOB_CHARS & set(file)
            else f"no file matching {file} was created",
        )
    results: list[tuple[str, JudgeResult]] = []
    for name in names:
        where = files[name]
        if where is None:
            return JudgeResult.failure(
                f"{name}: its workspace was not kept, so its content "
                "cannot be read (run with --keep-workspaces all)"
            )
        try:
            text = read_bounded(where).decode("utf-8", "replace")
        except FileTooLarge as exc:  # the agent's doing: a failure, and nothing read
            return JudgeResult(False, 0.0, str(exc), data={"over_limit": True})
        except OSError as exc:
            return JudgeResult.failure(f"{name}: cannot read it: {exc.strerror or exc}")
        results.append((name, judge_text(text)))
    if len(results) == 1:
        name, only = results[0]
        return JudgeResult(
            only.passed,
            only.score,
            f"{name}: {only.details}",
            only.error,
            only.data,
            only.error_kind,
        )
    errors = [r for _, r in results if r.error]
    if errors:
        return errors[0]
    return JudgeResult(
        all(r.passed for _, r in results),
        sum(r.score for _, r in results) / len(results),
        "\n".join(f"{n}: {r.details}" for n, r in results),
    )


# What model-graded judges see of the work (`include_work: true`): changed files trimmed, each
# fenced as data, and a short summary of the tool calls.
SHOWN_FILE_CHARS = 4000
SHOWN_FILES = 10
SHOWN_CALLS = 30


def _fenced(text: str) -> str:
    import regex  # here, not at the top: `contains` imports this module, validate stays fast

    longest = max((len(run) for run in regex.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def describe_work(work: Work) -> str:
    """The output text, then (when the attempt changed files or called tools) its changed
    files with their content, trimmed and fenced, and a summary of its tool calls."""
    parts = [work.text]
    if work.files is not None and work.files.files:
        parts.append("## Files the assistant created or changed")
        for f in work.files.files[:SHOWN_FILES]:
            try:
                if f.root is None:
                    raise FileNotFoundError(f.path)
                # 4 bytes per character at most: enough to show, never the whole of a big file
                head = read_prefix(f.root / f.path, 4 * SHOWN_FILE_CHARS + 4)
                content = head.decode("utf-8", "replace")
            except OSError:
                content = "(content not available: its workspace was not kept)"
            if len(content) > SHOWN_FILE_CHARS:
                content = content[:SHOWN_FILE_CHARS] + f"\n... ({f.size} bytes in all, trimmed)"
            parts.append(f"### {f.path} ({f.size} bytes)\n{_fenced(content)}")
        if len(work.files.files) > SHOWN_FILES:
            parts.append(f"... and {len(work.files.files) - SHOWN_FILES} more files")
    if work.transcript:
        lines = []
        for call in work.transcript[:SHOWN_CALLS]:
            shown = json.dumps(dict(call.input), ensure_ascii=False, default=str)
            shown = shown if len(shown) <= 160 else shown[:157] + "..."
            lines.append(f"- {call.name} {shown}{'' if call.ok else ' (failed)'}")
        if len(work.transcript) > SHOWN_CALLS:
            lines.append(f"- ... and {len(work.transcript) - SHOWN_CALLS} more calls")
        parts.append("## Tool calls, in order\n" + _fenced("\n".join(lines)))
    return "\n\n".join(parts)


class TextOrFile:
    """A text judge that takes `file:` (it judges that workspace file's content instead of the
    output) and `scope: work` (the output and every file written, as one text). Subclasses set
    `self.file` and `self.scope` and define `judge_text(text)`."""

    file: str | None = None
    scope: str = "output"

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        if self.file is None and self.scope == "work":
            return self.judge_text(work_text(work))
        return judge_file_or_text(self.file, work, self.judge_text)

    def judge_text(self, output: str) -> JudgeResult:
        raise NotImplementedError


# --- file-exists ------------------------------------------------------------------------------


class FileExistsJudge:
    """Every path (or glob) exists in the workspace; with `absent: true`, none does."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.paths = list(config["paths"])
        self.absent = bool(config.get("absent", False))

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        files = list(workspace_files(work))
        found = {p: matching(p, files) for p in self.paths}
        if self.absent:
            present = [p for p, hits in found.items() if hits]
            ok = 1.0 - len(present) / len(self.paths)
            return JudgeResult(
                not present,
                ok,
                "present but must not be: "
                + ", ".join(f"{p} ({', '.join(found[p][:3])})" for p in present)
                if present
                else f"none of the {len(self.paths)} paths exists",
            )
        missing = [p for p, hits in found.items() if not hits]
        score = 1.0 - len(missing) / len(self.paths)
        return JudgeResult(
            not missing,
            score,
            "not created: " + ", ".join(missing)
            if missing
            else f"all {len(self.paths)} paths exist",
        )


# --- tool-called ------------------------------------------------------------------------------


def _input_matches(call: ToolCall, pattern: Any) -> bool:
    """A string pattern is searched in the input as compact JSON; a mapping's patterns are
    searched each in the string value of its own field (field-exact)."""
    import regex

    try:
        if isinstance(pattern, str):
            text = json.dumps(dict(call.input), sort_keys=True, ensure_ascii=False, default=str)
            return regex.search(pattern, text, timeout=MATCH_TIMEOUT) is not None
        for key, want in pattern.items():
            value = call.input.get(key)
            text = value if isinstance(value, str) else json.dumps(value, default=str)
            if value is None or regex.search(str(want), text, timeout=MATCH_TIMEOUT) is None:
                return False
    except TimeoutError:
        return False
    return True


def _shown_input(pattern: Any) -> str:
    if isinstance(pattern, Mapping):
        return "{" + ", ".join(f"{k}: {as_written(str(v))}" for k, v in pattern.items()) + "}"
    return as_written(str(pattern))


class ToolCalledJudge:
    """`tool` was called between `min` (default 1) and `max` times, counting only calls whose
    input matches `input` when given."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.tool = str(config["tool"])
        self.pattern = config.get("input")
        self.min = int(config.get("min", 1))
        self.max = config.get("max")

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        calls = [
            c
            for c in work.transcript
            if c.completed
            and c.name == self.tool
            and (self.pattern is None or _input_matches(c, self.pattern))
        ]
        count = len(calls)
        ok = count >= self.min and (self.max is None or count <= int(self.max))
        bound = f">= {self.min}" + (f" and <= {self.max}" if self.max is not None else "")
        what = self.tool + (
            f" with input matching {_shown_input(self.pattern)}" if self.pattern else ""
        )
        return JudgeResult(
            ok,
            float(ok),
            f"{what}: called {count} time(s), expected {bound}",
            data={"count": count},
        )


# --- skill-used -------------------------------------------------------------------------------


class SkillUsedJudge:
    """The agent used the skill (`expect: true`, the default) or did not (`expect: false`)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.skill = config.get("skill")
        self.expect = bool(config.get("expect", True))

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        used = skill_invocations(tuple(c for c in work.transcript if c.completed), self.skill)
        name = f"skill {self.skill!r}" if self.skill else "a skill"
        how = (
            f"{name} used {len(used)} time(s) ({', '.join(c.name for c in used[:3])})"
            if used
            else f"{name} was not used"
        )
        ok = bool(used) == self.expect
        return JudgeResult(
            ok,
            float(ok),
            f"{how}; expected {'use' if self.expect else 'none'}",
            data={"invocations": len(used)},
        )


def _schema(judge_type: str, required: list[str], props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", *required],
        "properties": {"type": {"const": judge_type}, **props},
        "patternProperties": X_KEYS,
        "additionalProperties": False,
    }


def _check_tool_called(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    if "max" in config and int(config["max"]) < int(config.get("min", 1)):
        return [("max", f"must be at least min ({config.get('min', 1)})")]
    pattern = config.get("input")
    patterns = [pattern] if isinstance(pattern, str) else list((pattern or {}).values())
    import regex

    for value in patterns:
        try:
            regex.compile(str(value))
        except regex.error as exc:
            return [("input", f"invalid regular expression: {exc}")]
    return []


FILE_EXISTS_SPEC = JudgeSpec(
    type="file-exists",
    summary="workspace paths (or globs) exist, or with absent: true do not",
    schema=_schema(
        "file-exists",
        ["paths"],
        {
            "paths": {
                "type": "array",
                "minItems": 1,
                "items": WORKSPACE_PATH,
                "errorMessage": "must be a non-empty list of workspace paths or globs",
            },
            "absent": {"type": "boolean", "errorMessage": "must be true or false"},
        },
    ),
    build=FileExistsJudge,
    deterministic=True,
)

TOOL_CALLED_SPEC = JudgeSpec(
    type="tool-called",
    summary="the agent called a tool (optionally with matching input) min..max times",
    schema=_schema(
        "tool-called",
        ["tool"],
        {
            "tool": {"type": "string", "minLength": 1, "errorMessage": "must be a tool name"},
            "input": {
                "type": ["string", "object"],
                "additionalProperties": {"type": "string"},
                "errorMessage": "must be a regex, or a mapping of input field to regex",
            },
            "min": {"type": "integer", "minimum": 0, "errorMessage": "must be a whole number >= 0"},
            "max": {"type": "integer", "minimum": 0, "errorMessage": "must be a whole number >= 0"},
        },
    ),
    build=ToolCalledJudge,
    deterministic=True,
    check=_check_tool_called,
)

SKILL_USED_SPEC = JudgeSpec(
    type="skill-used",
    summary="the agent invoked the skill (Skill tool, or a Read of its SKILL.md), or did not",
    schema=_schema(
        "skill-used",
        [],
        {
            "expect": {"type": "boolean", "errorMessage": "must be true or false"},
            "skill": {"type": "string", "minLength": 1, "errorMessage": "must be a skill name"},
        },
    ),
    build=SkillUsedJudge,
    deterministic=True,
)
