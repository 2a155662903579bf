"""`skill-eval review --executor anthropic`: one full round through the real SDK against the
loopback fake Messages API, and what each stage's request may carry (the request log)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.review.goal import ROLES_DIR
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli
from tests.review_script import VISION, builder_reply, decision, plan, review_skill, suite_files


def _text(request: Any) -> tuple[str, str]:
    """(system prompt, every message's text) of a recorded request."""
    body = request.json
    system = body.get("system")
    if isinstance(system, list):
        system = "\n".join(block.get("text", "") for block in system)
    return str(system or ""), json.dumps(body.get("messages"), ensure_ascii=False)


def test_one_round_with_the_sdk_and_only_allowed_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = review_skill(tmp_path)
    vision = tmp_path / "vision.md"
    vision.write_text(VISION + "\n", encoding="utf-8")
    rules = [
        {
            "system_contains": "You are the **orchestrator**",
            "text": plan(marker="BUILDER-TASK-MARKER"),
        },
        {
            "system_contains": "You are the **builder**",
            "text": builder_reply(suite_files(True, rationale="RATIONALE-MARKER")),
        },
        {
            "system_contains": "You are the **visionary**",
            "text": decision("approved", tag="{decision_tag}"),
        },
    ]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(rules=rules, default="unexpected request") as server:
        code, out, err = run_cli(
            "review",
            str(skill),
            "--vision",
            str(vision),
            "--state-root",
            str(tmp_path / "s"),
            "--executor",
            "anthropic",
            "--base-url",
            server.base_url,
            "--mock",
            "--models",
            "orchestrator=model-o,builder=model-b,visionary=model-v",
        )
        requests = server.requests_to("/v1/messages")
    assert code == 0, err
    record = read_json(out.strip())
    assert record["decision"] == "approved"
    assert {role: (u["calls"], u["models"]) for role, u in record["usage"].items()} == {
        "orchestrator": (1, ["model-o"]),
        "builder": (1, ["model-b"]),
        "visionary": (1, ["model-v"]),
    }
    assert all(u["input_tokens"] > 0 for u in record["usage"].values())
    assert [r.rule for r in requests] == ["rule0", "rule1", "rule2"]
    assert [r.json["model"] for r in requests] == ["model-o", "model-b", "model-v"]
    (o_sys, o_msg), (b_sys, b_msg), (v_sys, v_msg) = (_text(r) for r in requests)
    for role, system in (("orchestrator", o_sys), ("builder", b_sys), ("visionary", v_sys)):
        assert system == (ROLES_DIR / f"{role}.md").read_text(encoding="utf-8")
    assert all(VISION in m for m in (o_msg, b_msg, v_msg))  # the goal crosses every boundary

    # Orchestrator: the goal with the skill's files (the submission).
    assert "SKILL-BODY-MARKER" in o_msg and "Extra reference for the skill." in o_msg
    # Builder: the goal's brief and the plan; not the skill's files.
    assert "BUILDER-TASK-MARKER" in b_msg
    assert "SKILL-BODY-MARKER" not in b_msg and "Extra reference" not in b_msg
    # Visionary: the goal's brief and the QA report; not the plan's builder tasks, not the
    # builder's conversation or files, not the skill's files.
    assert "# QA report" in v_msg and "Discriminating tasks: 2 of 2" in v_msg
    for leaked in (
        "BUILDER-TASK-MARKER",
        "RATIONALE-MARKER",
        "=== FILE:",
        "mock_outputs",
        "SKILL-BODY-MARKER",
    ):
        assert leaked not in v_msg, leaked


def test_missing_key_is_an_error_exit(tmp_path: Path) -> None:
    skill = review_skill(tmp_path)
    code, _out, err = run_cli(
        "review",
        str(skill),
        "--state-root",
        str(tmp_path / "s"),
        "--executor",
        "anthropic",
        "--mock",
    )
    assert code == 3
    assert (
        err.strip().splitlines()[-1]
        == "Error: ANTHROPIC_API_KEY is not set (needed by the anthropic executor)"
    )
