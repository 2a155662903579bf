"""Issue 32's "compare agents and delivery in one run" with the real Claude Code CLI (claude-cli,
every attempt in its jail) against the loopback Messages API: one run with the arms installed,
context, nudged and none on one agent. The fake behaves as agents do: installed, the skill is
offered and never invoked (the agent writes its own report); nudged, the prompt's nudge makes it
invoke the skill, whose body then says what to write; in context, the skill's text arrives in
CLAUDE.md and the agent follows it at once; without the skill, its own report. The artifact
gives four pass rates, the fired rates and three paired comparisons, and the HTML report shows
the arms side by side in headless Chromium.

Skips without claude-agent-sdk (the bundled CLI) or bubblewrap, and the browser part without
Chromium."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.execution import NUDGE
from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.report.html import render_html
from tests.browser import Browser, find_chromium, png_colours
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import jail_missing, journal_records, read_json, run_cli, write_suite

CONFIGURED_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN")  # the isolation fixture clears it
CHROMIUM = find_chromium()

SKILL_MD = (
    "---\nname: csv-digest\ndescription: DIGEST-DESC-5c1e turns CSV files into a Markdown "
    "report\n---\n# csv-digest\nDIGEST-BODY-2b7d: write report.md with the title, the row "
    "count and the line DIGEST-MARK-91b0.\n"
)
REPORT = "# Report\nRows: 2\nDIGEST-MARK-91b0\n"  # what the skill's body asks for
OWN_REPORT = "# Report\nRows: 2\n"  # what the agent writes on its own
NUDGE_LINE = NUDGE.format(name="csv-digest")
TASKS = ("fruit", "veg")


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_use": {"name": name, "input": tool_input}}


# Each rule is one arm's agent, told apart by what its requests hold; each step answers a turn.
RULES = [
    {
        "name": "nudged",  # told to use the skill: invokes it, then does what its body says
        "messages_contain": NUDGE_LINE,
        "steps": [
            tool("Skill", skill="csv-digest"),
            tool("Write", file_path="{cwd}/report.md", content=REPORT),
            {"text": "Done: the report is written."},
        ],
    },
    {
        "name": "context",  # the body is in CLAUDE.md from the first turn on
        "messages_contain": ["Contents of /workspace/CLAUDE.md", "DIGEST-BODY-2b7d"],
        "steps": [
            tool("Write", file_path="{cwd}/report.md", content=REPORT),
            {"text": "Done: the report is written."},
        ],
    },
    {
        "name": "own-report",  # installed but not invoked, and the no-skill arm: its own report
        "steps": [
            tool("Write", file_path="{cwd}/report.md", content=OWN_REPORT),
            {"text": "Done: the report is written."},
        ],
    },
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
                "max_turns": 6,
                "judge": {
                    "type": "contains",
                    "file": "report.md",
                    "expected": ["DIGEST-MARK-91b0"],
                },
            }
        )
    return write_suite(root, tasks, skill_id="csv-digest", allowed_tools=["Skill", "Write"])


@pytest.fixture(scope="module")
def arms_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One four-arm run of the real CLI (8 attempts, 4 at a time), shared by the tests below."""
    if bundled_cli() is None:
        pytest.skip("claude-agent-sdk not installed: pip install -e '.[agent]'")
    if (missing := jail_missing()) is not None:
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("arms-claude")
    skill = tmp / "skills" / "csv-digest"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    path = suite(tmp / "suite")
    with pytest.MonkeyPatch.context() as mp, FakeAnthropic(rules=RULES) as server:
        for name in list(os.environ):
            if name.startswith(("ANTHROPIC_", "SKILL_EVAL_", "CLAUDE_")):
                mp.delenv(name)
        (tmp / "home").mkdir()
        mp.setenv("HOME", str(tmp / "home"))
        mp.setattr(tempfile, "tempdir", str(tmp))
        mp.chdir(tmp)
        mp.setenv("ANTHROPIC_API_KEY", "sk-test")
        mp.setenv("ANTHROPIC_BASE_URL", server.base_url)
        args = [
            *("run", "--task-suite", str(path), "--skill-path", str(skill)),
            *("--state-root", str(tmp / "state"), "--executor", "claude-cli"),
            *("--arm", "installed=installed", "--arm", "context=context"),
            *("--arm", "nudged=nudged", "--arm", "none=none"),
            *("--keep-workspaces", "all", "--concurrency", "4", "--max-retries", "0", "-q"),
            *("--output", str(tmp / "artifact.json")),
        ]
        if CONFIGURED_CLAUDE:
            args += ["--claude-bin", CONFIGURED_CLAUDE]
        code, out, err = run_cli(*args)
        requests = server.requests_to("/v1/messages")
    yield {"tmp": tmp, "code": code, "out": out, "err": err, "requests": requests}


needs_sdk = pytest.mark.skipif(
    bundled_cli() is None or jail_missing() is not None,
    reason=str(jail_missing() or "claude-agent-sdk not installed: pip install -e '.[agent]'"),
)


@needs_sdk
def test_four_arms_on_claude_code_give_four_pass_rates_and_three_comparisons(
    arms_run: dict[str, Any],
) -> None:
    assert arms_run["code"] in (0, 1, 4), arms_run["err"]
    data = read_json(arms_run["tmp"] / "artifact.json")
    section = data["arms"]
    arms = {a["name"]: a for a in section["arms"]}
    assert {n: a["pass_rate"] for n, a in arms.items()} == {
        "installed": 0.0,
        "context": 1.0,
        "nudged": 1.0,
        "none": 0.0,
    }
    assert arms["installed"]["fired"]["rate"] == 0.0  # offered, never invoked
    assert arms["nudged"]["fired"] == {"how": "invoked", "rate": 1.0, "attempts": 2, "fired": 2}
    assert arms["context"]["fired"]["how"] == "always" and arms["none"]["fired"] is None
    assert {a["runs_on"]["kind"] for a in section["arms"]} == {"claude-cli"}
    assert arms["context"]["runs_on"]["skill_mode"] == "context"
    comparisons = {c["arm"]: c for c in section["comparisons"]}
    assert {n: c["delta"] for n, c in comparisons.items()} == {
        "installed": 0.0,
        "context": 1.0,
        "nudged": 1.0,
    }
    assert comparisons["installed"]["when_fired"]["tasks"] == 0  # "good, but never loads"
    assert comparisons["nudged"]["when_fired"]["delta"] == 1.0
    assert all(c["comparison"]["interval"] is not None for c in comparisons.values())
    ev = data["evaluation"]  # the top-level fields: installed (the first arm) vs none
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"]) == (0.0, 0.0)


@needs_sdk
def test_each_arm_got_the_skill_only_as_its_delivery_says(arms_run: dict[str, Any]) -> None:
    by_rule: dict[str, list[Any]] = {}
    for request in arms_run["requests"]:
        by_rule.setdefault(request.rule.split("#")[0], []).append(request)
    assert set(by_rule) == {"nudged", "context", "own-report"}
    firsts = [r for r in arms_run["requests"] if r.conversation.turn == 1]
    assert (
        sorted(r.rule for r in firsts)
        == ["context#1"] * 2 + ["nudged#1"] * 2 + ["own-report#1"] * 4
    )  # one first turn per attempt: 4 arms x 2 tasks
    # the nudge reached the nudged arm alone; CLAUDE.md the context arm alone
    assert [r.rule for r in firsts if NUDGE_LINE in r.text] == ["nudged#1"] * 2
    context = [r for r in firsts if "Contents of /workspace/CLAUDE.md" in r.text]
    assert [r.rule for r in context] == ["context#1"] * 2
    assert all("# Skill: csv-digest" in r.text for r in context)
    # installed and nudged offer the skill's description; the others do not install it
    offered = [r for r in arms_run["requests"] if "DIGEST-DESC-5c1e" in r.text]
    assert {r.rule.split("#")[0] for r in offered} >= {"nudged", "own-report"}

    (journal,) = (arms_run["tmp"] / "state").rglob("attempts.jsonl")
    records = {(r["arm"], r["task_id"]): r for r in journal_records(journal)}
    assert [c["name"] for c in records["nudged", "fruit"]["transcript"]] == ["Skill", "Write"]
    assert records["nudged", "fruit"]["meta"]["skill_invocations"] == 1
    assert [c["name"] for c in records["context", "fruit"]["transcript"]] == ["Write"]
    # what skill-eval wrote into the workspace is not the agent's work: none of it is kept
    kept = journal.parent / "workspaces"
    left = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    assert left == sorted(
        f"{arm}/{task}/0/{name}"
        for arm in ("installed", "context", "nudged", "none")
        for task in TASKS
        for name in (f"inputs/{task}.csv", "report.md")
    )


needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install chromium, or set SKILL_EVAL_CHROMIUM)",
)


@needs_sdk
@needs_chromium
def test_the_html_report_shows_the_four_arms_side_by_side(arms_run: dict[str, Any]) -> None:
    data = read_json(arms_run["tmp"] / "artifact.json")
    page = arms_run["tmp"] / "report.html"
    page.write_text(render_html(data), encoding="utf-8")
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as browser:
        browser.open(page)
        width, height, colours = png_colours(browser.screenshot())
        heads = browser.eval(
            "Array.from(document.querySelectorAll('#arms thead th.arm'))"
            ".map(t => [t.dataset.arm, t.classList.contains('reference')])"
        )
        rates = browser.eval(
            "Array.from(document.querySelectorAll('#arms tr[data-row=pass_rate] td'))"
            ".map(td => td.textContent.trim())"
        )
        fired = browser.eval(
            "Array.from(document.querySelectorAll('#arms tr[data-row=fired] td'))"
            ".map(td => td.textContent.trim())"
        )
    assert width >= 800 and colours > 50
    assert heads == [["installed", False], ["context", False], ["nudged", False], ["none", True]]
    assert rates == ["0.0000", "1.0000", "1.0000", "0.0000"]
    assert fired == ["0% (0/2 attempts)", "always (in context)", "100% (2/2 attempts)", "-"]
