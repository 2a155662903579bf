"""Issue 10's end-to-end agent run: `skill-eval run` (the CLI) with the real Claude Code CLI (the
claude-cli executor, each attempt in its jail, installed skill mode) against the loopback
Messages API in tests/fakes, on a suite with `files` and `allowed_tools`. The fake calls
`Skill` only when the skill's description was offered (the candidate arm), reads the input
file, then writes `{cwd}/report.md`; the baseline writes a report without the skill. Then the
artifact is rendered as HTML and opened in headless Chromium (issue 13), as is the mocked agent
demo.

Real-CLI tests skip without claude-agent-sdk (the bundled CLI) or bubblewrap (the jail);
browser tests skip without Chromium."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.claude.binary import bundled_cli
from tests.browser import Browser, find_chromium, png_colours
from tests.conftest import REPO
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import jail_missing, journal_records, run_cli, write_suite

# Read at import: the isolation fixture clears SKILL_EVAL_* before each test.
CONFIGURED_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN")
CHROMIUM = find_chromium()
needs_sdk = pytest.mark.skipif(
    bundled_cli() is None or jail_missing() is not None,
    reason=str(jail_missing() or "claude-agent-sdk not installed: pip install -e '.[agent]'"),
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install chromium, or set SKILL_EVAL_CHROMIUM)",
)

SKILL_MD = (
    "---\nname: csv-digest\ndescription: DIGEST-DESC-5c1e turns CSV files into a "
    "Markdown report\n---\n# csv-digest\nWrite report.md with the title and the row "
    "count.\n"
)
CSV = "item,units\napples,3\npears,4\n"
REPORT = "# Report: data.csv\nRows: 2\nDIGEST-MARK-91b0\n"  # only ever in the file, not the answer
BASELINE_REPORT = "# Report: data.csv\nRows: 2\n"
TASK = "digest"


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_use": {"name": name, "input": tool_input}}


# The candidate's script runs only when the skill's description is in the request; the
# baseline's only when it is not. Each step answers one model turn.
RULES = [
    {
        "name": "with-skill",
        "request_contains": "DIGEST-DESC-5c1e",
        "steps": [
            tool("Skill", skill="csv-digest"),
            tool("Read", file_path="{cwd}/inputs/data.csv"),
            tool("Write", file_path="{cwd}/report.md", content=REPORT),
            {"text": "Done: the report is written."},
        ],
    },
    {
        "name": "without-skill",
        "request_not_contains": "DIGEST-DESC-5c1e",
        "steps": [
            tool("Write", file_path="{cwd}/report.md", content=BASELINE_REPORT),
            {"text": "Done: the report is written."},
        ],
    },
]


def agent_suite(root: Path) -> Path:
    (root / "inputs").mkdir(parents=True)
    (root / "inputs" / "data.csv").write_text(CSV, encoding="utf-8")
    return write_suite(
        root,
        [
            {
                "id": TASK,
                "prompt": "Write a Markdown report of inputs/data.csv to report.md.",
                "files": ["inputs/data.csv"],
                "max_turns": 8,
                "judge": {
                    "type": "all",
                    "judges": [
                        {"type": "skill-used", "skill": "csv-digest", "expect": True},
                        {"type": "contains", "file": "report.md", "expected": ["DIGEST-MARK-91b0"]},
                        {"type": "file-exists", "paths": ["report.md"]},
                    ],
                },
            }
        ],
        skill_id="csv-digest",
        allowed_tools=["Skill", "Write", "Read"],
    )


def skill_folder(root: Path) -> Path:
    folder = root / "csv-digest"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    return folder


class AgentRun:
    """What one `skill-eval run` left behind."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.state = tmp, tmp / "state"
        self.suite_dir, self.cwd = tmp / "suite", tmp / "cwd"
        self.artifact, self.temp = tmp / "artifact.json", tmp / "temp"
        self.requests: list[Any] = []
        self.code, self.out, self.err = -1, "", ""  # `skill-eval run`'s exit code and streams

    def journal(self) -> dict[str, dict[str, Any]]:
        (journal,) = self.state.rglob("attempts.jsonl")
        return {r["arm"]: r for r in journal_records(journal)}

    def run_dir(self) -> Path:
        (journal,) = self.state.rglob("attempts.jsonl")
        return journal.parent


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentRun]:
    """One real run shared by the tests below (≈5 s: two attempts of the real CLI, in parallel)."""
    if bundled_cli() is None:
        pytest.skip("claude-agent-sdk not installed: pip install -e '.[agent]'")
    if (missing := jail_missing()) is not None:
        pytest.skip(missing)
    run = AgentRun(tmp_path_factory.mktemp("agent-e2e"))
    agent_suite(run.suite_dir)
    skill = skill_folder(run.tmp / "skills")
    run.cwd.mkdir()
    with pytest.MonkeyPatch.context() as mp, FakeAnthropic(rules=RULES) as server:
        # What the autouse isolation fixture does per test, for this module-wide run; and the
        # attempts' temporary workspaces under tmp/, to see that none is left behind.
        for name in list(os.environ):
            if name.startswith(("ANTHROPIC_", "SKILL_EVAL_", "CLAUDE_")):
                mp.delenv(name)
        (run.tmp / "home").mkdir()
        run.temp.mkdir()
        mp.setenv("HOME", str(run.tmp / "home"))
        mp.setenv("TMPDIR", str(run.temp))
        mp.setattr(tempfile, "tempdir", str(run.temp))
        mp.chdir(run.cwd)
        mp.setenv("ANTHROPIC_API_KEY", "sk-test")
        mp.setenv("ANTHROPIC_BASE_URL", server.base_url)
        args = [
            "run",
            "--standalone",
            "--task-suite",
            str(run.suite_dir / "task_suite.yaml"),
            "--skill-path",
            str(skill),
            "--state-root",
            str(run.state),
            "--executor",
            "claude-cli",
            "--skill-mode",
            "installed",
            "--keep-workspaces",
            "all",
            "--concurrency",
            "2",
            "--max-retries",
            "0",
            "-q",
            "--policy",
            "delta",
            "--output",
            str(run.artifact),
        ]
        if CONFIGURED_CLAUDE:
            args += ["--claude-bin", CONFIGURED_CLAUDE]
        run.code, run.out, run.err = run_cli(*args)
        run.requests = server.requests_to("/v1/messages")
    yield run


@needs_sdk
def test_skill_then_write_through_the_real_cli(agent_run: AgentRun) -> None:
    run = agent_run
    assert run.code == 0, run.err
    records = run.journal()
    candidate, baseline = records["candidate"], records["baseline"]
    assert (candidate["status"], baseline["status"]) == ("passed", "failed"), records
    # The fake played each arm's script: the skill's description reached the candidate only.
    rules = {r.rule.split("#")[0] for r in run.requests}
    assert rules == {"with-skill", "without-skill"}

    # report.md lands in each attempt's own workspace (kept under the run dir) and nowhere
    # else: not in cwd, not in the suite folder, not in the temp dir, not in HOME.
    kept = run.run_dir() / "workspaces"
    found = sorted(p.relative_to(run.tmp) for p in run.tmp.rglob("report.md"))
    assert found == sorted(
        p.relative_to(run.tmp)
        for p in (
            kept / "baseline" / TASK / "0" / "report.md",
            kept / "candidate" / TASK / "0" / "report.md",
        )
    )
    assert (kept / "candidate" / TASK / "0" / "report.md").read_text() == REPORT
    assert (kept / "baseline" / TASK / "0" / "report.md").read_text() == BASELINE_REPORT
    attempt = kept / "candidate" / TASK / "0"
    assert sorted(p.relative_to(attempt).as_posix() for p in attempt.rglob("*") if p.is_file()) == [
        "inputs/data.csv",
        "report.md",
    ]  # no installed skill left
    assert (attempt / "inputs" / "data.csv").read_text() == CSV
    assert list(run.cwd.iterdir()) == []
    assert list(run.temp.glob("skill-eval-*")) == []  # (Claude Code leaves claude-<uid>/ there)
    assert sorted(p.name for p in run.suite_dir.iterdir()) == ["inputs", "task_suite.yaml"]

    # The judges: skill-used passes for the candidate and fails for the baseline; the file
    # judges read report.md (its marker is in the file only, never in the final answer).
    def verdicts(record: dict[str, Any]) -> list[bool]:
        return [part["passed"] for part in record["judge"]["data"]["judges"]]

    assert verdicts(candidate) == [True, True, True], candidate["judge"]
    assert verdicts(baseline) == [False, False, True], baseline["judge"]  # its own report.md
    assert "DIGEST-MARK-91b0" not in candidate["output"]
    assert candidate["judge"]["data"]["judges"][0]["data"] == {"invocations": 1}
    assert "was not used" in baseline["judge"]["data"]["judges"][0]["details"]

    # The transcript, in the journal ...
    assert [(c["name"], c["ok"]) for c in candidate["transcript"]] == [
        ("Skill", True),
        ("Read", True),
        ("Write", True),
    ]
    assert candidate["transcript"][0]["input"] == {"skill": "csv-digest"}
    assert "apples,3" in candidate["transcript"][1]["output"]
    assert [(c["name"], c["ok"]) for c in baseline["transcript"]] == [("Write", True)]
    # Each arm wrote into its own jail's workspace, /workspace there (its content kept).
    written = [Path(r["transcript"][-1]["input"]["file_path"]) for r in (candidate, baseline)]
    assert written == [Path("/workspace/report.md")] * 2
    assert candidate["meta"]["isolation"]["jail"] == "bubblewrap"
    assert candidate["meta"]["api_retries"] == 0
    (changed,) = candidate["files"]["files"]
    assert changed["path"] == "report.md" and changed["size"] == len(REPORT)
    assert changed["sha256"] == hashlib.sha256(REPORT.encode()).hexdigest()
    assert candidate["files"]["root"] == str(attempt)
    assert candidate["meta"]["skill_invocations"] == 1
    assert sorted(candidate["meta"]["isolation"]["tools"]) == ["Read", "Skill", "Write"]
    # ... and in the artifact.
    artifact = json.loads(run.artifact.read_text())
    (cand_task,) = artifact["candidate_results"]
    (base_task,) = artifact["baseline_results"]
    assert cand_task["attempts"][0]["transcript"] == candidate["transcript"]
    assert base_task["attempts"][0]["transcript"] == baseline["transcript"]
    assert cand_task["attempts"][0]["files"] == candidate["files"]


# -- the artifact as an HTML report (issue 13) ----------------------------------------------------


def render(artifact: Path, out: Path) -> Path:
    code, stdout, err = run_cli("report", str(artifact), "--format", "html", "-o", str(out))
    assert code == 0, stdout + err
    return out


@needs_sdk
def test_the_agent_report_holds_the_changed_files_and_the_transcript(
    agent_run: AgentRun, tmp_path: Path
) -> None:
    html = render(agent_run.artifact, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "changed files (1)" in html and "<code>report.md</code>" in html
    assert "transcript (3 tool calls)" in html and "transcript (1 tool call)" in html
    assert "http://" not in html and "https://" not in html  # self-contained


# What the browser reads off one task row: per side, the changed files and the tool calls.
AGENT_ROW = """(() => {
  const row = document.querySelector(`details.task[data-task="${TASK}"]`);
  if (!row || row.hidden) return null;
  row.open = true;
  return Array.from(row.querySelectorAll('.side')).map(side => {
    side.querySelectorAll('details').forEach(d => { d.open = true; });
    const calls = Array.from(side.querySelectorAll('details.transcript li'));
    const files = Array.from(side.querySelectorAll('details.files li code'));
    return {arm: side.querySelector('h3').textContent,
            files: files.map(c => c.textContent),
            calls: calls.map(li => li.querySelector('b').textContent),
            shown: calls.every(li => li.getBoundingClientRect().height > 0),
            text: side.textContent};
  });
})()"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as b:
        yield b


@needs_sdk
@needs_chromium
def test_the_agent_report_opens_in_headless_chromium(
    agent_run: AgentRun, tmp_path: Path, browser: Browser
) -> None:
    browser.open(render(agent_run.artifact, tmp_path / "report.html"))
    width, height, colours = png_colours(browser.screenshot())
    assert width >= 800 and height >= 600 and colours > 50  # a blank page has one colour
    sides = browser.eval(AGENT_ROW.replace("${TASK}", TASK))
    assert sides is not None, "the agent task's row is missing or hidden"
    candidate, baseline = sides
    assert (candidate["arm"], baseline["arm"]) == ("candidate", "baseline")
    assert candidate["files"] == ["report.md"] and baseline["files"] == ["report.md"]
    assert candidate["calls"] == ["Skill", "Read", "Write"] and candidate["shown"]
    assert baseline["calls"] == ["Write"]
    assert "DIGEST-MARK-91b0" in candidate["text"]  # the Write's input, as the transcript says
    assert "was not used" in baseline["text"]  # the skill-used judge's feedback
    # The transcript is searchable: text only a tool's result holds finds the task.
    for query, found in (("no-such-text-3e9", False), ("pears,4", True)):
        browser.eval(
            f"var s = document.getElementById('search'); s.value = {query!r};"
            "s.dispatchEvent(new Event('input'))"
        )
        assert (browser.eval(AGENT_ROW.replace("${TASK}", TASK)) is not None) is found, query


DEMO_AGENT = REPO / "task_suites" / "demo-agent"


@needs_chromium
def test_the_mocked_agent_demo_report_opens_in_headless_chromium(
    tmp_path: Path, browser: Browser
) -> None:
    artifact = tmp_path / "demo-agent.json"
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(DEMO_AGENT),
        "--skill-path",
        str(DEMO_AGENT / "skill" / "csv-report"),
        "--mock",
        "--mock-outputs",
        str(DEMO_AGENT / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "state"),
        "-q",
        "--output",
        str(artifact),
    )
    assert code == 0, out + err
    browser.open(render(artifact, tmp_path / "report.html"))
    width, height, colours = png_colours(browser.screenshot())
    assert width >= 800 and height >= 600 and colours > 50
    visible = browser.eval(
        "Array.from(document.querySelectorAll('details.task'))"
        ".filter(r => !r.hidden).map(r => r.dataset.task)"
    )
    assert sorted(visible) == [
        "empty-csv",
        "input-untouched",
        "sales-report",
        "sales-report-tested",
        "uses-the-skill",
    ]
    candidate, baseline = browser.eval(AGENT_ROW.replace("${TASK}", "uses-the-skill"))
    assert candidate["calls"][0] == "Skill" and "Skill" not in baseline["calls"]
    assert candidate["files"] and candidate["shown"]
    browser.eval("document.querySelector('[data-filter=improved]').click()")
    improved = browser.eval(
        "Array.from(document.querySelectorAll('details.task'))"
        ".filter(r => !r.hidden).map(r => r.dataset.task)"
    )
    assert sorted(improved) == [
        "empty-csv",
        "sales-report",
        "sales-report-tested",
        "uses-the-skill",
    ]
