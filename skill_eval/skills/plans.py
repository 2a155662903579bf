"""Execution plans from ranking artifacts, applied as pure text transforms.

`apply_plan(text, plan)` returns the edited text of one file; skills/candidates.py applies it
to a copy of the original skill directory. The four actions follow reference/compatibility.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import SkillError

SUPPORTED_ACTIONS: tuple[str, ...] = (
    "append_markdown_section",
    "replace_markdown_section",
    "insert_before_section",
    "update_yaml_frontmatter",
)
_MARKDOWN_ACTIONS = SUPPORTED_ACTIONS[:3]

# CommonMark ATX headings: up to three spaces of indent, 1-6 `#`, then a space or the end.
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# A plan's heading is read leniently: "##Usage" still means a level-2 "Usage".
_PLAN_HEADING = re.compile(r"^(#{1,6})[ \t]*(.*)$")
_BOM = "\ufeff"


@dataclass(frozen=True)
class PlanOutcome:
    """The text after the plan, whether it differs from the input, and a one-line why."""

    text: str
    changed: bool
    note: str


@dataclass(frozen=True)
class _Heading:
    index: int  # line index
    level: int
    text: str


def plan_problems(plan: Any) -> list[tuple[str, str]]:
    """Every problem of an `execution_plan` value as (field, message), fields named
    `execution_plan.<field>`; an unknown action lists the supported ones. Empty when valid."""
    if not isinstance(plan, Mapping):
        return [("execution_plan", "must be an object")]
    problems: list[tuple[str, str]] = []
    action = plan.get("action")
    if not isinstance(action, str) or action not in SUPPORTED_ACTIONS:
        shown = "is missing" if action is None else f"{action!r} is not supported"
        problems.append(
            ("execution_plan.action", f"{shown}; supported actions: {', '.join(SUPPORTED_ACTIONS)}")
        )
    elif action in _MARKDOWN_ACTIONS:
        heading = plan.get("section_heading")
        if not isinstance(heading, str) or not _parse_plan_heading(heading)[1]:
            problems.append(("execution_plan.section_heading", "must be a non-empty string"))
        elif "\n" in heading.strip() or "\r" in heading.strip():
            problems.append(("execution_plan.section_heading", "must be a single line"))
        lines = plan.get("content_lines")
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            problems.append(("execution_plan.content_lines", "must be a list of strings"))
    elif not isinstance(plan.get("frontmatter_updates"), Mapping):
        problems.append(("execution_plan.frontmatter_updates", "must be an object"))
    return problems


def validate_plan(plan: Any) -> None:
    """Raise SkillError listing every problem of `plan` (see plan_problems)."""
    problems = plan_problems(plan)
    if problems:
        raise SkillError("; ".join(f"{field}: {message}" for field, message in problems))


def apply_plan(text: str, plan: Mapping[str, Any]) -> PlanOutcome:
    """Apply one execution plan to the text of a file. Raises SkillError for a malformed plan
    or (update_yaml_frontmatter) a frontmatter that is not a YAML mapping. Line endings follow
    the file (CRLF stays CRLF); a leading BOM is kept; headings inside fenced code blocks and
    the frontmatter are not headings. update_yaml_frontmatter merges top-level keys (shallow)
    and rewrites the frontmatter with yaml.safe_dump (its comments are lost); the body after
    it stays byte-identical."""
    validate_plan(plan)
    bom = _BOM if text.startswith(_BOM) else ""
    body = text[len(bom) :]
    nl = "\r\n" if "\r\n" in body else "\n"
    action = plan["action"]
    if action == "update_yaml_frontmatter":
        outcome = _update_frontmatter(body, plan["frontmatter_updates"], nl)
    else:
        level, title = _parse_plan_heading(plan["section_heading"])
        lines = plan["content_lines"]
        if action == "append_markdown_section":
            outcome = _append(body, level, title, lines, nl)
        elif action == "replace_markdown_section":
            outcome = _replace(body, level, title, lines, nl)
        else:
            outcome = _insert_before(body, level, title, lines, nl)
    return PlanOutcome(bom + outcome.text, outcome.changed, outcome.note)


def _append(
    text: str, level: int | None, title: str, content: Sequence[str], nl: str
) -> PlanOutcome:
    heading_line = f"{'#' * (level or 2)} {title}"
    if any(h.text == title for h in _headings(_split(text))):
        return PlanOutcome(text, False, f"a section {title!r} is already present")
    block = [heading_line] + ([""] + _render(content, ()) if content else [])
    head = text.rstrip("\r\n")
    new = (head + nl + nl if head else "") + nl.join(block) + nl
    return PlanOutcome(new, True, f"appended section {heading_line!r}")


def _replace(
    text: str, level: int | None, title: str, content: Sequence[str], nl: str
) -> PlanOutcome:
    lines = _split(text)
    headings = _headings(lines)
    found = _find(headings, level, title)
    if found is None:
        return PlanOutcome(text, False, f"heading {_show(level, title)!r} not found")
    end = next(
        (h.index for h in headings if h.index > found.index and h.level <= found.level), len(lines)
    )
    block = [_strip_eol(lines[found.index]), *_render(content, ("-",))]
    if end < len(lines):
        block.append("")
    new = "".join(lines[: found.index]) + "".join(x + nl for x in block) + "".join(lines[end:])
    if new == text:
        return PlanOutcome(text, False, f"section {title!r} already has this content")
    return PlanOutcome(new, True, f"replaced section {title!r}")


def _insert_before(
    text: str, level: int | None, title: str, content: Sequence[str], nl: str
) -> PlanOutcome:
    lines = _split(text)
    found = _find(_headings(lines), level, title)
    if found is None:
        return PlanOutcome(text, False, f"heading {_show(level, title)!r} not found")
    rendered = _render(content, ("-", "#"))
    if not rendered:
        return PlanOutcome(text, False, "no content lines to insert")
    block = rendered + [""]
    start = found.index - len(block)
    if start >= 0 and [_strip_eol(x) for x in lines[start : found.index]] == block:
        return PlanOutcome(text, False, f"the content is already present before {title!r}")
    new = (
        "".join(lines[: found.index])
        + "".join(x + nl for x in block)
        + "".join(lines[found.index :])
    )
    return PlanOutcome(new, True, f"inserted {len(rendered)} line(s) before {title!r}")


def _update_frontmatter(text: str, updates: Mapping[str, Any], nl: str) -> PlanOutcome:
    lines = _split(text)
    end = _frontmatter_end(lines)
    if end is None and lines and _strip_eol(lines[0]).rstrip() == "---":
        raise SkillError("the YAML frontmatter has no closing '---' line")
    if end is None:
        current: Any = {}
        rest = text
    else:
        try:
            current = yaml.safe_load("".join(lines[1 : end - 1]))
        except yaml.YAMLError as exc:
            raise SkillError(f"the YAML frontmatter is not valid YAML: {exc}") from None
        rest = "".join(lines[end:])
    current = {} if current is None else current
    if not isinstance(current, dict):
        raise SkillError(
            f"the YAML frontmatter is not a mapping (it is a "
            f"{type(current).__name__}); cannot apply frontmatter_updates"
        )
    merged = {**current, **dict(updates)}
    if end is not None and merged == current:
        return PlanOutcome(text, False, "the frontmatter already has these values")
    if end is None and not updates:
        return PlanOutcome(text, False, "frontmatter_updates is empty")
    dumped = yaml.safe_dump(merged, sort_keys=False, allow_unicode=True, default_flow_style=False)
    fm = "---\n" + dumped + "---\n"
    if nl != "\n":
        fm = fm.replace("\n", nl)
    keys = ", ".join(str(k) for k in updates)
    what = "updated" if end is not None else "created"
    return PlanOutcome(fm + rest, True, f"{what} frontmatter keys: {keys}")


def read_frontmatter(text: str) -> dict[str, Any] | None:
    """The YAML frontmatter of a SKILL.md as a mapping; None when absent, unterminated, invalid
    YAML or not a mapping (callers that only want `name` should not fail on a broken one)."""
    lines = _split(text.removeprefix(_BOM))
    end = _frontmatter_end(lines)
    if end is None:
        return None
    try:
        data = yaml.safe_load("".join(lines[1 : end - 1]))
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _parse_plan_heading(heading: str) -> tuple[int | None, str]:
    """(level, title) of a plan's section_heading; level None when it has no `#`s."""
    stripped = heading.strip()
    match = _PLAN_HEADING.match(stripped)
    if match is None:
        return None, stripped
    return len(match.group(1)), _CLOSING_HASHES.sub("", match.group(2).strip()).strip()


def _show(level: int | None, title: str) -> str:
    return f"{'#' * level} {title}" if level else title


def _find(headings: Sequence[_Heading], level: int | None, title: str) -> _Heading | None:
    """The first heading with this title (and this level, when the plan gives one)."""
    return next(
        (h for h in headings if h.text == title and (level is None or h.level == level)), None
    )


def _render(content: Sequence[str], keep: tuple[str, ...]) -> list[str]:
    """Each content line as `- line`, except lines that already start with one of `keep`."""
    lines = (line.rstrip("\r\n") for line in content)
    return [line if keep and line.startswith(keep) else f"- {line}" for line in lines]


def _split(text: str) -> list[str]:
    """Lines with their endings. Unlike str.splitlines, only "\\n" ends a line."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _strip_eol(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith("\n") else line


def _frontmatter_end(lines: Sequence[str]) -> int | None:
    """Index of the first line after a `---` fenced frontmatter at the top, or None."""
    if not lines or _strip_eol(lines[0]).rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if _strip_eol(lines[i]).rstrip() in ("---", "..."):
            return i + 1
    return None


def _headings(lines: Sequence[str]) -> list[_Heading]:
    """ATX headings outside fenced code blocks and outside the frontmatter."""
    out: list[_Heading] = []
    fence: str | None = None
    for i in range(_frontmatter_end(lines) or 0, len(lines)):
        line = _strip_eol(lines[i])
        fence_match = _FENCE.match(line)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
                and not fence_match.group(2).strip()
            ):
                fence = None
            continue
        if fence_match and not (fence_match.group(1)[0] == "`" and "`" in fence_match.group(2)):
            fence = fence_match.group(1)
            continue
        match = _ATX.match(line)
        if match:
            title = _CLOSING_HASHES.sub("", (match.group(2) or "").strip()).strip()
            out.append(_Heading(i, len(match.group(1)), title))
    return out
