"""The HTML report of an improve run: `skill-eval improve --mock --improver mock` on a small
suite, then `skill-eval report <run dir> --format html`: one row per iteration with its decision,
scores, tokens and cost, the score line as inline SVG, no network; hostile text stays text; and
the page drawn in headless Chromium (skipped with a reason when Chromium is missing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.report.improve_html import render_improve_html
from tests.browser import Browser, find_chromium, png_colours
from tests.helpers import read_json, run_cli
from tests.test_improve_cli import _write_inputs

CHROMIUM = find_chromium()
ROWS = (
    "Array.from(document.querySelectorAll('#iterations tr.iter'))"
    ".map(r => Array.from(r.cells).slice(0, 5).map(c => c.textContent.trim()))"
)


def _improve(tmp_path: Path) -> Path:
    skill, suite = _write_inputs(tmp_path)
    code, out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--improver",
        "mock",
    )
    assert code == 0, err
    return Path(out.strip()).parent


def _expected_rows(run_dir: Path) -> list[list[str]]:
    ranking = read_json(run_dir / "ranking.json")
    return [
        [
            str(c["iteration"]),
            c["phase"],
            c["decision"],
            "-" if c["train_score"] is None else f"{c['train_score']:.2f}",
            "-" if c["holdout_score"] is None else f"{c['holdout_score']:.2f}",
        ]
        for c in ranking["improve"]["iterations"]
    ]


def test_report_of_an_improve_run_has_a_row_per_iteration(tmp_path: Path) -> None:
    run_dir = _improve(tmp_path)
    iterations = read_json(run_dir / "ranking.json")["improve"]["iterations"]
    # The mock improver converges: train 0.50 first, then Accept at train 1.00.
    assert [c["decision"] for c in iterations][-1] == "Accept"
    assert iterations[0]["train_score"] == 0.5 and len(iterations) >= 2
    out_file = tmp_path / "improve.html"
    for target in (run_dir, run_dir / "ranking.json"):
        code, _out, err = run_cli("report", str(target), "--format", "html", "-o", str(out_file))
        assert code == 0, err
        html = out_file.read_text(encoding="utf-8")
        assert html.count('<tr class="iter"') == len(iterations)
        assert '<polyline class="line-train"' in html and "Accept" in html
        assert "http://" not in html and "https://" not in html and "<link" not in html
    # The improve command leaves the same page in its run dir.
    assert (run_dir / "report.html").read_text(encoding="utf-8") == html


def test_improve_run_refuses_table_and_names_the_file(tmp_path: Path) -> None:
    run_dir = _improve(tmp_path)
    code, _out, err = run_cli("report", str(run_dir), "--format", "junit")
    assert code == 2 and "ranking.json: an improve run renders as html or json" in err
    assert "Traceback" not in err
    code, _out, err = run_cli("report", str(tmp_path), "--format", "html")
    assert code == 2 and "without ranking.json" in err


def test_hostile_iteration_text_stays_text() -> None:
    ranking = {
        "run_id": "r",
        "target": {"name": "<img src=x onerror=alert(1)>"},
        "scored_candidates": [],
        "improve": {
            "decision": "Accept",
            "reason": "</table><script>alert(1)</script>",
            "iterations": [
                {
                    "iteration": 1,
                    "phase": "complete",
                    "decision": "Accept",
                    "reason": "<b>x</b>",
                    "train_score": 2.5,
                    "holdout_score": None,
                    "tokens": 10,
                    "cost_usd": 0.5,
                    "skill_hash": '"><svg onload=1>',
                }
            ],
        },
    }
    html = render_improve_html(ranking)
    assert "<script" not in html and "<img" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;" in html and "onload=1>" not in html
    assert "no scores recorded" in html  # an out-of-range score is not drawn


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install chromium, or set SKILL_EVAL_CHROMIUM)",
)
def test_improve_report_in_headless_chromium(tmp_path: Path) -> None:
    run_dir = _improve(tmp_path)
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as browser:
        browser.open(run_dir / "report.html", ready="!!document.getElementById('iterations')")
        width, height, colours = png_colours(browser.screenshot())
        assert width >= 800 and height >= 600 and colours > 20  # a blank page has one colour
        assert browser.eval(ROWS) == _expected_rows(run_dir)
        assert browser.eval("document.querySelectorAll('#chart circle').length") >= 2
        assert (
            json.loads(
                browser.eval("JSON.stringify(document.getElementById('verdict').textContent)")
            )
            == "Accept"
        )
