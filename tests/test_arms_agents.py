"""Issue 32's four delivery arms on OpenCode and on Codex (the real pinned CLIs, every attempt
in its jail, offline against the OpenAI fakes), as test_arms_claude.py runs them on Claude
Code: installed (offered, never invoked: the agent writes its own report), context (the skill
in AGENTS.md, the same document Claude Code's CLAUDE.md gets: followed at once), nudged (the
prompt's nudge makes the agent invoke it, in its own way) and none. Four pass rates, the
fired rates, three paired comparisons; what skill-eval wrote never reaches the judges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.execution import NUDGE
from tests.agent_runs import needs, run_agent
from tests.agent_scripts import SKILL_ROOTS, tool_step
from tests.helpers import write_suite

pytestmark = pytest.mark.slow  # a real agent CLI, 8 attempts

SKILL_MD = (
    "---\nname: csv-digest\ndescription: DIGEST-DESC-5c1e turns CSV files into a Markdown "
    "report\n---\n# csv-digest\nDIGEST-BODY-2b7d: write report.md with the title, the row "
    "count and the line DIGEST-MARK-91b0.\n"
)
REPORT = "# Report\nRows: 2\nDIGEST-MARK-91b0\n"
OWN_REPORT = "# Report\nRows: 2\n"
NUDGE_LINE = NUDGE.format(name="csv-digest")
TASKS = ("fruit", "veg")
ARMS = ("installed", "context", "nudged", "none")


def rules(agent: str) -> list[dict[str, Any]]:
    def step(*parts: str) -> dict[str, Any]:
        return tool_step(agent, parts, SKILL_ROOTS[agent])

    done = {"text": "Done: the report is written."}
    return [
        {
            "name": "nudged",
            "messages_contain": NUDGE_LINE,
            "steps": [step("skill", "csv-digest"), step("write", "report.md", REPORT), done],
        },
        {
            "name": "context",  # AGENTS.md's document is in the request from the first turn
            "request_contains": ["# Skill: csv-digest", "DIGEST-BODY-2b7d"],
            "steps": [step("write", "report.md", REPORT), done],
        },
        {"name": "own-report", "steps": [step("write", "report.md", OWN_REPORT), done]},
    ]


def suite(root: Path) -> Path:
    (root / "inputs").mkdir(parents=True)
    tasks = []
    for task in TASKS:
        (root / "inputs" / f"{task}.csv").write_text("item,units\na,1\nb,2\n", encoding="utf-8")
        tasks.append(
            {
                "id": task,
                "prompt": f"Write a Markdown report of inputs/{task}.csv to report.md.",
                "files": [f"inputs/{task}.csv"],
                "judge": {
                    "type": "contains",
                    "file": "report.md",
                    "expected": ["DIGEST-MARK-91b0"],
                },
            }
        )
    return write_suite(root, tasks, skill_id="csv-digest", allowed_tools=["Skill", "Write"])


@pytest.mark.parametrize(
    "agent", [pytest.param(a, marks=needs(a), id=a) for a in ("opencode", "codex")]
)
def test_four_arms_on_one_agent(tmp_path: Path, agent: str) -> None:
    skill = tmp_path / "skills" / "csv-digest"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    args = ["--task-suite", str(suite(tmp_path / "suite")), "--skill-path", str(skill)]
    for arm in ARMS:
        args += ["--arm", f"{arm}={arm}"]
    args += ["--concurrency", "3", "--max-retries", "0"]
    run = run_agent(tmp_path / "run", agent, args, rules(agent), default="Done.")
    assert run.code in (0, 1, 4), run.err
    section = run.data()["arms"]
    arms = {a["name"]: a for a in section["arms"]}
    rates = {n: a["pass_rate"] for n, a in arms.items()}
    assert rates == {"installed": 0.0, "context": 1.0, "nudged": 1.0, "none": 0.0}
    assert arms["installed"]["fired"]["rate"] == 0.0  # offered, never invoked
    assert arms["nudged"]["fired"] == {"how": "invoked", "rate": 1.0, "attempts": 2, "fired": 2}
    assert arms["context"]["fired"]["how"] == "always" and arms["none"]["fired"] is None
    assert {a["runs_on"]["kind"] for a in section["arms"]} == {agent}
    assert arms["context"]["runs_on"]["skill_mode"] == "context"
    deltas = {c["arm"]: c["delta"] for c in section["comparisons"]}
    assert deltas == {"installed": 0.0, "context": 1.0, "nudged": 1.0}

    records = run.by_arm_task()
    nudged = [c["name"] for c in records["nudged", "fruit"]["transcript"] if c["name"] != "Bash"]
    assert nudged == ["Skill", "Write"]
    assert records["nudged", "fruit"]["meta"]["skill_invocations"] == 1
    assert [c["name"] for c in records["context", "fruit"]["transcript"]] == ["Write"]
    assert records["context", "fruit"]["meta"]["isolation"]["skill_mode"] == "context"
    # Before any tool ran, the skill's body reached the context arm's requests alone.
    firsts = [r for r in run.requests if r.conversation.turn == 1]
    with_body = [r.rule for r in firsts if "DIGEST-BODY-2b7d" in json.dumps(r.json)]
    assert sorted(with_body) == ["context#1"] * 2
    # Only the agent's work came back: no AGENTS.md, .skill-eval or skill folder kept.
    (journal,) = run.state.rglob("attempts.jsonl")
    kept = journal.parent / "workspaces"
    left = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    assert left == sorted(
        f"{arm}/{task}/0/{name}"
        for arm in ARMS
        for task in TASKS
        for name in (f"inputs/{task}.csv", "report.md")
    )
