"""SKILL.md checked against the Agent Skills format (agentskills.io/specification), the way an
agent loads it: errors stop a run before anything runs, warnings go into its log and artifact.

Errors: an empty SKILL.md, no frontmatter, frontmatter that is not valid YAML or not a mapping,
a missing or empty `name` or `description`. Warnings: a `name` that breaks the format's rules or
does not match its folder, a description over 1,024 characters, a body over 500 lines,
frontmatter keys neither the format nor Claude Code reads, files SKILL.md links to that the
folder lacks or spells in another letter case (links.py), links in the folder that lead outside
it (never followed), and `disable-model-invocation: true` (such a skill never triggers by
itself). Where OpenCode, Codex CLI and Claude Code part ways (a long description or name, Claude
Code's own keys), the warning says which agent drops what (agent_support.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..core.paths import inside
from ..core.safeyaml import YamlError, load_yaml_text
from ..errors import SkillError
from .agent_support import LONG_DESCRIPTION, LONG_NAME, MODEL_NEVER_LOADS, agent_notes
from .links import broken_links
from .tree import walk

Severity = Literal["error", "warning"]

# The Agent Skills format's own keys, then the ones Claude Code adds (code.claude.com skills
# docs, frontmatter reference).
SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
CLAUDE_CODE_KEYS = (
    "when_to_use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "effort",
    "context",
    "agent",
    "hooks",
    "paths",
    "shell",
)
KNOWN_KEYS = frozenset(SPEC_KEYS + CLAUDE_CODE_KEYS)
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_LINES = 500
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_AT_LINE = re.compile(r"\bat line (\d+)")


@dataclass(frozen=True)
class Finding:
    """One finding in a SKILL.md, printed `path:line: severity: message`."""

    path: str
    line: int
    severity: Severity
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line > 0 else self.path  # 0: a file, no line
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class Frontmatter:
    """The parsed frontmatter: its data, the line of each top-level key, and where the body
    starts (1-based line)."""

    data: dict[str, Any]
    key_lines: dict[str, int]
    body_start: int


def lint_text(text: str, display: str, folder: Path | None) -> list[Finding]:
    """Every finding in one SKILL.md text. `display` names the file in findings; `folder` is
    the skill folder links resolve against (None: links are not checked)."""
    out: list[Finding] = []
    front = _frontmatter(text, display, out)
    if front is None:
        return out
    _check_fields(front, display, folder, out)
    lines = text.split("\n")
    body = lines[front.body_start - 1 :]
    while body and not body[-1].strip():
        body.pop()
    if len(body) > MAX_BODY_LINES:
        out.append(
            Finding(
                display,
                front.body_start + MAX_BODY_LINES,
                "warning",
                f"the body is {len(body)} lines; keep SKILL.md under "
                f"{MAX_BODY_LINES} lines and move detail into files it links to",
            )
        )
    if folder is not None:
        found = broken_links(lines, front.body_start, folder)
        out.extend(Finding(display, line, "warning", message) for line, message in found)
        out.extend(links_out(folder))
    return out


def links_out(folder: Path) -> list[Finding]:
    """A warning for each link in the skill folder that leads outside it: skill-eval never
    follows one (installed mode leaves it out, read_skill_file refuses it, improve does not
    write through it), so what it points at never reaches the model."""
    try:
        links = [e for e in walk(folder) if e.kind == "link"]
    except SkillError:
        return []  # the folder's own problem, reported where it is loaded
    return [
        Finding(
            str(e.path),
            0,
            "warning",
            f"a link to {os.readlink(e.path)}, outside the skill folder: never followed "
            "(not installed, not readable by the model)",
        )
        for e in links
        if not inside(folder, e.path)
    ]


def _frontmatter(text: str, display: str, out: list[Finding]) -> Frontmatter | None:
    text = text.removeprefix("\ufeff")
    if not text.strip():
        out.append(Finding(display, 1, "error", "SKILL.md is empty"))
        return None
    lines = text.split("\n")
    if lines[0].rstrip("\r").rstrip() != "---":
        out.append(
            Finding(
                display,
                1,
                "error",
                "no YAML frontmatter: SKILL.md must start "
                "with a '---' line, then name and description",
            )
        )
        return None
    end = next(
        (i for i in range(1, len(lines)) if lines[i].rstrip("\r").rstrip() in ("---", "...")), None
    )
    if end is None:
        out.append(Finding(display, 1, "error", "the YAML frontmatter has no closing '---' line"))
        return None
    try:
        data, key_lines = load_yaml_text("\n".join(lines[1:end]), display)
    except YamlError as exc:
        for problem in exc.problems:
            # safeyaml counts lines from the frontmatter's first line; the file has '---' above.
            message = _AT_LINE.sub(lambda m: f"at line {int(m.group(1)) + 1}", problem.message)
            out.append(
                Finding(
                    display,
                    (problem.line or 1) + 1,
                    "error",
                    f"the frontmatter is not valid YAML: {message}",
                )
            )
        return None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        out.append(
            Finding(
                display,
                2,
                "error",
                f"the frontmatter must be a mapping of keys to values, not a {type(data).__name__}",
            )
        )
        return None
    keys = {str(k[0]): line + 1 for k, line in key_lines.items() if len(k) == 1}
    return Frontmatter({str(k): v for k, v in data.items()}, keys, end + 2)


def _check_fields(
    front: Frontmatter, display: str, folder: Path | None, out: list[Finding]
) -> None:
    data = front.data

    def at(key: str) -> int:
        return front.key_lines.get(key, 1)

    for key in ("name", "description"):
        value = data.get(key)
        if key not in data:
            out.append(Finding(display, 1, "error", f"the frontmatter has no `{key}`"))
        elif not isinstance(value, str):
            out.append(Finding(display, at(key), "error", f"`{key}` must be a string"))
        elif not value.strip():
            out.append(Finding(display, at(key), "error", f"`{key}` is empty"))
    name = data.get("name")
    if isinstance(name, str) and name.strip():
        for problem in name_problems(name, folder.name if folder is not None else None):
            out.append(Finding(display, at("name"), "warning", problem))
    description = data.get("description")
    if isinstance(description, str) and len(description) > MAX_DESCRIPTION:
        out.append(
            Finding(
                display,
                at("description"),
                "warning",
                f"`description` is {len(description)} characters; the format "
                f"allows {MAX_DESCRIPTION}; {LONG_DESCRIPTION}",
            )
        )
    compatibility = data.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > MAX_COMPATIBILITY:
        out.append(
            Finding(
                display,
                at("compatibility"),
                "warning",
                f"`compatibility` is {len(compatibility)} characters; the format "
                f"allows {MAX_COMPATIBILITY}",
            )
        )
    for key in data:
        if key not in KNOWN_KEYS:
            out.append(
                Finding(
                    display,
                    at(key),
                    "warning",
                    f"unknown frontmatter key `{key}` (the format knows "
                    f"{', '.join(SPEC_KEYS)}; Claude Code also reads "
                    f"{', '.join(CLAUDE_CODE_KEYS)})",
                )
            )
    for key, note in agent_notes(data):
        out.append(Finding(display, at(key), "warning", note))
    if data.get("disable-model-invocation") is True:
        out.append(
            Finding(
                display,
                at("disable-model-invocation"),
                "warning",
                MODEL_NEVER_LOADS,
            )
        )


def name_problems(name: str, folder_name: str | None) -> list[str]:
    """How `name` breaks the format's rules: 1-64 characters, lowercase letters, digits and
    single hyphens, no hyphen at either end, the same as its folder's name."""
    problems = []
    if len(name) > MAX_NAME:
        problems.append(
            f"`name` is {len(name)} characters; the format allows {MAX_NAME}; {LONG_NAME}"
        )
    if not _NAME.match(name):
        problems.append(
            f"`name` {name!r} must be lowercase letters, digits and single hyphens, "
            f"not starting or ending with a hyphen"
        )
    if folder_name is not None and folder_name != name:
        problems.append(f"`name` {name!r} does not match its folder {folder_name!r}")
    return problems
