"""The orchestrator's delegation plan, read from its Markdown reply.

The plan is free Markdown for people, with item lines a program can check: `- [B1] (dimension)
...` under "Builder tasks", `- [C1] (criterion) ...` under "QA checklist" and, on later rounds,
`- [F1] ...` under "Feedback addressed", one per point of the visionary's feedback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

DIMENSIONS = ("correctness", "completeness", "quality", "vision_alignment")

_HEADING = re.compile(r"^\s*#{1,6}\s*(?P<title>.+?)\s*#*\s*$")
_ITEM = re.compile(r"^\s*[-*]\s*\[(?P<id>[A-Za-z]+\d+)\]\s*(?:\((?P<tag>[^)]*)\))?\s*(?P<text>.*)$")
_SECTIONS = {
    "builder tasks": "builder",
    "qa checklist": "checklist",
    "feedback addressed": "feedback",
}


@dataclass(frozen=True)
class PlanItem:
    id: str
    tag: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "tag": self.tag, "text": self.text}


@dataclass(frozen=True)
class Plan:
    text: str
    builder_tasks: tuple[PlanItem, ...]
    checklist: tuple[PlanItem, ...]
    addressed: tuple[PlanItem, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "builder_tasks": [i.to_dict() for i in self.builder_tasks],
            "checklist": [i.to_dict() for i in self.checklist],
            "feedback_addressed": [i.to_dict() for i in self.addressed],
        }


def _dimension(tag: str) -> str:
    return re.sub(r"[\s-]+", "_", tag.strip().lower())


def parse_plan(text: str, feedback_ids: Sequence[str] = ()) -> tuple[Plan, list[str]]:
    """The plan in an orchestrator reply, and every problem with it (empty: usable). A plan
    needs builder tasks tied to a known dimension, a QA checklist, and on later rounds a line
    for every feedback point (`feedback_ids`)."""
    found: dict[str, list[PlanItem]] = {"builder": [], "checklist": [], "feedback": []}
    section: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if heading := _HEADING.match(line):
            section = _SECTIONS.get(heading["title"].strip().lower().rstrip(":"))
            continue
        if section is not None and (item := _ITEM.match(line)):
            found[section].append(
                PlanItem(item["id"].upper(), (item["tag"] or "").strip(), item["text"].strip())
            )
    problems: list[str] = []
    if not found["builder"]:
        problems.append("no '## Builder tasks' section with '- [B1] (dimension) ...' lines")
    if not found["checklist"]:
        problems.append("no '## QA checklist' section with '- [C1] (criterion) ...' lines")
    for entry in found["builder"]:
        if _dimension(entry.tag) not in DIMENSIONS:
            problems.append(
                f"builder task {entry.id}: dimension {entry.tag or '(none)'!r} is "
                f"not one of {', '.join(DIMENSIONS)}"
            )
    for kind in ("builder", "checklist"):
        ids = [i.id for i in found[kind]]
        for dup in sorted({i for i in ids if ids.count(i) > 1}):
            problems.append(f"item {dup} is listed twice")
    addressed = {i.id for i in found["feedback"]}
    missing = [f for f in feedback_ids if f not in addressed]
    if missing:
        problems.append(
            "the '## Feedback addressed' section has no line for "
            + ", ".join(missing)
            + " (every feedback point must be addressed)"
        )
    builder = tuple(PlanItem(i.id, _dimension(i.tag), i.text) for i in found["builder"])
    return Plan(text, builder, tuple(found["checklist"]), tuple(found["feedback"])), problems


def checklist_markdown(plan: Plan) -> str:
    """The checklist section alone: what the QA stage is given from the plan."""
    return "\n".join(f"- [{i.id}] ({i.tag}) {i.text}" for i in plan.checklist)
