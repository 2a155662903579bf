"""`improve --help` and `review --help` are in sections (click-option-group), as `run --help`
is (tests/test_executor_options.py): each flag under the section of what it sets, the flags
shared with run taking their section through `flag(name, section=...)`, and whole sections
of run's flags (executor, execution, judging, cost) as run shows them."""

from __future__ import annotations

import re

import pytest

from skill_eval.cli.improve_cmd import EVALUATION_SECTIONS, NOT_SHARED
from skill_eval.cli.review_cmd import QA_SECTIONS
from skill_eval.cli.run_flags import section_flags
from tests.helpers import run_cli


def _run_sections(*titles: str, skip: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """The sections of run's flags another command takes as they are (cli/run_flags.py)."""
    return {
        f"{title}:": [f"--{name}" for name in section_flags(title, skip=skip)] for title in titles
    }


SECTIONS = {
    "improve": {
        "Inputs:": ["--skill-path", "--task-suite", "--state-root", "--history"],
        "Stopping rules:": [
            "--token-budget",
            "--timeout",
            "--regression-threshold",
            "--abort-on-regression",
            "--quality",
            "--iterate",
            "--improvement-threshold",
        ],
        "Holdout and confirmation:": ["--holdout", "--seed", "--confirm-samples", "--policy"],
        **_run_sections(*EVALUATION_SECTIONS, skip=NOT_SHARED),
        "Improver:": ["--improver", "--improver-model", "--base-url", "--claude-bin"],
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
            "--executor-option",
        ],
        **_run_sections(*QA_SECTIONS, skip=("shard",)),
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
