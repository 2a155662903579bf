"""What `skill-eval lint` says OpenCode and Codex do with a SKILL.md (skills/agent_support.py),
checked on the pinned CLIs against the fake OpenAI server, offline: one run with four skills
installed where the agent looks, and what of each reaches the model's first request. When a
pin moves and an agent changes its mind, this fails and the lint's words must follow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.skills.agent_support import CODEX_DESCRIPTION_KEPT
from skill_eval.skills.lint import MAX_DESCRIPTION, MAX_NAME, lint_text
from tests.agent_clis import agent_bin, codex_run, missing_reason, opencode_run, run_agent
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.slow  # a real agent CLI each
LONG = "LONGDESC " + "".join(f"{i:04d} " for i in range(300)) + "ENDLONG"
LONG_NAME = "n" * (MAX_NAME + 1)
SKILLS = {  # folder: frontmatter after `name`
    "long-description": f"description: {LONG}\n",
    LONG_NAME: "description: LONGNAME-DESC-3\n",
    "claude-keys": "description: KEYS-DESC-5\nwhen_to_use: WHEN-TO-USE-6\n",
    "manual-only": "description: MANUAL-DESC-7\ndisable-model-invocation: true\n",
}
FOLDER = {"opencode": ".opencode/skills", "codex": ".agents/skills"}


def first_request(agent: str, tmp_path: Path) -> str:
    work = tmp_path / "work"
    for name, rest in SKILLS.items():
        folder = work / FOLDER[agent] / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\n{rest}---\nbody\n")
    with FakeOpenAI(default="ok") as server:
        build = opencode_run if agent == "opencode" else codex_run
        command, env = build(server, tmp_path / "home", "hello")
        command[0] = str(agent_bin(agent))
        run = run_agent(command, env, work)
        assert run.code == 0, run.stderr
        return json.dumps(server.requests[0].json)


@pytest.mark.parametrize(
    "agent",
    [
        pytest.param(a, marks=pytest.mark.skipif(agent_bin(a) is None, reason=missing_reason(a)))
        for a in ("opencode", "codex")
    ],
)
def test_what_each_agent_lists_is_what_lint_says(tmp_path: Path, agent: str) -> None:
    sent = first_request(agent, tmp_path)
    kept = LONG[:CODEX_DESCRIPTION_KEPT]
    assert len(LONG) > MAX_DESCRIPTION
    if agent == "codex":  # cut, and the long-named skill not loaded at all
        assert f"{kept}..." in sent and "ENDLONG" not in sent
        assert LONG_NAME not in sent and "LONGNAME-DESC-3" not in sent
    else:  # OpenCode: whole, and loaded
        assert LONG in sent and LONG_NAME in sent
    # Neither shows Claude Code's when_to_use; both list a skill the model may not load there.
    assert "KEYS-DESC-5" in sent and "WHEN-TO-USE-6" not in sent
    assert "MANUAL-DESC-7" in sent


def test_lint_names_the_agent_that_drops_or_ignores_a_field() -> None:
    found = []
    for name, rest in SKILLS.items():
        text = f"---\nname: {name}\n{rest}---\nbody\n"
        found += [f.message for f in lint_text(text, "S", None)]
    assert any("Codex CLI lists it cut to its first 1,021 characters" in m for m in found)
    assert any("Codex CLI does not load such a skill at all" in m for m in found)
    assert any("only Claude Code reads `when_to_use`" in m for m in found)
    assert any("OpenCode and Codex CLI ignore the key" in m for m in found)
    assert len(found) == 4
