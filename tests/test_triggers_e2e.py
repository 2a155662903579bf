"""Issue 11's bar for trigger suites: `skill-eval run` with the real Claude Code CLI (the
claude-cli executor, each attempt in its jail) against the loopback Messages API in
tests/fakes. The fake calls `Skill` only when the candidate's description was offered and the
query is one that should trigger it, so a 6-query suite gives the candidate TPR 1.0 / FPR 0.0
and the baseline (whose description the fake never matches) TPR 0.0 / FPR 0.0. HOME holds a
user-level skill of the same name whose description the fake WOULD match: it never reaches a
request. A 529 storm
makes every attempt an error (each request resent by the CLI, each attempt retried), never
"not triggered".

Real-CLI tests skip without claude-agent-sdk or without bubblewrap (each attempt's jail)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.claude.binary import bundled_cli
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import jail_missing, journal_records, run_cli, write_suite

CONFIGURED_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN")  # read before isolation clears it
pytestmark = [
    pytest.mark.skipif(
        bundled_cli() is None, reason="claude-agent-sdk not installed: pip install -e '.[agent]'"
    ),
    pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing())),
    pytest.mark.slow,  # Claude Code per attempt: the shared run alone takes about 12 s
]

CANDIDATE_DESC = "CAND-DESC-7f3a converts documents into PDF files"
BASELINE_DESC = "BASE-DESC-41c2 converts documents"
SHADOW_DESC = f"{CANDIDATE_DESC} SHADOW-9d2c"  # the user's own skill of the same name
MARK = "PDF-QUERY"  # in the queries that should trigger
QUERIES = [
    ("make-pdf", f"{MARK} make a pdf of my notes", True),
    ("report-pdf", f"{MARK} turn this report into a pdf", True),
    ("export-pdf", f"{MARK} export the page as pdf", True),
    ("arith", "what is 17 times 3?", False),
    ("joke", "tell me a joke about cats", False),
    ("rename", "suggest a name for a variable", False),
]
# The fake's delay of the answer after the invocation: an attempt that waited for it would last
# at least this long, so any shorter one (Claude Code's start-up on a loaded machine included)
# stopped at the invocation. Below the suite's default task timeout (300 s).
ANSWER_LATENCY = 240.0
# The candidate's description and a should-trigger query: load the skill (then answer, should
# the run go on: it must not, the attempt stops at the invocation). Anything else: a text.
RULES = [
    {
        "name": "load-skill",
        "request_contains": [CANDIDATE_DESC, MARK],
        "steps": [
            {"tool_use": {"name": "Skill", "input": {"skill": "pdfmaker"}}},
            {"text": "Here is your PDF.", "latency": ANSWER_LATENCY},
        ],
    }
]
DEFAULT = {"text": "Sure, here you go."}


def skill(root: Path, description: str) -> Path:
    folder = root / "pdfmaker"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: pdfmaker\ndescription: {description}\n---\n# pdfmaker\nWrite the PDF.\n",
        encoding="utf-8",
    )
    return folder


class TriggerRun:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.artifact = tmp / "artifact.json"
        self.code, self.out, self.err = -1, "", ""
        self.requests: list[Any] = []

    def data(self) -> dict[str, Any]:
        return json.loads(self.artifact.read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def journal(self) -> list[dict[str, Any]]:
        (journal,) = (self.tmp / "state").rglob("attempts.jsonl")
        return journal_records(journal)


def trigger_run(tmp: Path, *, faults: list[Any] | None = None, retries: int = 0) -> TriggerRun:
    run = TriggerRun(tmp)
    suite = write_suite(
        tmp / "suite",
        [{"id": i, "query": q, "should_trigger": s} for i, q, s in QUERIES],
        skill_id="pdfmaker",
    )
    candidate = skill(tmp / "cand", CANDIDATE_DESC)
    baseline = skill(tmp / "base", BASELINE_DESC)
    home = tmp / "home"
    skill(home / ".claude" / "skills", SHADOW_DESC)  # ~/.claude/skills/pdfmaker
    (tmp / "temp").mkdir()
    with (
        pytest.MonkeyPatch.context() as mp,
        FakeAnthropic(rules=RULES, default=DEFAULT, faults=faults) as server,
    ):
        for name in list(os.environ):
            if name.startswith(("ANTHROPIC_", "SKILL_EVAL_", "CLAUDE_")):
                mp.delenv(name)
        mp.setenv("HOME", str(home))
        mp.setenv("TMPDIR", str(tmp / "temp"))
        mp.setattr(tempfile, "tempdir", str(tmp / "temp"))
        mp.chdir(tmp)
        mp.setenv("ANTHROPIC_API_KEY", "sk-test")
        mp.setenv("ANTHROPIC_BASE_URL", server.base_url)
        args = [
            "run",
            "--standalone",
            "--task-suite",
            str(suite),
            "--skill-path",
            str(candidate),
            "--baseline-skill",
            str(baseline),
            "--state-root",
            str(tmp / "state"),
            "--executor",
            "claude-cli",
            "--concurrency",
            "3",
            "--max-retries",
            str(retries),
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
    return run


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TriggerRun]:
    """One real run of 6 queries × 2 arms, shared by the tests below."""
    yield trigger_run(tmp_path_factory.mktemp("triggers-e2e"))


def test_candidate_triggers_exactly_when_it_should(clean_run: TriggerRun) -> None:
    run = clean_run
    assert run.code == 0, run.err
    triggers = run.data()["triggers"]
    cand, base = triggers["arms"]["candidate"], triggers["arms"]["baseline"]
    assert (cand["tpr"]["rate"], cand["fpr"]["rate"], cand["accuracy"]["rate"]) == (1.0, 0.0, 1.0)
    # The baseline's description is never matched: it never triggers.
    assert (base["tpr"]["rate"], base["fpr"]["rate"], base["accuracy"]["rate"]) == (0.0, 0.0, 0.5)
    assert cand["errors"] == base["errors"] == 0
    assert {q["id"]: q["trigger_rate"] for q in cand["queries"]} == {
        i: (1.0 if s else 0.0) for i, _, s in QUERIES
    }
    comparison = triggers["comparison"]
    assert comparison["accuracy"]["delta"] == 0.5
    assert comparison["tpr"]["delta"] == 1.0 and comparison["fpr"]["delta"] == 0.0
    assert comparison["policy"]["name"] == "delta" and comparison["policy"]["passed"]
    assert run.data()["evaluation"]["verdict"] == "pass"


def test_attempt_stops_at_the_invocation(clean_run: TriggerRun) -> None:
    """The candidate's triggering attempts stop at the Skill call: they do not wait for the
    model's next turn (which the fake delays by 240 s; the CLI may have sent that request
    before it was killed), and their record ends at the invocation."""
    run = clean_run
    rules = sorted(str(r.rule) for r in run.requests if r.rule != "load-skill#2")
    assert rules == ["default"] * 9 + ["load-skill#1"] * 3
    records = {(r["arm"], r["task_id"]): r for r in run.journal()}
    hit = records[("candidate", "make-pdf")]
    assert hit["status"] == "passed" and hit["meta"]["stopped"] == "skill invoked"
    assert hit["duration_ms"] < ANSWER_LATENCY * 1000 and hit["output"] == ""
    assert hit["usage"]["output_tokens"] > 0  # summed from the reply, no result message
    assert [c["name"] for c in hit["transcript"]] == ["Skill"]
    assert hit["transcript"][0]["input"] == {"skill": "pdfmaker"}
    assert hit["meta"]["trigger_skill"] == "pdfmaker"
    assert hit["meta"]["isolation"]["tools"][0] == "Skill"
    miss = records[("baseline", "make-pdf")]
    assert miss["status"] == "failed"
    assert (
        "query 'PDF-QUERY make a pdf of my notes' should trigger skill 'pdfmaker'"
        in miss["judge"]["details"]
    )


def test_user_level_skill_is_never_seen(clean_run: TriggerRun) -> None:
    """~/.claude/skills/pdfmaker (description the fake would match) shadows nothing: each arm's
    request lists its own installed skill, the user's never appears."""
    run = clean_run
    # the request after a Skill call ("load-skill#2") may or may not be sent before the
    # attempt is killed (test_attempt_stops_at_the_invocation): count the first turns only
    bodies = [json.dumps(r.json) for r in run.requests if r.rule != "load-skill#2"]
    assert not any("SHADOW-9d2c" in json.dumps(r.json) for r in run.requests)
    assert sum(CANDIDATE_DESC in b for b in bodies) == 6  # the candidate's 6 first requests
    assert sum(BASELINE_DESC in b for b in bodies) == 6
    assert (run.tmp / "home" / ".claude" / "skills" / "pdfmaker" / "SKILL.md").is_file()


def test_reports_show_the_trigger_figures(clean_run: TriggerRun) -> None:
    run = clean_run
    code, out, err = run_cli("report", str(run.artifact), "--format", "markdown")
    assert code == 0, err
    assert "Trigger" in out and "TPR" in out
    code, out, err = run_cli("report", str(run.artifact), "--format", "junit")
    assert code == 0, err
    assert '<property name="triggers.candidate.tpr" value="1.0" />' in out
    assert '<property name="triggers.baseline.tpr" value="0.0" />' in out
    assert 'failures="0"' in out  # the candidate's 6 queries: no miss


def test_529_storm_is_errors_not_misses(tmp_path: Path) -> None:
    run = trigger_run(tmp_path, faults=["529"], retries=1)
    records = run.journal()
    assert len(records) == 12
    assert {r["status"] for r in records} == {"error"}
    assert all("529" in (r["error"] or "") and r["tries"] == 2 for r in records), records[0]
    # each try: the CLI resent its request once (--max-retries 1) before it gave up
    assert all(r["meta"]["api_retries"] == 1 for r in records), records[0]["meta"]
    assert len(run.requests) == 12 * 2 * 2
    data = run.data()
    assert data["evaluation"]["verdict"] == "error"
    for arm in ("candidate", "baseline"):
        figures = data["triggers"]["arms"][arm]
        assert figures["errors"] == 6
        assert figures["tpr"]["rate"] is None and figures["fpr"]["rate"] is None
        assert all(q["trigger_rate"] is None and q["samples"] == 0 for q in figures["queries"])
