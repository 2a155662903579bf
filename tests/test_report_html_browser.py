"""The HTML report in a real browser: headless Chromium (the OS package) loads the file from
disk, the page is drawn (a non-blank screenshot), its rows are there, the filters and the
search work, and hostile output stays text. Skipped with a reason when Chromium is missing
(CI installs it: .ci/run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skill_eval.report.html import render_html
from tests.browser import Browser, find_chromium, png_colours
from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_SKILL_IMPROVED,
    DEMO_SUITE,
    read_json,
    run_cli,
)
from tests.test_report import failing, passing
from tests.test_report_html import hostile

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install chromium, or set SKILL_EVAL_CHROMIUM)",
)

VISIBLE = (
    "Array.from(document.querySelectorAll('details.task')).filter(r => !r.hidden)"
    ".map(r => r.dataset.task)"
)


def _write(tmp_path: Path, html: str) -> Path:
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as b:
        yield b


def test_demo_report_draws_its_rows_and_filters(tmp_path: Path, browser: Browser) -> None:
    browser.open(_write(tmp_path, render_html(passing(tmp_path))))
    width, height, colours = png_colours(browser.screenshot())
    assert width >= 800 and height >= 600 and colours > 50  # a blank page has one colour
    assert browser.eval(VISIBLE) == [
        "added-and-fixed",
        "breaking-change",
        "issue-credits",
        "security-section",
        "title-heading",
    ]
    assert browser.eval("document.getElementById('verdict').textContent") == "PASS [mock]"
    browser.eval("document.querySelector('[data-filter=improved]').click()")
    assert browser.eval(VISIBLE) == ["breaking-change", "issue-credits", "security-section"]
    assert browser.eval("document.getElementById('shown').textContent") == "3 of 5 tasks shown"
    browser.eval("document.querySelector('[data-filter=regressed]').click()")
    assert browser.eval(VISIBLE) == []
    browser.eval("document.querySelector('[data-filter=all]').click()")
    browser.eval(
        "var s = document.getElementById('search'); s.value = 'SECURITY';"
        "s.dispatchEvent(new Event('input'))"
    )
    assert browser.eval(VISIBLE) == ["security-section"]


def test_failing_report_filters_regressions_and_opens_filtered(
    tmp_path: Path, browser: Browser
) -> None:
    path = _write(tmp_path, render_html(failing(tmp_path)))
    browser.open(path)
    browser.eval("document.querySelector('[data-filter=regressed]').click()")
    assert browser.eval(VISIBLE) == ["t2", "t4"]
    browser.open(path, fragment="filter=improved")  # a link can open it filtered
    assert browser.eval(VISIBLE) == ["t3"]


def test_hostile_output_stays_text_in_the_browser(tmp_path: Path, browser: Browser) -> None:
    browser.open(_write(tmp_path, render_html(hostile(tmp_path))))
    assert browser.eval("typeof window.pwned") == "undefined"
    assert browser.eval("document.querySelectorAll('script').length") == 2
    assert browser.eval("document.querySelectorAll('main img').length") == 0
    outputs = browser.eval(
        "Array.from(document.querySelectorAll('pre.output')).map(p => p.textContent)"
    )
    assert 'alpha <script>window.pwned = 1</script><img src=x onerror="window.pwned=2">' in outputs


def test_arms_are_drawn_side_by_side_with_the_reference_marked(
    tmp_path: Path, browser: Browser
) -> None:
    """A four-arm run (--arm, the mock's dry run of the agent demo): one column per arm, the
    reference marked, each arm's pass rate and whether its skill fired; each task's counts and
    attempts for every arm in the task list."""
    from tests.helpers import REPO, read_json, run_cli

    agent = REPO / "task_suites" / "demo-agent"
    code, out, err = run_cli(
        *("run", "--mock", "--task-suite", str(agent / "task_suite.yaml"), "-q"),
        *("--skill-path", str(agent / "skill" / "csv-report")),
        *("--mock-outputs", str(agent / "mock_arms.yaml"), "--state-root", str(tmp_path)),
        *("--arm", "installed=installed", "--arm", "context=context"),
        *("--arm", "nudged=nudged", "--arm", "none=none"),
    )
    assert code == 4, err
    browser.open(_write(tmp_path, render_html(read_json(out.strip()))))

    def cells(row: str) -> list[str]:
        return browser.eval(  # type: ignore[no-any-return]
            f"Array.from(document.querySelectorAll('#arms tr[data-row={row}] td'))"
            ".map(td => td.textContent.trim())"
        )

    heads = browser.eval(
        "Array.from(document.querySelectorAll('#arms thead th.arm'))"
        ".map(t => [t.dataset.arm, t.classList.contains('reference'), t.textContent.trim()])"
    )
    assert heads == [
        ["installed", False, "installed"],
        ["context", False, "context"],
        ["nudged", False, "nudged"],
        ["none", True, "none reference"],
    ]
    assert cells("pass_rate") == ["0.4000", "0.8000", "1.0000", "0.2000"]
    assert cells("fired") == [
        "20% (1/5 attempts)",
        "always (in context)",
        "100% (5/5 attempts)",
        "-",
    ]
    assert cells("delta")[3] == "reference" and cells("delta")[0].startswith("+0.2000 [")
    assert cells("lift")[0] == "+1.0000 (1.0000 vs 0.0000, 1 task)"
    bars = browser.eval("document.querySelectorAll('#arms svg.ratebar').length")
    assert bars == 4 + 2  # a pass-rate bar per arm, a fired bar per arm that invokes the skill
    # each task's row in the task list counts every arm, and its details show every arm's
    # attempts side by side
    tasks = browser.eval(
        "Array.from(document.querySelectorAll('details.task')).map(d => [d.dataset.task,"
        " ...Array.from(d.querySelectorAll('summary span.count[data-arm]'))"
        ".map(s => s.textContent)])"
    )
    assert tasks[3] == [
        "uses-the-skill",
        "installed 1/1",
        "context 0/1",
        "nudged 1/1",
        "none 0/1",
    ]
    sides = browser.eval(
        "Array.from(document.querySelectorAll('details.task')[3].querySelectorAll('.side'))"
        ".map(s => [s.dataset.arm, s.querySelectorAll('.attempt').length])"
    )
    assert sides == [["installed", 1], ["context", 1], ["nudged", 1], ["none", 1]]
    # the task list below still filters
    browser.eval("document.querySelector('[data-filter=improved]').click()")
    assert browser.eval(VISIBLE) == ["uses-the-skill"]


DRAWING = """(() => {
  const svg = document.querySelector('svg.decision');
  const bound = svg.querySelector('line.bound'), margin = svg.querySelector('line.margin');
  const box = e => e.getBoundingClientRect();
  return {
    bound: Number(bound.dataset.value), margin: Number(margin.dataset.value),
    boundX: box(bound).left, marginX: box(margin).left,
    heights: [box(bound).height, box(margin).height],
    ruled: [box(svg.querySelector('rect.ruled')).left, box(svg.querySelector('rect.ruled')).width],
    axis: [box(svg.querySelector('line.axis')).left, box(svg.querySelector('line.axis')).width],
    labels: Array.from(svg.querySelectorAll('text')).map(t => t.textContent),
    decided: document.getElementById('decided').textContent,
    color: getComputedStyle(document.getElementById('decided')).fontWeight,
  };
})()"""


def test_the_demo_report_draws_the_deciding_bound_against_the_margin(
    tmp_path: Path, browser: Browser
) -> None:
    """Issue 51: the README's demo passes on its one-sided 96% lower bound, -9.6 points, just
    above the -10-point margin; the page leads with that bound and draws it against the
    margin line, the region it rules in shaded to the right, and the two-sided interval is
    drawn apart, labelled for reference."""
    code, out, err = run_cli(  # the README's demo, with the default policy
        "run", "--skill-path", str(DEMO_SKILL_IMPROVED), "--task-suite", str(DEMO_SUITE),
        "--mock", "--mock-outputs", str(DEMO_OUTPUTS), "--state-root", str(tmp_path / "s"), "-q",
    )  # fmt: skip
    assert code == 0, err
    browser.open(_write(tmp_path, render_html(read_json(out.strip()))))
    drawn = browser.eval(DRAWING)
    assert drawn["bound"] == pytest.approx(-0.0963, abs=1e-4) and drawn["margin"] == -0.1
    assert drawn["boundX"] > drawn["marginX"]  # drawn where it lies: just above the margin
    assert all(height > 15 for height in drawn["heights"])  # both lines are drawn
    left, width = drawn["ruled"]  # ruled in: from the bound to the axis' right end
    axis_left, axis_width = drawn["axis"]
    assert left == pytest.approx(drawn["boundX"], abs=2)
    assert left + width == pytest.approx(axis_left + axis_width, abs=2)
    assert drawn["labels"] == [
        "one-sided 96% lower bound -9.6",
        "margin -10",
        "95% interval, for reference",
    ]
    assert drawn["decided"] == (
        "decided by one-sided 96% lower bound -9.6 points, above the margin -10 points "
        "(policy no-regression)"
    )
    assert int(drawn["color"]) >= 600  # the deciding line is not grey small print
