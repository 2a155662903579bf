"""The report's view over N arms (report/arm_view.py): a real three-arm run (--arm, the mock's
dry run of the agent demo) shows every arm's figures in the terminal table, the markdown and
the HTML; a two-arm run is the case N = 2 of the same view."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from skill_eval.report.html import render_html
from skill_eval.report.markdown import render_markdown
from skill_eval.report.render import render_table
from skill_eval.report.view import read_view
from tests.helpers import read_json, run_cli
from tests.test_arms import demo_args
from tests.test_report import failing, no_baseline

THREE = ("installed=installed", "nudged=nudged", "none=none")
# what the demo's scripted outputs give each arm: pass rate (tasks passed), skill fired
RATES = {"installed": "0.4000 (2/5)", "nudged": "1.0000 (5/5)", "none": "0.2000 (1/5)"}
FIRED = {"installed": "20% (1/5 attempts)", "nudged": "100% (5/5 attempts)", "none": "-"}
# each arm's pass count on each task, in the suite's order
COUNTS = {
    "sales-report": ("0/1", "1/1", "0/1"),
    "sales-report-tested": ("0/1", "1/1", "0/1"),
    "empty-csv": ("0/1", "1/1", "0/1"),
    "uses-the-skill": ("1/1", "1/1", "0/1"),
    "input-untouched": ("1/1", "1/1", "1/1"),
}


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("three")
    code, out, err = run_cli(*demo_args(tmp, arms=THREE))
    assert code == 4, err  # five tasks settle nothing: not enough evidence
    data: dict[str, Any] = read_json(Path(out.strip()))
    return data


def test_the_view_lists_the_three_arms_in_order_with_their_roles(three: dict[str, Any]) -> None:
    view = read_view(three)
    assert [(a.name, a.role, a.reference) for a in view.arms] == [
        ("installed", "candidate", False),  # the first arm: the verdict's candidate
        ("nudged", "arm", False),
        ("none", "baseline", True),  # the reference: the verdict's baseline
    ]
    assert {a.name: a.rate_text for a in view.arms} == RATES
    assert {a.name: a.figures["fired"] for a in view.arms} == FIRED
    assert {r.task_id: r.cells for r in view.rows} == COUNTS
    assert view.pair_names == "installed vs none" and view.delta == "+0.2000"


def test_a_two_arm_run_is_the_case_of_two_arms(tmp_path: Path) -> None:
    view = read_view(failing(tmp_path / "paired"))
    assert [(a.name, a.role, a.reference) for a in view.arms] == [
        ("candidate", "candidate", False),
        ("baseline", "baseline", True),
    ]
    assert not view.listed and view.pair_names == ""
    assert {r.task_id: r.cells for r in view.rows}["t2"] == ("0/2", "2/2")
    alone = read_view(no_baseline(tmp_path / "alone"))
    assert [a.name for a in alone.arms] == ["candidate"] and not alone.paired


def test_the_terminal_table_shows_every_arm(three: dict[str, Any]) -> None:
    lines = render_table(three).splitlines()
    assert lines[0].split()[:6] == ["task", "installed", "nudged", "none", "diff", "(installed"]
    for task, counts in COUNTS.items():
        row = next(line for line in lines if line.startswith(task + " "))
        assert tuple(row.split()[1:4]) == counts, row
    rates = next(line for line in lines if line.startswith("pass rate "))
    assert rates.split(None, 2)[2] == (
        "installed 0.4000 (2/5)  nudged 1.0000 (5/5)  none 0.2000 (1/5)"
        "  delta +0.2000 (installed vs none)"
    )
    cost = next(line for line in lines if line.startswith("cost "))
    assert [arm for arm in RATES if f"{arm} $0.0000" in cost] == list(RATES)
    fired = next(line for line in lines if line.startswith("skill fired"))
    assert re.split(r"\s{2,}", fired)[1:] == list(FIRED.values())
    head = next(line for line in lines if line.startswith(" ") and "installed" in line)
    assert head.split() == ["installed", "nudged", "none", "(reference)"]


def test_the_markdown_shows_every_arm(three: dict[str, Any]) -> None:
    markdown = render_markdown(three)
    assert "|  | installed | nudged | none | Delta (installed vs none) |" in markdown
    assert "| Pass rate | 0.4000 (2/5) | 1.0000 (5/5) | 0.2000 (1/5) | +0.2000 |" in markdown
    assert "| skill fired | 20% (1/5 attempts) | 100% (5/5 attempts) | - |" in markdown
    assert "| Task | installed | nudged | none | Diff (installed vs none) | Feedback |" in markdown
    for task, counts in COUNTS.items():
        assert f"| {task} | {' | '.join(counts)} |" in markdown, task


def test_the_html_shows_every_arm(three: dict[str, Any]) -> None:
    html = render_html(three)
    cards = re.findall(
        r'<section class="card arm-([\w-]+)">\s*<h2>.*?<p class="big">(.*?)</p>', html, re.S
    )
    assert dict(cards) == RATES
    heads = re.findall(r'<th class="arm( reference)?" data-arm="([\w-]+)"', html)
    assert heads == [("", "installed"), ("", "nudged"), (" reference", "none")]
    fired = re.search(r'<tr data-row="fired">(.*?)</tr>', html, re.S)
    assert fired is not None
    cells = [
        re.sub(r"<svg.*?</svg>", "", c).strip()
        for c in re.findall(r"<td[^>]*>(.*?)</td>", fired.group(1), re.S)
    ]
    assert cells == list(FIRED.values())
    for task, counts in COUNTS.items():
        block = html.split(f'data-task="{task}" data-tags=')[1].split('<details class="task"')[0]
        shown = re.findall(r'<span class="count" data-arm="([\w-]+)">([\w-]+) (\S+)</span>', block)
        assert [(arm, count) for arm, _, count in shown] == list(zip(RATES, counts, strict=True))
        sides = re.findall(r'<div class="side" data-arm="([\w-]+)">', block)
        assert sides == list(RATES), task
    assert 'style="--arms: 3"' in html
