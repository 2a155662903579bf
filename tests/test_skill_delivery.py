"""`run SKILL_DIR` delivers the skill as it ships: on an agent executor that loads skills (its
spec declares skill_roots: Claude Code, OpenCode, Codex, and the mock standing in for them)
the folder is installed by default and the summary says per arm whether the skill fired; on an
API executor the summary's first line names how the skill went (SKILL.md as text) and what
that leaves out. --skill-mode given says otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent_runs import needs, run_agent
from tests.agent_scripts import tool_step
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli, write_outputs

DESCRIPTION = "Write release notes under the house headings."
PROMPT = "Write release notes for acme 2.1.0"
EVALS = {
    "skill_name": "notes",
    "evals": [{"id": 1, "prompt": PROMPT, "must_have": ["(?i)release notes"]}],
}


def notes_skill(root: Path) -> Path:
    folder = root / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: notes\ndescription: {DESCRIPTION}\n---\n\nUse the house headings.\n",
        encoding="utf-8",
    )
    (folder / "references").mkdir()
    (folder / "references" / "headings.md").write_text("## Added\n## Fixed\n", "utf-8")
    (folder / "evals").mkdir()
    (folder / "evals" / "evals.json").write_text(json.dumps(EVALS), encoding="utf-8")
    return folder


def delivery(err: str) -> str:
    (line,) = [x for x in err.splitlines() if x.startswith("delivery  ")]
    return line


def test_the_mock_agent_installs_the_skill_by_default_and_counts_whether_it_fired(
    tmp_path: Path,
) -> None:
    folder = notes_skill(tmp_path)
    outputs = write_outputs(
        tmp_path / "out.yaml",
        {"candidate": {"eval-1": {"text": "Release notes", "triggered": True}},
         "baseline": {"eval-1": "Release notes"}},
    )  # fmt: skip
    code, out, err = run_cli(
        "run", str(folder), "--mock", "--mock-outputs", str(outputs),
        "--state-root", str(tmp_path / "state"),
    )  # fmt: skip
    assert code in (0, 1, 4), err
    artifact = read_json(out.strip())
    assert artifact["manifest"]["skill_mode"] == "installed"
    assert artifact["manifest"]["arms"]["candidate"]["fired"] == {
        "how": "invoked", "rate": 1.0, "attempts": 1, "fired": 1,
    }  # fmt: skip
    assert delivery(err) == (
        "delivery  the skill folder installed for the mock agent, as it ships (--skill-mode "
        "installed); skill fired: candidate 1/1 attempts, baseline no skill"
    )
    assert err.index("delivery  ") < err.index("pass rate")  # the summary's first line


def test_a_skill_mode_given_is_kept(tmp_path: Path) -> None:
    folder = notes_skill(tmp_path)
    code, out, err = run_cli(
        "run", str(folder), "--mock", "--skill-mode", "system",
        "--state-root", str(tmp_path / "state"),
    )  # fmt: skip
    assert code in (0, 1, 4), err
    assert read_json(out.strip())["manifest"]["skill_mode"] == "system"
    assert delivery(err) == (
        "delivery  --skill-mode system, as asked (installed delivers the skill as it ships)"
    )


def test_an_api_executor_names_its_delivery_and_what_it_leaves_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = notes_skill(tmp_path)
    with FakeAnthropic(default="Release notes for acme 2.1.0") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(
            "run", str(folder), "--executor", "anthropic", "-q",
            "--state-root", str(tmp_path / "state"),
        )  # fmt: skip
    assert code in (0, 1, 4), err
    assert read_json(out.strip())["manifest"]["skill_mode"] == "system"
    assert delivery(err) == (
        "delivery  SKILL.md as text (--skill-mode system) to the anthropic API, its other files "
        "readable through a read_skill_file tool; left out: the skill's scripts never run, and "
        "no description decides whether it loads (an agent executor, --executor claude-cli, "
        "installs it as it ships)"
    )
    assert err.count("delivery  ") == 1


@needs("claude")
def test_claude_code_gets_the_skill_installed_and_invokes_it(tmp_path: Path) -> None:
    """The real `claude` CLI against the fake Messages API: the skill's description reaches
    the model only when the folder is installed, and the scripted model then invokes it."""
    folder = notes_skill(tmp_path / "skills")
    rules: list[dict[str, Any]] = [
        {
            "name": "candidate",
            "request_contains": [DESCRIPTION, PROMPT],
            "steps": [
                tool_step("claude", ("skill", "notes"), ".claude/skills"),
                {"text": "Release notes for acme 2.1.0"},
            ],
        }  # fmt: skip
    ]
    run = run_agent(tmp_path, "claude", [str(folder)], rules, default="Release notes.")
    assert run.code in (0, 1, 4), run.err
    artifact = run.data()
    assert artifact["manifest"]["skill_mode"] == "installed"
    assert artifact["manifest"]["arms"]["candidate"]["fired"]["fired"] == 1
    assert "skill fired: candidate 1/1 attempts, baseline no skill" in delivery(run.err)
