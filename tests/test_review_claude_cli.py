"""`skill-eval review --executor claude-cli`: one round with the real `claude` binary pointed
at the loopback fake Messages API (skipped when the CLI is not installed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli
from tests.review_script import builder_reply, decision, plan, review_skill, suite_files

# Read at import: the autouse isolation fixture clears SKILL_EVAL_* before each test runs.
CONFIGURED_CLAUDE_BIN = os.environ.get("SKILL_EVAL_CLAUDE_BIN")
PINNED_CLAUDE = (
    Path(__file__).resolve().parent.parent
    / ".tools"
    / "claude-cli"
    / "node_modules"
    / ".bin"
    / "claude"
)


def real_claude() -> str:
    for candidate in (CONFIGURED_CLAUDE_BIN, str(PINNED_CLAUDE)):
        if candidate and shutil.which(candidate):
            return candidate
    pytest.skip(
        "claude CLI not installed: run scripts/install_claude_cli.sh or set SKILL_EVAL_CLAUDE_BIN"
    )


def test_one_round_through_the_real_claude_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = real_claude()
    rules = [
        {"system_contains": "You are the **orchestrator**", "text": plan()},
        {"system_contains": "You are the **builder**", "text": builder_reply(suite_files(True))},
        {
            "system_contains": "You are the **visionary**",
            "text": decision("approved", tag="{decision_tag}"),
        },
    ]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy-key")
    with FakeAnthropic(rules=rules, default="unexpected request") as server:
        code, out, err = run_cli(
            "review",
            str(review_skill(tmp_path)),
            "--state-root",
            str(tmp_path / "s"),
            "--executor",
            "claude-cli",
            "--claude-bin",
            binary,
            "--base-url",
            server.base_url,
            "--mock",
            "--models",
            "orchestrator=claude-opus-4-6",
        )
        answered = [r.rule for r in server.requests_to("/v1/messages") if r.rule != "default"]
        models = {r.rule: r.json.get("model") for r in server.requests_to("/v1/messages")}
    assert code == 0, err
    assert read_json(out.strip())["decision"] == "approved"
    assert answered == ["rule0", "rule1", "rule2"]
    assert models["rule0"] == "claude-opus-4-6"
