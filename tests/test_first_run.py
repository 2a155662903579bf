"""What a new user hit on a first run (issue 9): the pytest judge on a plain install, judge
errors that cannot heal recorded at once instead of retried for half a minute, a 401 or an
unknown model that stops the run, and how to get the claude CLI when it is missing.

Retries would show as `tries > 1`, as calls to the runner's sleep, or as more than one request
to the fake server: the tests count those rather than time the runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from skill_eval import AttemptPolicy
from skill_eval.core.model import Arm
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.executors.base import create_executor
from skill_eval.executors.claude.binary import NOT_FOUND, bundled_cli
from skill_eval.executors.claude.stream import from_result
from skill_eval.inputs.suite import load_suite
from skill_eval.judges.base import JudgeContext, build_judge
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    REPO,
    jail_missing,
    journal_records,
    read_json,
    run_cli,
    write_outputs,
    write_skill,
    write_suite,
)

TEST_FILE = (
    "import os\n\n\ndef test_output():\n"
    "    assert 'ok' in open(os.environ['AI_OUTPUT_FILE']).read()\n"
)
# Packages a plain environment without pytest lacks (pytest and what only pytest needs).
PYTEST_PARTS = ("pytest", "_pytest", "py.py", "pluggy", "iniconfig")
REAL_CLAUDE = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli() or ""


def pytest_suite(root: Path, conftest: str | None = None) -> Path:
    """Two tasks, as in the issue: one judged by pytest, one by contains."""
    suite = write_suite(
        root / "suite",
        [
            {
                "id": "tested",
                "prompt": "Write ok",
                "judge": {"type": "pytest", "test_file": "fixtures/test_out.py"},
            },
            {"id": "words", "prompt": "Say ok", "judge": {"type": "contains", "expected": ["ok"]}},
        ],
    )
    fixtures = suite.parent / "fixtures"
    fixtures.mkdir()
    (fixtures / "test_out.py").write_text(TEST_FILE, encoding="utf-8")
    if conftest is not None:
        (fixtures / "conftest.py").write_text(conftest, encoding="utf-8")
    return suite


def mock_run(tmp_path: Path, suite: Path, *extra: str) -> list[str]:
    skill = write_skill(tmp_path / "skill", "Always say ok.")
    outputs = write_outputs(tmp_path / "outputs.yaml", {"tested": "ok", "words": "ok"})
    return [
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--mock-outputs",
        str(outputs),
        "-q",
        *extra,
    ]


def journal_of(state: Path) -> list[dict]:
    [journal] = state.glob("runs/*/attempts.jsonl")
    return journal_records(journal)


# -- a plain install ----------------------------------------------------------------------------


def test_pytest_is_a_runtime_dependency() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(dep.split(">")[0].strip() == "pytest" for dep in project["dependencies"])


def test_two_task_suite_with_pytest_and_contains_judges_runs_clean(tmp_path: Path) -> None:
    code, out, err = run_cli(*mock_run(tmp_path, pytest_suite(tmp_path), "--policy", "delta"))
    assert code == 0, err
    data = read_json(out.strip())
    assert data["errors"] == []
    attempts = journal_of(tmp_path / "state")
    assert len(attempts) == 4
    assert {(a["task_id"], a["status"], a["tries"]) for a in attempts} == {
        ("tested", "passed", 1),
        ("words", "passed", 1),
    }


@pytest.fixture(scope="module")
def python_without_pytest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real interpreter that has skill-eval and its other dependencies but no pytest: a fresh
    venv whose path holds this checkout and links to every installed package but pytest's."""
    root = tmp_path_factory.mktemp("no-pytest")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=300
    )
    python = root / "venv" / "bin" / "python"
    deps = root / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if (
            name in PYTEST_PARTS
            or name.startswith(tuple(f"{p}-" for p in PYTEST_PARTS))
            or name.endswith(".pth")
            or name.startswith(("__editable__", "skill_eval"))
        ):
            continue
        (deps / entry.name).symlink_to(entry)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "skill_eval_under_test.pth").write_text(f"{REPO}\n{deps}\n", encoding="utf-8")
    check = subprocess.run(
        [
            str(python),
            "-c",
            "import skill_eval.cli, yaml, jsonschema, click\n"
            "try:\n import pytest\nexcept ImportError:\n print('no pytest')",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.stdout.strip() == "no pytest", check.stderr
    return python


def run_with(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)}
    return subprocess.run(
        [str(python), "-m", "skill_eval.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_validate_says_in_one_line_that_pytest_is_missing(
    tmp_path: Path, python_without_pytest: Path
) -> None:
    suite = pytest_suite(tmp_path)
    done = run_with(python_without_pytest, "validate", str(suite), cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(f"{suite}: pytest judges need pytest")
    assert str(python_without_pytest) in line and "pip install pytest" in line
    contains_only = write_suite(
        tmp_path / "plain",
        [{"id": "a", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    assert (
        run_with(python_without_pytest, "validate", str(contains_only), cwd=tmp_path).returncode
        == 0
    )


def test_run_without_pytest_stops_before_any_attempt(
    tmp_path: Path, python_without_pytest: Path
) -> None:
    done = run_with(
        python_without_pytest, *mock_run(tmp_path, pytest_suite(tmp_path)), cwd=tmp_path
    )
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: pytest judges need pytest, which")
    assert not (tmp_path / "state" / "runs").exists()  # no attempt ran


JUDGE_WITHOUT_PYTEST = """
import json, sys
from pathlib import Path
from skill_eval.executors.base import ExecutorConfig, create_executor
from skill_eval.judges.base import JudgeContext, build_judge
from skill_eval.core.model import Arm
from skill_eval.engine.runner import Journal, Runner, RunSettings, plan_jobs
from skill_eval.core.model import Arm
from skill_eval.inputs.suite import load_suite

suite = load_suite(sys.argv[1])
tasks = [t for t in suite.tasks if t.id == "tested"]
sleeps = []
runner = Runner(create_executor("mock", {"mock_outputs": {"tested": "ok"}}),
                {t.id: build_judge(t.judge) for t in tasks}, JudgeContext(suite.directory),
                Journal(Path(sys.argv[2])), RunSettings(sleep=sleeps.append))
[attempt] = runner.run(plan_jobs([Arm("candidate", None, "none")], tasks, 1))
print(json.dumps({"attempt": attempt.to_dict(), "sleeps": sleeps}))
"""


def test_the_judge_itself_records_missing_pytest_at_once(
    tmp_path: Path, python_without_pytest: Path
) -> None:
    """Past the preflight (a library caller that skips it): the judge, run by an interpreter
    with no pytest, gives a permanent error the runner does not retry."""
    suite = pytest_suite(tmp_path)
    done = subprocess.run(
        [
            str(python_without_pytest),
            "-c",
            JUDGE_WITHOUT_PYTEST,
            str(suite),
            str(tmp_path / "attempts.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    attempt = report["attempt"]
    assert report["sleeps"] == [] and attempt["tries"] == 1 and attempt["status"] == "error"
    assert attempt["judge"]["error_kind"] == "permanent"
    assert "pytest judges need pytest" in attempt["error"]


# -- errors that cannot heal ----------------------------------------------------------------------


def test_a_fixture_gone_at_run_time_is_recorded_at_once(tmp_path: Path) -> None:
    suite = load_suite(pytest_suite(tmp_path))
    tasks = [t for t in suite.tasks if t.id == "tested"]
    judges = {t.id: build_judge(t.judge) for t in tasks}
    (suite.directory / "fixtures" / "test_out.py").unlink()  # after the suite was validated
    sleeps: list[float] = []
    runner = Runner(
        create_executor("mock", {"mock_outputs": {"tested": "ok"}}),
        judges,
        JudgeContext(suite.directory),
        Journal(tmp_path / "attempts.jsonl"),
        RunSettings(attempts=AttemptPolicy(max_retries=5), sleep=sleeps.append),
    )
    [attempt] = runner.run(plan_jobs([Arm("candidate", None, "none")], tasks, 1))
    assert sleeps == [] and attempt.tries == 1 and attempt.status == "error"
    assert attempt.error is not None and "file not found: 'fixtures/test_out.py'" in attempt.error
    assert attempt.judge is not None and attempt.judge.error_kind == "permanent"


def test_a_missing_module_in_the_fixtures_is_reported_with_its_cause(tmp_path: Path) -> None:
    suite = pytest_suite(tmp_path, conftest="import helper_nobody_installed\n")
    code, out, err = run_cli(*mock_run(tmp_path, suite))
    assert code == 3  # an error verdict: half the attempts could not be judged
    cause = "ModuleNotFoundError: No module named 'helper_nobody_installed'"
    assert cause in err  # on stderr, past the table's cut
    data = read_json(out.strip())
    assert [e["task_id"] for e in data["errors"]] == ["tested", "tested"]
    assert all(cause in e["error"] for e in data["errors"])
    tested = [a for a in journal_of(tmp_path / "state") if a["task_id"] == "tested"]
    assert [a["tries"] for a in tested] == [1, 1]  # not retried: the cause would not heal


@pytest.mark.parametrize(
    ("fault", "status"), [("authentication", 401), ("permission", 403), ("not_found", 404)]
)
def test_a_bad_key_or_model_stops_the_run_at_the_first_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, status: int
) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [
            {"id": f"t{i}", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}
            for i in range(3)
        ],
    )
    skill = write_skill(tmp_path / "skill")
    with FakeAnthropic(faults=[fault]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wrong")
        code, out, err = run_cli(
            "run",
            "--standalone",
            "--task-suite",
            str(suite),
            "--skill-path",
            str(skill),
            "--state-root",
            str(tmp_path / "state"),
            "--executor",
            "anthropic",
            "--model",
            "no-such-model",
            "--concurrency",
            "1",
            "-q",
        )
        requests = server.count
    assert code == 3 and out == ""
    [line] = err.splitlines()
    assert line.startswith(f"Error: run stopped: HTTP {status} ")
    assert requests == 1  # not 6 jobs x 6 tries
    [attempt] = journal_of(tmp_path / "state")  # the journal keeps the cause
    assert attempt["tries"] == 1 and f"HTTP {status}" in attempt["error"]


def test_claude_cli_auth_and_model_errors_are_fatal() -> None:
    """The results the real CLI prints for a 401 and an unknown model (seen against the
    fake server), and a rate limit for contrast."""

    def result(status: int, text: str) -> dict[str, object]:
        return {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "api_error_status": status,
            "result": text,
        }

    assert from_result(result(401, "Invalid API key")).failure.stops_run
    assert from_result(result(404, "There's an issue with the selected model")).failure.stops_run
    limited = from_result(result(429, "Rate limited"))
    assert limited.failure.retry and not limited.failure.stops_run


@pytest.mark.skipif(
    not (os.path.isfile(REAL_CLAUDE) and os.access(REAL_CLAUDE, os.X_OK))
    or jail_missing() is not None,
    reason=str(
        jail_missing()
        or "Claude Code CLI not installed: pip install -e '.[agent]' or set SKILL_EVAL_CLAUDE_BIN"
    ),
)
def test_the_real_claude_cli_stops_the_run_on_a_401(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [
            {"id": f"t{i}", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}
            for i in range(2)
        ],
    )
    with FakeAnthropic(faults=["authentication"]) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wrong")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        code, _, err = run_cli(
            "run",
            "--standalone",
            "--task-suite",
            str(suite),
            "--skill-path",
            str(write_skill(tmp_path / "skill")),
            "--state-root",
            str(tmp_path / "state"),
            "--executor",
            "claude-cli",
            "--claude-bin",
            REAL_CLAUDE,
            "--model",
            "m",
            "--concurrency",
            "1",
            "-q",
        )
        requests = server.count
    assert code == 3, err
    assert "Error: run stopped: claude CLI error: (HTTP 401)" in err
    assert requests == 1


def test_missing_claude_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "a", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    # `--claude-bin claude`: the name on PATH, so that the CLI bundled with claude-agent-sdk
    # (found first when no --claude-bin is given) does not count.
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--claude-bin",
        "claude",
    )
    assert code == 3  # a harness fault, not bad input
    [line] = err.splitlines()
    assert line.startswith(f"Error: {NOT_FOUND} ")  # the compatibility sentence, word for word
    assert "bash scripts/install_claude_cli.sh" in line and "--executor anthropic" in line
