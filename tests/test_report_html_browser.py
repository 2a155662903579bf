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
    assert browser.eval("document.getElementById('verdict').textContent") == "PASS"
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
