"""Issue 17, "errors the candidate causes are not free": an error the output caused is a failure
of its attempt, and no pass may rest on tasks left out for errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skill_eval.executors.claude_process import parse_envelope
from tests.helpers import REPO, contains_task, read_json, run_cli, write_skill, write_suite

# A stand-in `claude`: the skill (appended system prompt) says how each task goes.
#   skill has LOOP      -> the agent stops at --max-turns (error_max_turns envelope)
#   skill has SABOTAGE  -> tasks t2, t3 crash without a result (an error, not output-caused)
#   otherwise           -> "DONE"
FAKE = r"""
import json, sys
sys.path.insert(0, REPO)
from tests.fakes.fake_claude import read_stream_prompt, stream_reply
argv = sys.argv[1:]
if "--version" in argv:
    print("0.0.0-fake (Claude Code)"); sys.exit(0)
streaming = "--input-format" in argv  # claude-agent-sdk's stream-json, else `claude -p`
prompt = read_stream_prompt() if streaming else sys.stdin.read()
skill = ""
for flag in ("--append-system-prompt-file", "--append-system-prompt"):
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            skill = open(argv[i + 1]).read() if flag.endswith("file") else argv[i + 1]
        elif arg.startswith(flag + "="):
            value = arg.split("=", 1)[1]
            skill = open(value).read() if flag.endswith("file") else value
def env(result, subtype="success", is_error=False):
    text = json.dumps({"type": "result", "subtype": subtype, "is_error": is_error,
                       "result": result, "num_turns": 3, "total_cost_usd": 0.0,
                       "duration_ms": 5, "duration_api_ms": 1, "session_id": "fake",
                       "usage": {"input_tokens": 1, "output_tokens": 1}})
    print(stream_reply(text) if streaming else text, flush=True)
if "LOOP" in skill:
    env("", subtype="error_max_turns", is_error=True); sys.exit(1)
if "SABOTAGE" in skill and ("Do t2" in prompt or "Do t3" in prompt):
    sys.exit(3)
env("DONE")
"""


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    script = tmp_path / "fake.py"
    script.write_text(FAKE.replace("REPO", repr(str(REPO))))
    binary = tmp_path / "bin" / "claude"
    binary.parent.mkdir()
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    binary.chmod(0o755)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
    return str(binary)


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


def test_max_turns_envelope_is_output_caused() -> None:
    result = parse_envelope('{"subtype": "error_max_turns", "is_error": true, "result": ""}', "", 1)
    assert result.error and result.output_caused and not result.retryable
    other = parse_envelope('{"subtype": "error_during_execution", "is_error": true}', "", 1)
    assert other.error and not other.output_caused


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
