"""Issue 17, "errors the candidate causes are not free": an error the output caused is a failure
of its attempt, and no pass may rest on tasks left out for errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.executors.claude.stream import from_result
from tests.fakes.fake_claude import install
from tests.helpers import contains_task, jail_missing, read_json, run_cli, write_skill, write_suite

# A stand-in `claude -p --output-format stream-json` (self-contained: it runs in the jail): the
# skill (appended system prompt, a file in the jail's HOME) says how each task goes.
#   skill has LOOP      -> the agent stops at --max-turns (an error_max_turns result)
#   skill has SABOTAGE  -> tasks t2, t3 crash without a result (an error, not output-caused)
#   otherwise           -> "DONE"
FAKE = r"""
import json, sys
argv = sys.argv[1:]
if "--version" in argv:
    print("0.0.0-fake (Claude Code)"); sys.exit(0)
prompt = sys.stdin.read()
skill = ""
if "--append-system-prompt-file" in argv:
    skill = open(argv[argv.index("--append-system-prompt-file") + 1]).read()
def result(text, subtype="success", is_error=False):
    print(json.dumps({"type": "result", "subtype": subtype, "is_error": is_error,
                      "result": text, "num_turns": 3, "total_cost_usd": 0.0,
                      "duration_ms": 5, "duration_api_ms": 1, "session_id": "fake",
                      "usage": {"input_tokens": 1, "output_tokens": 1}}), flush=True)
if "LOOP" in skill:
    result("", subtype="error_max_turns", is_error=True); sys.exit(1)
if "SABOTAGE" in skill and ("Do t2" in prompt or "Do t3" in prompt):
    sys.exit(3)
result("DONE")
"""
needs_jail = pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
    return install(tmp_path / "bin", FAKE)


def _run(tmp_path: Path, claude: str, body: str, n_tasks: int, *extra: str) -> dict:
    suite = write_suite(
        tmp_path / "suite", [contains_task(f"t{i}", "DONE") for i in range(n_tasks)]
    )
    skill = write_skill(tmp_path / "cand", body)
    base = write_skill(tmp_path / "base", "Answer with DONE.")
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--baseline-skill",
        str(base),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "claude-cli",
        "--claude-bin",
        claude,
        "--max-retries",
        "0",
        "--output",
        str(tmp_path / "out.json"),
        "-q",
        *extra,
    )
    assert code in (0, 1, 3, 4), err  # pass, fail, error verdicts; never a usage error
    return read_json(tmp_path / "out.json")


def test_a_max_turns_result_is_output_caused() -> None:
    result = from_result({"subtype": "error_max_turns", "is_error": True, "result": ""})
    assert (
        result.failure.message and result.failure.ends_as == "failed" and not result.failure.retry
    )
    other = from_result({"subtype": "error_during_execution", "is_error": True})
    assert other.failure.message and other.failure.ends_as != "failed"


@needs_jail
def test_an_agent_stopped_at_max_turns_fails_its_tasks(tmp_path: Path, fake_claude: str) -> None:
    data = _run(tmp_path, fake_claude, "LOOP forever.", 3, "--max-turns", "2")
    evaluation = data["evaluation"]
    # On main the candidate's three errors dropped every task: an error verdict at best;
    # now they are candidate failures and the candidate honestly fails.
    assert evaluation["verdict"] == "fail"
    assert evaluation["execution_pass_rate"] == 0.0
    attempt = data["candidate_results"][0]["attempts"][0]
    assert attempt["status"] == "failed" and attempt["error"] is None
    assert "counted as a failure: claude CLI error: error_max_turns" in attempt["judge"]["details"]


@pytest.mark.slow
@needs_jail
def test_a_pass_resting_on_excluded_errors_is_an_error(tmp_path: Path, fake_claude: str) -> None:
    # 10 tasks; the candidate crashes on t2 and t3 (2 of 10 attempts: under the 0.2 max error
    # rate given) and passes the other 8, as does the baseline. Left out, those two tasks
    # made a pass; counted as candidate failures they make a fail (delta -20 points).
    data = _run(
        tmp_path,
        fake_claude,
        "SABOTAGE t2 and t3.",
        10,
        "--max-error-rate",
        "0.2",
        "--policy",
        "delta",
    )
    evaluation = data["evaluation"]
    assert evaluation["verdict"] == "error", evaluation
    reason = evaluation["reason"]
    assert "2 in error in the candidate only, 0 in the baseline only" in reason
    assert "would be fail" in reason
