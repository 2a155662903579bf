"""`improve --help` and `review --help` are in sections (click-option-group), as `run --help`
is (tests/test_executor_options.py): each flag under the section of what it sets, the flags
shared with run taking their section through `flag(name, section=...)`."""

from __future__ import annotations

import re

import pytest

from tests.helpers import run_cli

SECTIONS = {
    "improve": {
        "Inputs:": ["--skill-path", "--task-suite", "--state-root", "--history"],
        "Stopping rules:": [
            "--token-budget",
            "--max-cost-usd",
            "--timeout",
            "--regression-threshold",
            "--abort-on-regression",
            "--quality",
            "--iterate",
            "--improvement-threshold",
        ],
        "Holdout and confirmation:": ["--holdout", "--seed", "--confirm-samples", "--policy"],
        "Evaluations:": [
            "--executor",
            "--model",
            "--mock",
            "--mock-outputs",
            "--executor-option",
            "--claude-bin",
            "--no-jail",
        ],
        "Improver:": ["--improver", "--improver-model", "--base-url"],
        "Output:": ["--output-dir", "--in-place"],
    },
    "review": {
        "Review:": ["--vision", "--mock", "--max-rounds", "--state-root", "--output-suite"],
        "Role models:": [
            "--executor",
            "--models",
            "--mock-replies",
            "--roles-dir",
            "--base-url",
            "--claude-bin",
        ],
        "QA runs:": [
            "--qa-executor",
            "--model",
            "--skill-mode",
            "--samples",
            "--no-jail",
            "--executor-option",
        ],
    },
}


TITLE = re.compile(r"^  (\S[^:]*:)")  # "  Inputs:   The skill, ..."
FLAG = re.compile(r"^    (--[\w-]+)")  # "    --skill-path DIR   ..."


@pytest.mark.parametrize("command", sorted(SECTIONS))
def test_help_is_in_sections_in_order(command: str) -> None:
    code, out, _ = run_cli(command, "--help")
    assert code == 0
    titles: list[str] = []
    section_of: dict[str, str] = {}
    for line in out.split("\nOptions:\n", 1)[1].splitlines():
        if title := TITLE.match(line):
            titles.append(title[1])
        elif (flag := FLAG.match(line)) and titles:
            section_of[flag[1]] = titles[-1]
    expected = {flag: title for title, flags in SECTIONS[command].items() for flag in flags}
    assert section_of == expected  # every visible flag, each in its section
    assert titles == list(SECTIONS[command])
    assert "--backend" not in out  # review's deprecated name stays hidden
