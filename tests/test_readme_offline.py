"""references/real-runs.md's "Try a real executor offline" works as written: the fake Messages
API started from its command line with the demo rules file, and `skill-eval run --executor
anthropic` pointed at it with a base URL that ends in /v1 (stripped by the executor)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO, read_json

RULES = "task_suites/demo/fake_anthropic_rules.yaml"


def _section() -> str:
    text = (REPO / "references" / "real-runs.md").read_text(encoding="utf-8")
    match = re.search(r"^## Try a real executor offline\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "references/real-runs.md has no 'Try a real executor offline' section"
    return match.group(1)


def test_the_page_names_the_commands_this_test_runs() -> None:
    section = _section()
    assert f"python -m tests.fakes.anthropic_server --rules {RULES} --port 8765 &" in section
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:8765/v1" in section
    assert "--executor anthropic" in section


def test_the_offline_anthropic_run_works_from_the_repository(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.anthropic_server", "--rules", RULES],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SKILL_EVAL_"))
        }
        env |= {"ANTHROPIC_BASE_URL": base_url + "/v1", "ANTHROPIC_API_KEY": "dummy"}
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "skill_eval.cli",
                "run",
                "--standalone",
                "--task-suite",
                "task_suites/demo/task_suite.yaml",
                "--skill-path",
                "fixtures/demo-skill-improved",
                "--executor",
                "anthropic",
                "--model",
                "claude-fake",
                "--state-root",
                str(tmp_path / "state"),
                "-q",
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.send_signal(signal.SIGTERM)
        _, served = server.communicate(timeout=60)
    assert "10 requests; 404s: none" in served, run.stderr
    ev = read_json(run.stdout.strip())["evaluation"]
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"]) == (1.0, 0.4)
    # 3 of 5 pass/fail tasks improved, none regressed: the exact test rules out a 10-point
    # regression (just), so the default policy passes it, as the README says of the demo
    assert run.returncode == 0 and ev["policy"]["name"] == "no-regression"
    assert ev["verdict"] == "pass" and ev["detectable_margin"] == 9.6
