"""The visionary's decision: read from its reply, checked, and written as JSON and Markdown.

The visionary reads a QA report full of text the reviewed skill controls (its outputs), and
may quote it. So its decision counts only between `<decision-NONCE>` tags with a nonce made
for that call (`decision_format`, `parse_decision`; core/tagged.py): a quoted
`{"decision": "approved"}` elsewhere in the reply is never the decision, and a reply with no
tagged block, or two, is unusable (asked again, then the review fails: never approved).

The written file validates against skill_eval/schemas/review_decision.schema.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.paths import SCHEMAS_DIR
from ..core.tagged import answer_instruction, tagged_object

DecisionName = Literal["approved", "approved_partial", "refine_evaluation", "rejected"]
DECISIONS: tuple[DecisionName, ...] = (
    "approved",
    "approved_partial",
    "refine_evaluation",
    "rejected",
)
VISION_DIMENSIONS = (
    "vision_alignment",
    "completeness",
    "quality_bar",
    "regression",
    "evaluation_quality",
)
RATINGS = ("pass", "partial", "fail")
REFINE_KINDS = ("add", "change", "remove")
SCHEMA_VERSION = "1.0"


@dataclass(frozen=True)
class Decision:
    decision: DecisionName
    summary: str
    dimensions: dict[str, dict[str, str]]
    refine: dict[str, list[str]] = field(default_factory=dict)
    feedback: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)

    def feedback_points(self) -> list[tuple[str, str]]:
        """What the orchestrator must address next round, numbered F1, F2, ..."""
        points = [f"{kind}: {text}" for kind in REFINE_KINDS for text in self.refine.get(kind, [])]
        return [(f"F{n}", text) for n, text in enumerate(points, start=1)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "summary": self.summary,
            "dimensions": self.dimensions,
            "refine": {k: list(self.refine.get(k, [])) for k in REFINE_KINDS},
            "feedback": list(self.feedback),
            "caveats": list(self.caveats),
        }


def _strings(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    return None


TAG = "decision"  # the answer goes between <decision-NONCE> tags


def decision_format(nonce: str) -> str:
    """The end of a visionary prompt: where this call's decision goes."""
    return "\n## Your answer\n" + answer_instruction(
        TAG, nonce, "your decision, the one JSON object your role describes,"
    )


def parse_decision(text: str, nonce: str) -> tuple[Decision | None, list[str]]:
    """The decision in a visionary reply (the one JSON object between this call's
    `<decision-NONCE>` tags), and every problem with it; a usable decision has no problems."""
    data, why = tagged_object(text, f"{TAG}-{nonce}")
    if data is None:
        return None, [str(why)]
    problems: list[str] = []
    name = data.get("decision")
    if name not in DECISIONS:
        problems.append(f"decision: must be one of {', '.join(DECISIONS)}, got {name!r}")
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        problems.append("summary: must be a non-empty string")
    dims_in = data.get("dimensions")
    dims: dict[str, dict[str, str]] = {}
    if not isinstance(dims_in, dict):
        problems.append(f"dimensions: must be an object with {', '.join(VISION_DIMENSIONS)}")
        dims_in = {}
    for dim in VISION_DIMENSIONS:
        entry = dims_in.get(dim)
        if not isinstance(entry, dict) or entry.get("rating") not in RATINGS:
            problems.append(f"dimensions.{dim}: needs a rating, one of {', '.join(RATINGS)}")
            continue
        dims[dim] = {"rating": str(entry["rating"]), "notes": str(entry.get("notes") or "")}
    raw_refine = data.get("refine")
    refine_in: dict[str, Any] = raw_refine if isinstance(raw_refine, dict) else {}
    refine: dict[str, list[str]] = {}
    for kind in REFINE_KINDS:
        items = _strings(refine_in.get(kind))
        if items is None:
            problems.append(f"refine.{kind}: must be a list of strings")
        refine[kind] = items or []
    lists: dict[str, list[str]] = {}
    for key in ("feedback", "caveats"):
        items = _strings(data.get(key))
        if items is None:
            problems.append(f"{key}: must be a list of strings")
        lists[key] = items or []
    if name == "refine_evaluation" and not any(refine.values()):
        problems.append("refine_evaluation needs refine.add, refine.change or refine.remove")
    if name == "rejected" and not lists["feedback"]:
        problems.append("rejected needs feedback for the skill's author")
    if problems or name not in DECISIONS:
        return None, problems
    chosen: DecisionName = name
    return Decision(
        chosen, str(summary).strip(), dims, refine, lists["feedback"], lists["caveats"]
    ), []


def decision_record(
    decision: Decision,
    *,
    review_id: str,
    rounds: int,
    max_rounds: int,
    skill: str,
    vision_source: str,
    suite: str | None,
    qa_report: str | None,
    round_decisions: list[str],
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The final decision file: the visionary's last decision and how the review reached it.
    `max_rounds_reached` is true when the last word was still refine_evaluation; `usage` is
    each role's calls, models and tokens."""
    return {
        "schema_version": SCHEMA_VERSION,
        "review_id": review_id,
        **decision.to_dict(),
        "rounds": rounds,
        "max_rounds": max_rounds,
        "max_rounds_reached": decision.decision == "refine_evaluation",
        "round_decisions": round_decisions,
        "skill": skill,
        "vision": vision_source,
        "suite": suite,
        "qa_report": qa_report,
        "usage": usage or {},
    }


def schema_path() -> Path:
    return SCHEMAS_DIR / "review_decision.schema.json"


def validate_record(record: dict[str, Any]) -> list[str]:
    """Schema problems of a decision record (empty: valid), worded by core/validation.py."""
    from ..core.validation import schema_problems

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    return [str(p) for p in schema_problems(record, schema, path="decision.json")]


def decision_markdown(record: dict[str, Any]) -> str:
    """The decision for people: outcome, summary, the five dimensions, and what follows."""
    lines = [
        f"# Review {record['review_id']}: {record['decision']}",
        "",
        record["summary"],
        "",
        f"Skill: `{record['skill']}`; vision: {record['vision']}; rounds: "
        f"{record['rounds']} of at most {record['max_rounds']} "
        f"({' -> '.join(record['round_decisions'])}).",
        "",
    ]
    if record["max_rounds_reached"]:
        lines += [
            "**The evaluation never satisfied the visionary within --max-rounds: the "
            "skill is not approved.**",
            "",
        ]
    lines += ["| dimension | rating | notes |", "|---|---|---|"]
    for dim in VISION_DIMENSIONS:
        entry = record["dimensions"].get(dim, {})
        notes = str(entry.get("notes", "")).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {dim} | {entry.get('rating', '')} | {notes} |")
    sections = [
        ("Caveats", record["caveats"]),
        ("Feedback for the skill's author", record["feedback"]),
    ]
    sections += [(f"Refine: {k}", record["refine"][k]) for k in REFINE_KINDS]
    for title, items in sections:
        if items:
            lines += ["", f"## {title}", *[f"- {x}" for x in items]]
    if record["suite"]:
        lines += ["", f"Suite: `{record['suite']}`; QA report: `{record['qa_report']}`"]
    return "\n".join(lines) + "\n"
