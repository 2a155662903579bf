"""`run SKILL_DIR --dry-run` on a machine that has nothing a real run needs (issue 49): no key,
no `claude` binary (neither on PATH nor bundled in claude-agent-sdk), no jail. The real CLI
runs in a subprocess with an environment of its own; it prints the plan for the default
executor and model, with tokens and dollars, lists what a real run needs as lines to fix, and
exits 0."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from skill_eval.executors.base import DEFAULT_MODEL
from tests.fakes.fake_claude import install
from tests.helpers import REPO, run_cli, write_skill

# claude_agent_sdk hidden (find_spec returns None for a module set to None), so no bundled CLI.
ENTRY = (
    "import sys; sys.modules['claude_agent_sdk'] = None; "
    "from skill_eval.cli import main; sys.argv[0] = 'skill-eval'; main()"
)


def _skill(tmp_path: Path) -> Path:
    skill = write_skill(tmp_path / "summaries")
    (skill / "evals").mkdir()
    evals = {
        "skill_name": "summaries",
        "evals": [
            {
                "id": i,
                "prompt": f"Summarise report {i}",
                "expected_output": "Two lines. " * 40,
                "expectations": ["names the report"],
            }
            for i in range(3)
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    return skill


def test_a_dry_run_needs_no_key_no_binary_and_no_jail(tmp_path: Path) -> None:
    skill = _skill(tmp_path)
    empty_path = tmp_path / "bin"
    empty_path.mkdir()  # no claude, no bwrap, no podman, no docker
    env = {"HOME": str(tmp_path / "home"), "PATH": str(empty_path), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            ENTRY,
            "run",
            str(skill),
            "--dry-run",
            "--state-root",
            str(tmp_path / "state"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout + done.stderr
    assert "Traceback" not in text
    assert f"plan: executor claude-cli, model {DEFAULT_MODEL}" in text
    assert "attempts to run: candidate 3, baseline 3 (6 in all)" in text
    estimate = re.search(r"estimate: ~([\d,]+) tokens, \$(\d+\.\d+)", text)
    assert estimate is not None, text
    assert int(estimate[1].replace(",", "")) > 0 and float(estimate[2]) > 0
    to_fix = [line for line in text.splitlines() if line.startswith("to fix before a real run:")]
    assert any("claude CLI not found" in line for line in to_fix), text
    assert any("no jail can run here" in line for line in to_fix), text
    assert any("authentication" in line for line in to_fix), text
    assert not (tmp_path / "state").exists()  # nothing written under the state root


def test_a_dry_run_on_the_agent_writes_nothing_under_the_state_root(tmp_path: Path) -> None:
    """With the CLI found (a fake `claude` that answers `--version`), the dry run asks its
    version and remembers none of it: the state root is not even made (issue 52)."""
    fake = install(tmp_path / "bin")
    state = tmp_path / "state"
    code, out, err = run_cli(
        "run", str(_skill(tmp_path)), "--dry-run", "--claude-bin", fake,
        "--state-root", str(state),
    )  # fmt: skip
    assert code == 0 and "attempts to run: candidate 3, baseline 3" in out, err
    assert not state.exists()
