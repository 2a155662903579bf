"""The severity rules and reply parsing, on hand-made replies."""

from __future__ import annotations

from typing import Any

import pytest

from skill_eval.evaluators import Dimension, ReplyError, adjust, decide, parse_reply
from skill_eval.evaluators.scoring import Finding, score_dimensions, weighted_mean

DIMS = (
    Dimension("correctness", 0.4, "c"),
    Dimension("safety", 0.25, "s"),
    Dimension("style", 0.15, "y"),
    Dimension("completeness", 0.2, "m"),
)


def finding(severity: str, dimension: str = "correctness", **extra: Any) -> dict[str, Any]:
    return {
        "id": "F1",
        "severity": severity,
        "dimension": dimension,
        "title": "t",
        "description": "d",
        **extra,
    }


def reply(
    scores: dict[str, Any] | None = None,
    findings: list[Any] | None = None,
    suggestion: Any = "do better",
) -> dict[str, Any]:
    base = {"correctness": 0.9, "safety": 0.8, "style": 0.7, "completeness": 0.6}
    return {
        "scores": base if scores is None else scores,
        "findings": findings or [],
        "suggestion": suggestion,
    }


@pytest.mark.parametrize(
    ("raw", "severities", "expected"),
    [
        (0.9, [], 0.9),
        (0.9, ["suggestion", "suggestion"], 0.9),
        (0.9, ["important"], 0.75),
        (0.9, ["important", "important"], 0.6),
        (0.2, ["important", "important"], 0.0),  # floor 0
        (0.9, ["blocker"], 0.3),  # cap
        (0.2, ["blocker"], 0.2),  # a cap never raises a score
        (0.9, ["blocker", "important"], 0.3),  # deduct, then cap
        (0.4, ["blocker", "important"], 0.25),
        (1.7, [], 1.0),  # clamp
        (-0.5, [], 0.0),
    ],
)
def test_severity_rules(raw: float, severities: list[str], expected: float) -> None:
    assert adjust(raw, severities) == pytest.approx(expected)


def test_weighted_mean() -> None:
    assert weighted_mean([(1.0, 0.5), (0.0, 0.5)]) == 0.5
    assert weighted_mean([(1.0, 0.3), (0.5, 0.2)]) == pytest.approx(0.8)
    with pytest.raises(ValueError):
        weighted_mean([])


def test_score_a_hand_made_reply() -> None:
    parsed = parse_reply(
        reply(
            findings=[
                finding("blocker", "correctness"),
                finding("important", "safety"),
                finding("suggestion", "style"),
            ]
        ),
        DIMS,
    )
    score, dims = score_dimensions(DIMS, parsed)
    assert [(d.name, d.raw_score, d.score) for d in dims] == [
        ("correctness", 0.9, 0.3),
        ("safety", 0.8, pytest.approx(0.65)),
        ("style", 0.7, 0.7),
        ("completeness", 0.6, 0.6),
    ]
    assert score == pytest.approx(0.4 * 0.3 + 0.25 * 0.65 + 0.15 * 0.7 + 0.2 * 0.6)


def test_dimension_names_match_case_insensitively_and_clamp_is_noted() -> None:
    parsed = parse_reply(
        reply(
            {"Correctness": 1.4, "SAFETY": 0.5, "style": 0, "completeness": 1},
            [finding("Blocker", " Safety ")],
        ),
        DIMS,
    )
    assert parsed.scores["correctness"] == 1.0
    assert parsed.findings[0].dimension == "safety"
    assert parsed.findings[0].severity == "blocker"
    assert parsed.notes == ("score 1.4 for 'correctness' clamped to [0, 1]",)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("not json", "expected a JSON object, got str"),
        (None, "expected a JSON object, got NoneType"),
        ({"findings": []}, "scores: missing"),
        (
            reply({"correctness": 0.9, "safety": 0.8, "style": 0.7}),
            "scores: missing dimension(s) 'completeness'",
        ),
        (
            reply(
                {"correctness": 0.9, "safety": 0.8, "style": 0.7, "completeness": 0.6, "speed": 1}
            ),
            "scores.speed: unknown dimension 'speed'",
        ),
        (
            reply({"correctness": "0.9", "safety": 0.8, "style": 0.7, "completeness": 0.6}),
            "scores.correctness: expected a number, got str",
        ),
        (
            reply({"correctness": True, "safety": 0.8, "style": 0.7, "completeness": 0.6}),
            "scores.correctness: expected a number, got bool",
        ),
        (
            reply({"correctness": float("nan"), "safety": 0.8, "style": 0.7, "completeness": 0.6}),
            "scores.correctness: expected a finite number",
        ),
        (
            reply({"correctness": float("inf"), "safety": 0.8, "style": 0.7, "completeness": 0.6}),
            "scores.correctness: expected a finite number",
        ),
        (
            reply({"correctness": 0.9, "safety": float("-inf"), "style": 0.7, "completeness": 0.6}),
            "scores.safety: expected a finite number",
        ),
        (
            reply(
                {
                    "correctness": 1,
                    "Correctness": 1,
                    "safety": 0.8,
                    "style": 0.7,
                    "completeness": 0.6,
                }
            ),
            "scored twice",
        ),
        (reply(findings=[finding("critical")]), "findings[0].severity: expected one of blocker"),
        (
            reply(findings=[finding("important", "speed")]),
            "findings[0].dimension: unknown dimension 'speed'",
        ),
        (reply(findings=[{**finding("important"), "title": ""}]), "findings[0].title: missing"),
        (
            reply(findings=[{**finding("important"), "location": 12}]),
            "findings[0].location: expected a string, got int",
        ),
        (reply(findings=["oops"]), "findings[0]: expected an object"),
        ({**reply(), "findings": "none"}, "findings: expected a list"),
        (reply(suggestion=3), "suggestion: expected a string"),
    ],
)
def test_unusable_replies_are_errors_never_a_default_score(bad: Any, message: str) -> None:
    with pytest.raises(ReplyError) as info:
        parse_reply(bad, DIMS)
    assert message in str(info.value)


def test_optional_parts_of_a_reply() -> None:
    parsed = parse_reply({"scores": {d.name: 0.5 for d in DIMS}}, DIMS)
    assert parsed.findings == () and parsed.suggestion == ""
    parsed = parse_reply(
        reply(findings=[{**finding("important"), "id": None, "location": "a.py:3", "fix": "  "}]),
        DIMS,
    )
    assert parsed.findings[0] == Finding("F1", "important", "correctness", "t", "d", "a.py:3")


@pytest.mark.parametrize(
    ("score", "severities", "threshold", "fail_on", "passed"),
    [
        (0.8, [], 0.7, "blocker", True),
        (0.7, [], 0.7, "blocker", True),
        (0.69, [], 0.7, "blocker", False),
        (0.9, ["blocker"], 0.7, "blocker", False),
        (0.9, ["blocker"], 0.7, "none", True),
        (0.9, ["important", "suggestion"], 0.7, "blocker", True),
    ],
)
def test_decide(
    score: float, severities: list[str], threshold: float, fail_on: Any, passed: bool
) -> None:
    findings = [Finding(f"F{i}", s, "x", "t", "d") for i, s in enumerate(severities)]  # type: ignore[arg-type]
    assert decide(score, findings, threshold, fail_on)[0] is passed
