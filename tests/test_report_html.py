"""The HTML report of real artifacts (made by `skill-eval run --mock` in tmp_path): one
self-contained file, every model and judge text escaped, the tasks tagged for the filters,
word diffs, agent work and rubric details; `skill-eval report --format html`."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from skill_eval.report.html import _script_json, render_html, word_diff
from tests.helpers import contains_task, run_cli
from tests.test_report import _standalone, failing, passing

HOSTILE_OUTPUT = '<script>window.pwned = 1</script><img src=x onerror="window.pwned=2">'


class _Page(HTMLParser):
    """The parts of the page the tests look at: task rows, script tags, resource references."""

    def __init__(self) -> None:
        super().__init__()
        self.tasks: list[dict[str, str]] = []
        self.scripts: list[dict[str, str | None]] = []
        self.refs: list[str] = []
        self.imgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "details" and "task" in (a.get("class") or "").split():
            self.tasks.append({k: v or "" for k, v in a.items()})
        if tag == "script":
            self.scripts.append(a)
        if tag == "img":
            self.imgs += 1
        self.refs += [v for k, v in a.items() if k in ("src", "href", "action") and v]


def page(html: str) -> _Page:
    parser = _Page()
    parser.feed(html)
    return parser


def hostile(tmp_path: Path) -> dict[str, Any]:
    tasks = [contains_task("t1", "alpha"), contains_task("t2", "beta")]
    outputs = {
        "candidate": {"t1": "alpha " + HOSTILE_OUTPUT, "t2": "nope </script>"},
        "baseline": {"t1": "alpha", "t2": "beta"},
    }
    _code, data, _ = _standalone(tmp_path, tasks, outputs)
    return data


def test_demo_run_is_one_self_contained_page(tmp_path: Path) -> None:
    html = render_html(passing(tmp_path))
    p = page(html)
    assert [t["data-task"] for t in p.tasks] == [
        "added-and-fixed",
        "breaking-change",
        "issue-credits",
        "security-section",
        "title-heading",
    ]
    assert [t["data-tags"] for t in p.tasks] == ["same", "improved", "improved", "improved", "same"]
    # no network: no http(s) anywhere, no external script, stylesheet or image
    assert not re.search(r"https?://", html, re.IGNORECASE)
    assert p.refs == [] and p.imgs == 0
    assert [s.get("src") for s in p.scripts] == [None, None]
    assert p.scripts[0]["type"] == "application/json"
    assert "<link" not in html and "@import" not in html and "url(" not in html
    # the header: verdict, rates, the interval drawn, cost per arm, the prompt from the suite
    assert 'id="verdict">PASS [mock]<' in html
    assert "1.0000 (5/5)" in html and "0.4000 (2/5)" in html
    assert '<svg class="interval"' in html and 'class="ci"' in html
    # which interval decides: the policy's bound, the drawn one is for reference
    assert '<p class="muted">decided by policy delta: delta +60.0 points' in html
    assert '<p class="muted">for reference: paired delta +0.6, 95% interval' in html
    assert html.count("cost $0.0000") == 2
    assert html.count("prompt</summary>") == 5 and "Write release notes for acme 2.1.0." in html


def test_every_model_and_judge_text_stays_text(tmp_path: Path) -> None:
    html = render_html(hostile(tmp_path))
    assert "window.pwned" in html  # the output is shown ...
    assert "<script>window" not in html and "<img src=x" not in html  # ... as text
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;&lt;img src=x" in html
    assert "nope &lt;/script&gt;" in html
    p = page(html)
    assert len(p.scripts) == 2 and p.imgs == 0
    # the embedded data cannot close its script element, whatever a task id holds
    embedded = _script_json({"id": "</script><script>alert(1)</script>", "x": "<!--&"})
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded
    assert json.loads(embedded) == {"id": "</script><script>alert(1)</script>", "x": "<!--&"}


def test_failing_run_tags_moves_and_diffs_the_first_outputs(tmp_path: Path) -> None:
    html = render_html(failing(tmp_path))
    tags = {t["data-task"]: t["data-tags"] for t in page(html).tasks}
    assert tags == {"t1": "same", "t2": "regressed", "t3": "improved", "t4": "regressed"}
    # pass@2: both attempts of each arm are shown
    t3 = html.split('data-task="t3"')[1].split("</details>\n</details>")[0]
    assert t3.count("attempt 0:") == 2 and t3.count("attempt 1:") == 2
    assert "<del>no</del><ins>gamma</ins>" in t3
    assert "regressed (2)" in html and "improved (1)" in html


def test_word_diff_keeps_the_text_and_marks_changes() -> None:
    diff = word_diff("the quick brown fox\n", "the slow brown fox jumps\n")
    assert "".join(t for op, t in diff if op != "ins") == "the quick brown fox\n"
    assert "".join(t for op, t in diff if op != "del") == "the slow brown fox jumps\n"
    assert ("del", "quick ") in diff and ("ins", "slow ") in diff
    assert word_diff("same", "same") == [("same", "same")]


def test_agent_work_and_rubric_details_are_shown(tmp_path: Path) -> None:
    data = copy.deepcopy(passing(tmp_path))
    attempt = data["candidate_results"][0]["attempts"][0]
    attempt["files"] = {"files": [{"path": "src/<app>.py", "size": 12, "sha256": "ab"}]}
    attempt["transcript"] = [
        {"name": "Write", "input": {"file_path": "src/app.py"}, "ok": True, "output": "wrote <b>"}
    ]
    attempt["judge"]["data"] = {
        "evaluation": {
            "dimensions": [{"name": "clarity", "score": 0.75}, {"name": "accuracy", "score": 1}],
            "findings": [
                {"severity": "suggestion", "title": "tidy up", "id": "S1"},
                {"severity": "blocker", "title": "wrong <version>", "id": "B1"},
            ],
        }
    }
    html = render_html(data)
    assert "changed files (1)</summary>" in html and "<code>src/&lt;app&gt;.py</code>" in html
    assert "transcript (1 tool call)</summary>" in html and "wrote &lt;b&gt;" in html
    assert '<details class="transcript">' in html  # collapsed
    assert 'width="75.0"' in html and "clarity" in html
    assert html.index("wrong &lt;version&gt;") < html.index("tidy up")  # blockers first


def test_report_command_writes_html(tmp_path: Path) -> None:
    passing(tmp_path)
    artifact = next((tmp_path / "state" / "evaluations").glob("*.json"))
    out = tmp_path / "report.html"
    code, stdout, stderr = run_cli("report", str(artifact), "--format", "html", "-o", str(out))
    assert (code, stdout, stderr) == (0, "", "")
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert len(page(out.read_text(encoding="utf-8")).tasks) == 5


def test_the_readme_shows_a_real_screenshot_of_the_report() -> None:
    from tests.browser import png_colours
    from tests.helpers import REPO

    assert "![The HTML report" in (REPO / "README.md").read_text(encoding="utf-8")
    width, height, colours = png_colours((REPO / "docs" / "report-screenshot.png").read_bytes())
    assert width >= 1000 and height >= 800 and colours > 50


def test_error_skipped_and_single_arm_runs_render(tmp_path: Path) -> None:
    from tests.test_report import erroring, no_baseline, skipped

    html = render_html(erroring(tmp_path / "e"))
    tags = {t["data-task"]: t["data-tags"] for t in page(html).tasks}
    assert tags["t2"] == "same errors" and "errors (1)" in html
    assert 'id="verdict">ERROR [mock]<' in html and "st-error" in html
    html = render_html(skipped(tmp_path / "s"))
    assert page(html).tasks == [] and "no tasks were run" in html
    html = render_html(no_baseline(tmp_path / "n"))
    assert [t["data-task"] for t in page(html).tasks] == ["t1", "t2"]
    assert "<h3>baseline</h3>" not in html and "word diff" not in html


def test_a_task_whose_attempts_disagree_is_tagged_flaky(tmp_path: Path) -> None:
    data = copy.deepcopy(failing(tmp_path))  # pass@2: two attempts per arm
    t1 = next(r for r in data["candidate_results"] if r["task_id"] == "t1")
    t1["attempts"][1].update(
        status="failed", judge={**t1["attempts"][1]["judge"], "passed": False, "score": 0.0}
    )
    tags = {t["data-task"]: t["data-tags"] for t in page(render_html(data)).tasks}
    assert tags["t1"] == "same flaky" and tags["t3"] == "improved"
