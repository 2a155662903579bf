"""Reports of real artifacts (made by `skill-eval run --mock` in tmp_path): the terminal table,
markdown, JUnit XML and JSON, hostile model output, statistics when present, and
`skill-eval report`'s exit codes."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from skill_eval.errors import ArtifactError
from skill_eval.report import render as report
from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_RANKING,
    DEMO_SKILL_IMPROVED,
    DEMO_SUITE,
    contains_task,
    read_json,
    run_cli,
    write_outputs,
    write_skill,
    write_suite,
)

HOSTILE = "nope <b>&amp; | x\x01\x1b[31m]]>\u0000 end"


def _run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], Path]:
    # --policy delta: these tiny suites test the reports, not the default policy's rigour
    code, out, err = run_cli(
        "run", "--state-root", str(tmp_path / "state"), "--mock", "-q", "--policy", "delta", *args
    )
    assert out.strip(), err
    path = Path(out.strip())
    return code, read_json(path), path


def _standalone(
    tmp_path: Path, tasks: list[dict[str, Any]], outputs: dict[str, Any], *extra: str
) -> tuple[int, dict[str, Any], Path]:
    suite = write_suite(tmp_path / "suite", tasks)
    skill = write_skill(tmp_path / "skill")
    return _run(
        tmp_path,
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--mock-outputs",
        str(write_outputs(tmp_path / "out.yaml", outputs)),
        *extra,
    )


def passing(tmp_path: Path) -> dict[str, Any]:
    code, data, _ = _run(
        tmp_path,
        "--standalone",
        "--task-suite",
        str(DEMO_SUITE),
        "--skill-path",
        str(DEMO_SKILL_IMPROVED),
        "--mock-outputs",
        str(DEMO_OUTPUTS),
    )
    assert code == 0 and data["evaluation"]["verdict"] == "pass"
    return data


def failing(tmp_path: Path) -> dict[str, Any]:
    """pass@2: t1 passes in both arms, t2 (hostile output) and t4 regress, t3 improves."""
    tasks = [
        contains_task("t1", "alpha"),
        contains_task("t2", "beta"),
        contains_task("t3", "gamma"),
        contains_task("t4", "delta"),
    ]
    outputs = {
        "candidate": {"t1": "alpha", "t2": HOSTILE, "t3": "gamma", "t4": "no"},
        "baseline": {"t1": "alpha", "t2": "beta", "t3": "no", "t4": "delta"},
    }
    code, data, _ = _standalone(tmp_path, tasks, outputs, "--pass-k", "2")
    assert code == 1 and data["evaluation"]["verdict"] == "fail"
    return data


def erroring(tmp_path: Path) -> dict[str, Any]:
    """t2's judge breaks on its output: every attempt at t2 ends in error in both arms."""
    tasks = [
        contains_task("t1", "alpha"),
        {
            "id": "t2",
            "prompt": "Do t2",
            "judge": {"type": "python", "callable": "tests.judge_helpers:alpha_or_boom"},
        },
        contains_task("t3", "gamma"),
    ]
    code, data, _ = _standalone(
        tmp_path, tasks, {"t1": "alpha", "t2": "BOOM", "t3": "gamma"}, "--max-retries", "0"
    )
    assert code == 3 and data["evaluation"]["verdict"] == "error"
    return data


def skipped(tmp_path: Path) -> dict[str, Any]:
    code, data, _ = _run(
        tmp_path,
        "--input",
        str(DEMO_RANKING),
        "--candidate-id",
        "cand-low-score",
        "--task-suite",
        str(DEMO_SUITE),
        "--mock-outputs",
        str(DEMO_OUTPUTS),
    )
    assert code == 0 and data["evaluation"]["verdict"] == "skipped"
    return data


def no_baseline(tmp_path: Path) -> dict[str, Any]:
    code, data, _ = _standalone(
        tmp_path,
        [contains_task("t1", "alpha"), contains_task("t2", "beta")],
        {"t1": "alpha", "t2": "nope"},
        "--no-baseline",
    )
    assert code == 0 and data["evaluation"]["verdict"] == "pass"
    return data


def with_stats(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a real artifact with the statistics the integrator adds."""
    data = copy.deepcopy(data)
    data["comparison"] = {
        "n_tasks": 5,
        "candidate_rate": 1.0,
        "baseline_rate": 0.4,
        "delta": 0.6,
        "interval": [0.2, 1.0],
        "confidence": 0.95,
        "method": "paired bootstrap",
        "mcnemar_p": 0.25,
        "improved": ["breaking-change", "issue-credits", "security-section"],
        "regressed": [],
        "excluded": [],
    }
    data["evaluation"]["policy"] = {
        "name": "non-inferior",
        "passed": True,
        "reasoning": "lower end +0.2 > -0.05",
    }
    data["evaluation"]["conclusion"] = "better"
    for result in data["candidate_results"]:
        result["stats"] = {
            "n": 1,
            "c": 1,
            "errors": 0,
            "pass_at_k": 1.0,
            "pass_hat_k": 1.0,
            "label": "flaky" if result["task_id"] == "title-heading" else "stable_pass",
        }
    data["non_discriminating"] = ["added-and-fixed", "title-heading"]
    data["power_hint"] = "detecting a 10-point lift needs about 120 tasks"
    data["baseline_cache"] = {
        "hit": True,
        "key": "ab" * 32,
        "age_seconds": 7200,
        "attempts_from_cache": 5,
    }
    data["usage"]["candidate"]["cost_usd"] = 0.0123
    return data


def md_rows(text: str) -> list[list[str]]:
    """Cells of every markdown table row (split on unescaped pipes)."""
    return [
        re.split(r"(?<!\\)\|", line)[1:-1] for line in text.splitlines() if line.startswith("|")
    ]


def junit(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(text.encode("utf-8"))


def counts(element: ET.Element) -> dict[str, str]:
    return {k: element.get(k, "") for k in ("tests", "failures", "errors", "skipped")}


# --- table ----------------------------------------------------------------------------------


def test_table_of_a_passing_run(tmp_path: Path) -> None:
    text = report.render_table(passing(tmp_path))
    lines = text.splitlines()
    assert lines[0].split() == ["task", "candidate", "baseline", "diff", "feedback"]
    row = next(line for line in lines if line.startswith("breaking-change"))
    # the candidate passed; the baseline's failure is shown, marked as the baseline's
    assert row.split()[:4] == ["breaking-change", "1/1", "0/1", "+1"]
    assert "  baseline: missing" in row
    # rates always with four decimals, in every report
    assert "candidate 1.0000 (5/5)  baseline 0.4000 (2/5)  delta +0.6000" in text
    assert re.search(r"^verdict +PASS \[mock\]$", text, re.M)
    assert re.search(r"^improved +breaking-change, issue-credits, security-section$", text, re.M)
    # columns are aligned: every row's candidate column starts at the same offset
    assert len({line.index(" 1/1") for line in lines[1:6]}) == 1


def test_table_of_a_failing_run_shows_feedback_and_cleans_it(tmp_path: Path) -> None:
    data = failing(tmp_path)
    t2 = data["candidate_results"][1]
    t2["attempts"][0]["judge"]["details"] = "missing 'beta'\nin " + "x" * 200 + "\x1b[31m"
    text = report.render_table(data)
    row = next(line for line in text.splitlines() if line.startswith("t2"))
    assert row.split()[:4] == ["t2", "0/2", "2/2", "-1"]
    assert "missing 'beta' in xxx" in row and row.endswith("...")
    assert len(row.split("  -1  ")[1].strip()) <= report.FEEDBACK_CHARS
    assert "\x1b" not in text and "\x01" not in text
    assert re.search(
        r"^verdict +FAIL \[mock\]: delta -25.0 points .+ is below the required", text, re.M
    )
    assert re.search(r"^regressed +t2, t4$", text, re.M)


def test_table_of_an_error_run_keeps_errors_apart(tmp_path: Path) -> None:
    text = report.render_table(erroring(tmp_path))
    row = next(line for line in text.splitlines() if line.startswith("t2"))
    assert row.split()[:6] == ["t2", "1", "err", "1", "err", "n/a"]
    # the rates cover the two tasks judged in both arms, and the counts say so
    assert re.search(r"^pass rate +candidate 1.0000 \(2/2\) +baseline 1.0000 \(2/2\)", text, re.M)
    assert "error: judge error: python judge" in row
    assert re.search(
        r"^verdict +ERROR \[mock\]: 1 of 3 attempts of the candidate ended in error", text, re.M
    )
    assert re.search(r"^errors +2 attempts ended in error \(candidate 1, baseline 1\)", text, re.M)


def test_table_of_skipped_and_no_baseline_runs(tmp_path: Path) -> None:
    text = report.render_table(skipped(tmp_path / "s"))
    assert text.startswith("no tasks were run\n")
    assert "SKIPPED: candidate score 0.4 < eval threshold 1" in text
    text = report.render_table(no_baseline(tmp_path / "n"))
    assert text.splitlines()[0].split() == ["task", "candidate", "feedback"]
    assert "baseline" not in text and "delta" not in text
    assert "candidate 0.5000 (1/2)" in text and "missing: 'beta'" in text


def test_table_shows_statistics_when_present(tmp_path: Path) -> None:
    text = report.render_table(with_stats(passing(tmp_path)))
    # Two intervals at two levels: the comparison's is for reference, the policy's decides.
    assert re.search(
        r"^for reference +paired delta \+0.6, 95% interval \[\+0.2, \+1\], McNemar p = 0.25$",
        text,
        re.M,
    )
    # One wording: the verdict says what was shown; the artifact's `conclusion` is not
    # printed beside it as a second label.
    assert re.search(r"^verdict +PASS \[mock\]: the candidate is not worse than the baseline "
                     r"by more than 5 points$", text, re.M)  # fmt: skip
    assert re.search(r"^decided by +policy non-inferior: lower end \+0.2 > -0.05", text, re.M)
    assert "conclusion" not in text
    assert re.search(r"^non-discriminating +2 tasks", text, re.M)
    # the power hint says it answers another question than the verdict's
    assert re.search(
        r"^power +another question than the verdict's \(how many tasks would detect an "
        r"improvement\): detecting a 10-point lift",
        text,
        re.M,
    )
    assert "baseline served from the cache (key abababababab, age 2 h, 5 attempts)" in text
    assert "candidate $0.0123" in text


# --- markdown -------------------------------------------------------------------------------


def test_markdown_of_a_passing_run(tmp_path: Path) -> None:
    data = passing(tmp_path)
    text = report.render_markdown(data)
    assert text.startswith("## skill-eval: PASS [mock]\n")
    assert "| Pass rate | 1.0000 (5/5) | 0.4000 (2/5) | +0.6000 |" in text
    assert "### Improvements (3)" in text and "### Regressions" not in text
    assert "### Errors" not in text
    footer = text.rstrip().splitlines()[-1]
    sha = data["manifest"]["task_suite"]["sha256"][:12]
    for part in (
        f"suite sha256 {sha}",
        "executor mock",
        "pass\\_k 1",
        "samples 1",
        f"artifact `{data['truth_anchor']}`",
    ):
        assert part in footer


def test_markdown_escapes_cells_and_keeps_tables_rectangular(tmp_path: Path) -> None:
    data = failing(tmp_path)
    data["candidate_results"][1]["attempts"][0]["judge"]["details"] = "a | b\nc <script> & `d`"
    text = report.render_markdown(data)
    assert "<script>" not in text and "\x01" not in text
    assert "| a \\| b c &lt;script&gt; &amp; \\`d\\` |" in text
    widths = {len(cells) for cells in md_rows(text.split("### Per task")[1].split("###")[0])}
    assert widths == {5}
    assert "### Regressions (2)" in text and "- t2: a \\| b" in text
    assert "### Improvements (1)" in text and "**Reason:**" in text


def test_markdown_of_an_error_run_lists_errors_apart(tmp_path: Path) -> None:
    text = report.render_markdown(erroring(tmp_path))
    assert text.startswith("## skill-eval: ERROR [mock]\n")
    assert "### Errors (2 attempts, not counted as failures)" in text
    rows = md_rows(text.split("### Errors")[1])
    assert [c.strip() for c in rows[2][:3]] == ["baseline", "t2", "0"]
    assert "| Attempts in error | 1 | 1 |  |" in text


def test_markdown_of_skipped_and_no_baseline_runs(tmp_path: Path) -> None:
    text = report.render_markdown(skipped(tmp_path / "s"))
    assert text.startswith("## skill-eval: SKIPPED\n") and "No task was run." in text
    assert "**Reason:** candidate score 0.4 &lt; eval threshold 1" in text
    text = report.render_markdown(no_baseline(tmp_path / "n"))
    assert "(no baseline)" in text and "| Pass rate | 0.5000 (1/2) |" in text
    assert {len(cells) for cells in md_rows(text.split("### Per task")[1])} == {3}


def test_markdown_shows_statistics_when_present(tmp_path: Path) -> None:
    text = report.render_markdown(with_stats(passing(tmp_path)))
    # two intervals at two levels: which one decides is said, the other is for reference
    assert "**Decided by:** policy non-inferior: lower end +0.2 &gt; -0.05" in text
    assert "conclusion" not in text  # one wording: the verdict line, not a second label
    assert (
        "For reference (not what decides the verdict): paired delta +0.6, 95% interval "
        "\\[+0.2, +1\\]" in text
    )
    assert "| title-heading | 1/1 | 1/1 | 0 | \\[flaky\\] |" in text
    assert "stable\\_pass" not in text
    assert "### Notes" in text and "baseline served from the cache" in text
    assert "| Cost (USD) | 0.0123 | 0.0000 |  |" in text


def test_markdown_collapses_long_task_lists(tmp_path: Path) -> None:
    data = passing(tmp_path)
    data["candidate_results"] = data["candidate_results"] * 6
    assert "<details><summary>Per task (5 tasks)" not in report.render_markdown(data)
    data["candidate_results"] = [
        dict(r, task_id=f"t{i}") for i, r in enumerate(data["candidate_results"])
    ]
    data["baseline_results"] = []
    assert "<details><summary>Per task (30 tasks)</summary>" in report.render_markdown(data)


# --- junit ----------------------------------------------------------------------------------


def test_junit_of_a_failing_run(tmp_path: Path) -> None:
    data = failing(tmp_path)
    root = junit(report.render_junit(data))
    assert root.tag == "testsuites" and len(root) == 1
    suite = root[0]
    # four tasks, two failing, and the failing verdict
    assert (
        counts(root)
        == counts(suite)
        == {"tests": "5", "failures": "3", "errors": "0", "skipped": "0"}
    )
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "fail" and props["delta"] == f"{data['evaluation']['delta']:+.4f}"
    assert props["candidate_pass_rate"] == f"{data['evaluation']['execution_pass_rate']:.4f}"
    assert props["attempts_record"] == data["manifest"]["run_dir"] + "/attempts.jsonl"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["t1", "t2", "t3", "t4", "verdict"]
    verdict = cases[4].find("failure")
    assert verdict is not None and verdict.get("type") == "verdict"
    assert verdict.get("message") == f"verdict fail [mock]: {data['evaluation']['reason']}"
    assert {c.get("classname") for c in cases} == {"demo"}
    assert all(float(c.get("time", "x")) >= 0 for c in cases)
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "missing: 'beta'"
    body = failure.text or ""
    assert "nope <b>&amp; | x" in body and "]]>" in body and "\x01" not in body
    assert "baseline: passed" in body


def test_junit_survives_any_characters(tmp_path: Path) -> None:
    data = failing(tmp_path)
    data["candidate_results"][1]["attempts"][0]["judge"]["details"] = (
        "bad \x00\x08\ud800\ufffe <&> \"q\" 'a'\nline2"
    )
    data["task_suite_skill_id"] = "s<&>\x02"
    text = report.render_junit(data)
    root = junit(text)
    failure = root.find("testsuite/testcase[@name='t2']/failure")
    assert failure is not None
    # the message attribute is the explaining line (here the two lines joined)
    assert failure.get("message") == "bad  <&> \"q\" 'a' line2"
    assert "bad  <&> \"q\" 'a'\nline2" in (failure.text or "")
    assert root[0].get("name") == "s<&>"


def test_junit_of_an_error_run(tmp_path: Path) -> None:
    data = erroring(tmp_path)
    root = junit(report.render_junit(data))
    assert counts(root) == {"tests": "4", "failures": "0", "errors": "2", "skipped": "0"}
    error = root.find("testsuite/testcase[@name='t2']/error")
    assert error is not None and "judge broke on this output" in (error.get("message") or "")
    verdict = root.find("testsuite/testcase[@name='verdict']/error")
    assert verdict is not None
    assert verdict.get("message") == f"verdict error [mock]: {data['evaluation']['reason']}"


@pytest.mark.parametrize(
    ("verdict", "failures", "errors"), [("pass", "0", "0"), ("fail", "1", "0"), ("error", "0", "1")]
)
def test_junit_verdict_case_agrees_with_the_exit_code(
    tmp_path: Path, verdict: str, failures: str, errors: str
) -> None:
    """Every task passed, yet a `fail` or `error` verdict exits non-zero: CI must not be green."""
    data = passing(tmp_path)
    data["evaluation"]["verdict"] = verdict
    data["evaluation"]["reason"] = "too many attempts ended in error <&>"
    root = junit(report.render_junit(data))
    assert counts(root) == {"tests": "6", "failures": failures, "errors": errors, "skipped": "0"}
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases][-1] == "verdict"
    assert all(len(c.findall("failure")) + len(c.findall("error")) == 0 for c in cases[:-1])
    problem = cases[-1].find("failure" if verdict == "fail" else "error")
    assert (problem is None) == (verdict == "pass")
    if problem is not None:
        said = f"verdict {verdict} [mock]: too many attempts ended in error <&>"
        assert problem.get("message") == said


def test_junit_of_a_skipped_run_is_one_skipped_case(tmp_path: Path) -> None:
    root = junit(report.render_junit(skipped(tmp_path)))
    assert counts(root) == {"tests": "1", "failures": "0", "errors": "0", "skipped": "1"}
    skip = root.find("testsuite/testcase[@name='verdict']/skipped")
    assert skip is not None and skip.get("message") == "candidate score 0.4 < eval threshold 1"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["verdict"] == "skipped"


def test_junit_of_passing_no_baseline_and_stats_runs(tmp_path: Path) -> None:
    # a task fails, yet the verdict passes (pass rate 0.5 >= --min-pass-rate): so does CI
    root = junit(report.render_junit(no_baseline(tmp_path / "n")))
    assert counts(root) == {"tests": "3", "failures": "1", "errors": "0", "skipped": "0"}
    verdict = root.find("testsuite/testcase[@name='verdict']")
    assert verdict is not None and len(verdict) <= 1 and verdict.find("failure") is None
    root = junit(report.render_junit(with_stats(passing(tmp_path / "p"))))
    assert counts(root) == {"tests": "6", "failures": "0", "errors": "0", "skipped": "0"}
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["conclusion"] == "better" and props["policy"] == "non-inferior"
    assert props["delta_interval_low"] == "0.2" and props["mcnemar_p"] == "0.25"


# --- json -----------------------------------------------------------------------------------


def test_json_re_emits_the_validated_artifact(tmp_path: Path) -> None:
    data = with_stats(passing(tmp_path))
    assert json.loads(report.render_json(data)) == data
    del data["evaluation"]
    with pytest.raises(ArtifactError, match="evaluation"):
        report.render_json(data)


# --- the command ----------------------------------------------------------------------------


def test_report_command_renders_every_format(tmp_path: Path) -> None:
    path = Path(
        run_cli(
            "run",
            "--standalone",
            "--task-suite",
            str(DEMO_SUITE),
            "--skill-path",
            str(DEMO_SKILL_IMPROVED),
            "--mock",
            "--mock-outputs",
            str(DEMO_OUTPUTS),
            "--state-root",
            str(tmp_path / "state"),
            "-q",
            "--policy",
            "delta",
        )[1].strip()
    )
    data = read_json(path)
    code, out, _ = run_cli("report", str(path))
    assert code == 0 and out == report.render_table(data)
    code, out, _ = run_cli("report", str(path), "--format", "markdown")
    assert code == 0 and out.startswith("## skill-eval: PASS")
    code, out, _ = run_cli("report", str(path), "--format", "junit")
    assert code == 0 and counts(junit(out))["tests"] == "6"
    code, out, _ = run_cli("report", str(path), "--format", "json")
    assert code == 0 and json.loads(out) == data
    target = tmp_path / "out" / "junit.xml"
    code, out, _ = run_cli("report", str(path), "--format", "junit", "--output", str(target))
    assert code == 0 and out == "" and counts(junit(target.read_text()))["tests"] == "6"


def test_report_command_rejects_bad_artifacts_one_line_a_problem(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json", encoding="utf-8")
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps({"schema_version": "1.0", "stage": "nope"}), encoding="utf-8")
    for path, needle in (
        (tmp_path / "missing.json", "artifact not found"),
        (corrupt, "not a readable JSON artifact"),
        (invalid, "invalid.json"),
    ):
        code, out, err = run_cli("report", str(path), "--format", "markdown")
        assert code == 2 and out == ""
        assert err.startswith("Error: ") and needle in err, err
        lines = err.strip().splitlines()  # a schema's problems: the first few, one line each
        assert len(lines) <= 5 and all(str(path) in line for line in lines), err
        assert len(lines) == 1 or path == invalid
        assert "Traceback" not in err
    code, _, err = run_cli("report", str(corrupt), "--format", "pdf")
    assert code == 2


def test_feedback_shows_the_cause_and_where_the_full_record_is(tmp_path: Path) -> None:
    data = failing(tmp_path)
    pytest_output = (
        "==================================== ERRORS ====================================\n"
        "_____________________ ERROR collecting fixtures/test_notes.py _____________________\n"
        "ImportError while importing test module '/tmp/work/fixtures/test_notes.py'.\n"
        "Traceback:\n  fixtures/test_notes.py:1: in <module>\n    import yaml_helpers\n"
        "E   ModuleNotFoundError: No module named 'yaml_helpers'\n"
        "=========================== short test summary info ============================\n"
        "ERROR fixtures/test_notes.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during "
        "collection !!!!!!!!!!!!!!!!!!!!\n1 error in 0.05s\n"
    )
    data["candidate_results"][1]["attempts"][0]["judge"]["details"] = pytest_output
    text = report.render_table(data)
    row = next(line for line in text.splitlines() if line.startswith("t2"))
    assert row.endswith("ModuleNotFoundError: No module named 'yaml_helpers'")
    journal = data["manifest"]["run_dir"] + "/attempts.jsonl"
    assert re.search(
        rf"^record +every attempt, its output and the full judge messages: "
        rf"{re.escape(journal)}$",
        text,
        re.M,
    )
    markdown = report.render_markdown(data)
    assert "No module named 'yaml\\_helpers'" in markdown and "attempts.jsonl" in markdown
