"""Every judge that reads the attempt's workspace works under every jail provider, `none`
(`--no-jail`) included (issue 50): unjailed, the pytest judge's AI_WORKSPACE named a folder
that did not exist, so a test reading the agent's files failed in both arms and the task was
reported "non-discriminating". One `skill-eval run --mock` per provider: one task per judge
type, each reading a file (report.md, report.json, done.flag) that the candidate's scripted
work gets right and the baseline's gets wrong. And the agent demo's pytest judge gives the
same verdicts unjailed as jailed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.jail.providers import REGISTRY
from tests.helpers import (
    checkout_closed_to_others,
    journal_records,
    read_json,
    run_cli,
    write_outputs,
    write_skill,
    write_suite,
)
from tests.test_agent_tasks import DEMO

GOOD = {"report.md": "ok\n", "report.json": '{"status": "ok"}', "done.flag": "done"}
BAD = {"report.md": "TODO\n", "report.json": '{"state": "broken"}'}
TEST_WORKSPACE = """
import os, pathlib

def test_the_report_says_ok():
    report = pathlib.Path(os.environ["AI_WORKSPACE"]) / "report.md"
    assert report.read_text().strip() == "ok"
"""
PYTHON_JUDGE = """
def check(output, task, work):
    found = work.files.get("report.md") if work.files is not None else None
    return found is not None and found.read_text().strip() == "ok"
"""
# Each judge type that reads the workspace, as a task's judge.
JUDGES: dict[str, dict[str, Any]] = {
    "file-exists": {"type": "file-exists", "paths": ["done.flag"]},
    "contains": {"type": "contains", "file": "report.md", "expected": ["ok"]},
    "not-contains": {"type": "not-contains", "file": "report.md", "expected": ["TODO"]},
    "equals": {
        "type": "equals",
        "file": "report.md",
        "expected": "ok",
        "normalize": ["whitespace"],
    },
    "regex": {"type": "regex", "file": "report.md", "pattern": "^ok$", "flags": ["multiline"]},
    "json-schema": {
        "type": "json-schema",
        "file": "report.json",
        "schema_file": "fixtures/report.schema.json",
    },
    "python": {"type": "python", "callable": "workspace_judge:check"},
    "pytest": {"type": "pytest", "test_file": "fixtures/test_workspace.py", "timeout": 120},
}
PROVIDERS = ("bubblewrap", "container", "none")


def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    (folder / "fixtures").mkdir(parents=True)
    (folder / "fixtures" / "test_workspace.py").write_text(TEST_WORKSPACE, encoding="utf-8")
    (folder / "fixtures" / "report.schema.json").write_text(
        '{"type": "object", "required": ["status"]}', encoding="utf-8"
    )
    tasks = [
        {
            "id": name,
            "prompt": f"Write the report ({name})",
            "judge": judge,
            "allowed_tools": ["Write"],
        }
        for name, judge in JUDGES.items()
    ]
    return write_suite(folder, tasks)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_judge_reading_the_workspace_works_under_the_provider(
    tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if provider != "none" and (why := REGISTRY.get(provider).problem()) is not None:  # type: ignore[union-attr]
        pytest.skip(f"{provider}: {why}")
    if provider == "container" and (closed := checkout_closed_to_others()) is not None:
        pytest.skip(closed)  # test_a_folder_closed_to_the_containers_user_is_named covers it
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "workspace_judge.py").write_text(PYTHON_JUDGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(modules))
    outputs = write_outputs(
        tmp_path / "outputs.yaml",
        {
            arm: {name: {"text": "Wrote the report", "files": files} for name in JUDGES}
            for arm, files in (("candidate", GOOD), ("baseline", BAD))
        },
    )
    jail = ["--no-jail"] if provider == "none" else ["--jail", provider]
    code, out, err = run_cli(
        "run",
        "--standalone",
        *("--task-suite", str(suite(tmp_path)), "--skill-path", str(write_skill(tmp_path / "s"))),
        *("--state-root", str(tmp_path / "state"), "--executor", "mock"),
        *("--mock-outputs", str(outputs), "--max-retries", "0", "-q", "--policy", "delta"),
        *jail,
    )
    assert out.strip(), err
    data = read_json(out.strip())
    assert data["manifest"]["isolation"]["jail"] == provider
    for arm, expected in (("candidate", True), ("baseline", False)):
        found = {r["task_id"]: r for r in data[f"{arm}_results"]}
        assert set(found) == set(JUDGES)
        wrong = {t: r["details"] for t, r in found.items() if r["passed"] is not expected}
        assert wrong == {}, (arm, wrong)
    pytest_judged = next(r for r in data["candidate_results"] if r["task_id"] == "pytest")
    assert json.dumps(pytest_judged).count(f'"isolation": "{provider}"') >= 1


def demo_statuses(tmp_path: Path, *jail: str) -> dict[tuple[str, str], str]:
    code, out, err = run_cli(
        "run",
        "--standalone",
        *("--task-suite", str(DEMO), "--skill-path", str(DEMO / "skill" / "csv-report")),
        *("--mock", "--mock-outputs", str(DEMO / "mock_outputs.yaml")),
        *("--state-root", str(tmp_path / "state"), "-q", *jail),
    )
    assert code == 0, out + err
    (journal,) = (tmp_path / "state" / "runs").glob("*/attempts.jsonl")
    return {(r["arm"], r["task_id"]): r["status"] for r in journal_records(journal)}


def test_the_agent_demos_pytest_judge_gives_the_same_verdicts_unjailed(tmp_path: Path) -> None:
    if REGISTRY.get("bubblewrap").problem() and REGISTRY.get("container").problem():  # type: ignore[union-attr]
        pytest.skip("no jail provider runs here")
    jailed = demo_statuses(tmp_path / "jailed")
    unjailed = demo_statuses(tmp_path / "unjailed", "--no-jail")
    assert unjailed == jailed
    assert jailed[("candidate", "sales-report-tested")] == "passed"  # pytest on AI_WORKSPACE
    assert jailed[("baseline", "sales-report-tested")] == "failed"


def test_a_folder_closed_to_the_containers_user_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The container's jail runs as another user: a python judge's module in a folder of mode
    0700 cannot be imported there. The run stops in one line that names the folder and the
    fix, not only the interpreter's `Permission denied`."""
    if (why := REGISTRY.get("container").problem()) is not None:  # type: ignore[union-attr]
        pytest.skip(f"container: {why}")
    if (closed := checkout_closed_to_others()) is not None:
        pytest.skip(closed)  # the jail cannot start the checkout's python at all
    modules = tmp_path / "closed"
    modules.mkdir()
    (modules / "closed_judge.py").write_text(PYTHON_JUDGE, encoding="utf-8")
    modules.chmod(0o700)
    monkeypatch.syspath_prepend(str(modules))
    judge = {"type": "python", "callable": "closed_judge:check"}
    tasks = [{"id": "closed", "prompt": "p", "reference": "ok", "judge": judge}]
    code, _, err = run_cli(
        "run",
        "--standalone",
        *("--task-suite", str(write_suite(tmp_path / "suite", tasks))),
        *("--skill-path", str(write_skill(tmp_path / "s")), "--mock"),
        *("--state-root", str(tmp_path / "state"), "--jail", "container", "-q"),
    )
    assert code != 0 and "Traceback" not in err
    assert f"not found (install it, or put its folder on PYTHONPATH); {modules} cannot" in err
    assert f"`chmod o+rx {modules}`" in err, err
