"""The evaluation maths, pure: read a judge model's reply against an evaluator's dimensions,
apply the severity rules, take the weighted mean, decide pass or fail.

Severity rules, per dimension: the model's raw score is clamped to [0, 1]; each Important
finding takes 0.15 off (floor 0); then any Blocker caps the dimension at 0.3; Suggestions change
nothing. The score is the weighted mean of the adjusted dimension scores. A reply that lacks a
dimension, names an unknown one, or cannot be read is a ReplyError, never a default score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import OutputRejected
from .loader import Dimension

Severity = Literal["blocker", "important", "suggestion"]
FailOn = Literal["blocker", "none"]
SEVERITIES: tuple[Severity, ...] = ("blocker", "important", "suggestion")
BLOCKER_CAP = 0.3
IMPORTANT_PENALTY = 0.15
MAX_TEXT = 4000  # longest finding text kept; a runaway reply must not bloat the artifact


class ReplyError(OutputRejected):
    """The judge model's reply cannot be turned into an evaluation."""


@dataclass(frozen=True)
class Finding:
    """One specific, actionable issue the judge found."""

    id: str
    severity: Severity
    dimension: str
    title: str
    description: str
    location: str | None = None
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "dimension": self.dimension,
            "title": self.title,
            "description": self.description,
            "location": self.location,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class DimensionScore:
    """A dimension's score after the severity rules, with the model's raw score beside it."""

    name: str
    weight: float
    raw_score: float
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "weight": self.weight,
            "raw_score": self.raw_score,
            "score": self.score,
        }


@dataclass(frozen=True)
class ParsedReply:
    scores: Mapping[str, float]  # canonical dimension name -> raw score, clamped
    findings: tuple[Finding, ...]
    suggestion: str
    notes: tuple[str, ...] = ()  # e.g. scores that had to be clamped


def adjust(raw: float, severities: Sequence[str]) -> float:
    """One dimension's score: clamp, −0.15 per Important (floor 0), cap 0.3 on any Blocker."""
    score = min(1.0, max(0.0, raw))
    score = max(0.0, score - IMPORTANT_PENALTY * sum(1 for s in severities if s == "important"))
    if "blocker" in severities:
        score = min(score, BLOCKER_CAP)
    return round(score, 10)


def weighted_mean(pairs: Sequence[tuple[float, float]]) -> float:
    """Σ w·s / Σ w over (score, weight) pairs; weights need not sum to 1."""
    total = math.fsum(w for _, w in pairs)
    if total <= 0:
        raise ValueError("weights must have a positive sum")
    return round(math.fsum(s * w for s, w in pairs) / total, 10)


def score_dimensions(
    dimensions: Sequence[Dimension], reply: ParsedReply
) -> tuple[float, list[DimensionScore]]:
    """Apply the severity rules per dimension; the composite score and the breakdown."""
    out: list[DimensionScore] = []
    for dim in dimensions:
        raw = reply.scores[dim.name]
        sev = [f.severity for f in reply.findings if f.dimension == dim.name]
        out.append(DimensionScore(dim.name, dim.weight, raw, adjust(raw, sev)))
    return weighted_mean([(d.score, d.weight) for d in out]), out


def decide(
    score: float, findings: Sequence[Finding], pass_threshold: float, fail_on: FailOn = "blocker"
) -> tuple[bool, str]:
    """Passed iff score ≥ threshold and, with fail_on=blocker, no Blocker finding."""
    blockers = [f for f in findings if f.severity == "blocker"]
    if fail_on == "blocker" and blockers:
        return False, f"{len(blockers)} blocker finding(s)"
    if score < pass_threshold:
        return False, f"score {score:.2f} below threshold {pass_threshold:.2f}"
    return True, f"score {score:.2f} ≥ threshold {pass_threshold:.2f}"


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ReplyError(f"{where}: expected a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ReplyError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _text(item: Mapping[str, Any], key: str, where: str, required: bool) -> str | None:
    value = item.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ReplyError(f"{where}.{key}: missing or empty")
        return None
    if not isinstance(value, str):
        raise ReplyError(f"{where}.{key}: expected a string, got {type(value).__name__}")
    return value.strip()[:MAX_TEXT]


def _canonical(dimensions: Sequence[Dimension], name: Any, where: str) -> str:
    if isinstance(name, str):
        wanted = name.strip().casefold()
        for dim in dimensions:
            if dim.name.casefold() == wanted:
                return dim.name
    known = ", ".join(d.name for d in dimensions)
    raise ReplyError(f"{where}: unknown dimension {name!r}; the rubric's dimensions: {known}")


def _finding(raw: Any, index: int, dimensions: Sequence[Dimension]) -> Finding:
    where = f"findings[{index}]"
    if not isinstance(raw, Mapping):
        raise ReplyError(f"{where}: expected an object")
    severity = raw.get("severity")
    severity = severity.strip().casefold() if isinstance(severity, str) else severity
    if severity not in SEVERITIES:
        raise ReplyError(
            f"{where}.severity: expected one of {', '.join(SEVERITIES)}, "
            f"got {raw.get('severity')!r}"
        )
    ident = raw.get("id")
    return Finding(
        id=str(ident).strip()[:40]
        if isinstance(ident, (str, int)) and str(ident).strip()
        else f"F{index + 1}",
        severity=severity,
        dimension=_canonical(dimensions, raw.get("dimension"), f"{where}.dimension"),
        title=_text(raw, "title", where, True) or "",
        description=_text(raw, "description", where, True) or "",
        location=_text(raw, "location", where, False),
        fix=_text(raw, "fix", where, False),
    )


def parse_reply(reply: Any, dimensions: Sequence[Dimension]) -> ParsedReply:
    """Check a reply `{scores: {dim: number}, findings: [...], suggestion: str}` against the
    rubric's dimensions. Dimension names match case-insensitively; scores are clamped."""
    if not isinstance(reply, Mapping):
        raise ReplyError(f"expected a JSON object, got {type(reply).__name__}")
    scores = reply.get("scores")
    if not isinstance(scores, Mapping):
        raise ReplyError("scores: missing, or not an object of dimension → number")
    found: dict[str, float] = {}
    notes: list[str] = []
    for key, value in scores.items():
        name = _canonical(dimensions, key, f"scores.{key}")
        if name in found:
            raise ReplyError(f"scores.{key}: dimension {name!r} scored twice")
        number = _number(value, f"scores.{key}")
        if not 0.0 <= number <= 1.0:
            notes.append(f"score {number:g} for {name!r} clamped to [0, 1]")
        found[name] = min(1.0, max(0.0, number))
    missing = [d.name for d in dimensions if d.name not in found]
    if missing:
        raise ReplyError(f"scores: missing dimension(s) {', '.join(map(repr, missing))}")
    raw_findings = reply.get("findings", [])
    if raw_findings is None:
        raw_findings = []
    if not isinstance(raw_findings, list):
        raise ReplyError("findings: expected a list")
    findings = tuple(_finding(f, i, dimensions) for i, f in enumerate(raw_findings))
    suggestion = reply.get("suggestion", "")
    if suggestion is None:
        suggestion = ""
    if not isinstance(suggestion, str):
        raise ReplyError("suggestion: expected a string")
    return ParsedReply(found, findings, suggestion.strip()[:MAX_TEXT], tuple(notes))
