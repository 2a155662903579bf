"""The README's "Your own suite" and "Run it for real" work as written (issue 37): the minimal
suite and mock outputs are taken from the README's own code blocks, written where their first
comment line says, and the README's commands run on them from a fresh folder; the README stays
short enough to read on one sitting."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import REPO, read_json, run_cli, write_skill

README = REPO / "README.md"
MAX_LINES = 300


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README has no '{title}' section"
    return match.group(1)


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", section, re.M | re.S)


def _commands(section: str) -> list[list[str]]:
    """Each command of the section's bash blocks, as argv (continuation lines joined)."""
    lines = "\n".join(_blocks(section, "bash")).replace("\\\n", " ").splitlines()
    return [shlex.split(line) for line in lines if line.strip()]


def _write_files(section: str, into: Path) -> dict[str, str]:
    """Every yaml block whose first line is `# PATH`, written to `into/PATH`."""
    written = {}
    for block in _blocks(section, "yaml"):
        first = block.splitlines()[0]
        assert first.startswith("# "), f"a yaml block without its path: {first!r}"
        path = into / first[2:].strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block, encoding="utf-8")
        written[first[2:].strip()] = block
    return written


def test_the_readme_is_under_300_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_minimal_suite_is_what_the_readme_says_it_is(tmp_path: Path) -> None:
    written = _write_files(_section("Your own suite"), tmp_path)
    assert set(written) == {"my-suite/task_suite.yaml", "my-suite/mock_outputs.yaml"}
    suite = yaml.safe_load(written["my-suite/task_suite.yaml"])
    assert set(suite) == {"skill_id", "version", "tasks"} and suite["version"] == "1.0"
    assert len(suite["tasks"]) == 2
    for task in suite["tasks"]:
        assert task["judge"]["type"] == "contains" and task["reference"].strip()


def test_the_minimal_suite_validates_and_dry_runs_as_the_readme_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = _section("Your own suite")
    _write_files(section, tmp_path)
    write_skill(tmp_path / "my-skill", "Start with `fix:` or `feat:`; credit issues as `#N`.")
    validate, run = _commands(section)
    assert validate[:2] == ["skill-eval", "validate"] and run[:2] == ["skill-eval", "run"]
    assert "--mock" in run and "--state-root" not in run
    monkeypatch.chdir(tmp_path)

    code, out, err = run_cli(*validate[1:])
    assert code == 0 and "ok: my-suite/task_suite.yaml" in out, out + err

    code, out, err = run_cli(*run[1:])
    # "yet the verdict is FAIL (not enough evidence) (exit 4) ... the summary says how many
    # tasks would"
    assert code == 4, err
    artifact = Path(out.strip())
    assert artifact.parent == tmp_path / ".skill-eval" / "evaluations"
    ev = read_json(artifact)["evaluation"]
    # "The candidate passes both tasks and the no-skill baseline one"
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"]) == (1.0, 0.5)
    assert ev["verdict"] == "fail" and ev["insufficient"] is True and ev["tasks_needed"]
    assert "not enough evidence" in err


def test_the_real_run_commands_run_the_same_suite_on_an_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's `--executor anthropic` command through the real SDK, against the loopback
    Messages API: the skill (in the system prompt) gets Conventional Commits, no skill does not."""
    _write_files(_section("Your own suite"), tmp_path)
    write_skill(tmp_path / "my-skill", "Write commit messages as Conventional Commits.")
    default, anthropic = _commands(_section("Run it for real"))
    assert default[:2] == ["skill-eval", "run"] and "--mock" not in default
    assert anthropic == [*default, "--executor", "anthropic"]
    rules = [
        {
            "system_contains": "Conventional Commits",
            "messages_contain": "issue 412",
            "text": "fix: accept empty uploads (#412)",
        },
        {"system_contains": "Conventional Commits", "text": "feat: export reports as CSV"},
    ]
    monkeypatch.chdir(tmp_path)
    with FakeAnthropic(rules=rules, default="Fixed it.") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
        code, out, err = run_cli(*anthropic[1:], "-q")
        assert server.count == 4  # two tasks, two arms, one sample each
    assert code == 4, err  # two tasks settle nothing, as the README says
    ev = read_json(out.strip())["evaluation"]
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"]) == (1.0, 0.0)
