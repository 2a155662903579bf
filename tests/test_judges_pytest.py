"""The pytest judge: the fixtures rule at load time, and a sandboxed process per judgement
(scrubbed environment, temp cwd/HOME, process-group kill on timeout)."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from skill_eval.errors import SuiteError
from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config
from skill_eval.judges.pytest_judge import sandbox_env
from skill_eval.model import JudgeResult, Task
from skill_eval.suite import load_suite

PASSING = """
import os

def test_mentions_powerful():
    text = open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read()
    assert "POWERFUL" in text, "output must mention POWERFUL"

def test_arithmetic():
    assert 1 + 1 == 2
"""


def make_suite(tmp_path: Path, files: dict[str, str]) -> Path:
    suite = tmp_path / "suite"
    (suite / "fixtures").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (suite / "fixtures" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return suite


def run(suite: Path, test_file: str, output: str, task_timeout: float = 60,
        **extra: object) -> JudgeResult:
    config = {"type": "pytest", "test_file": test_file, **extra}
    assert validate_judge_config(config, suite) == []
    task = Task(id="t", prompt="p", judge=config, timeout_seconds=task_timeout)
    return run_judge(build_judge(config), task, output, JudgeContext(suite_dir=suite))


def test_passes_when_every_test_passes(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_out.py": PASSING})
    result = run(suite, "fixtures/test_out.py", "Something POWERFUL")
    assert (result.passed, result.score, result.error) == (True, 1.0, None)
    assert result.details == "2 test(s) passed"
    assert result.data["tests"] == 2


def test_failure_details_hold_the_assertion_line_not_the_report(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_out.py": PASSING})
    result = run(suite, "fixtures/test_out.py", "something weak")
    assert (result.passed, result.error) == (False, None)
    assert result.score == 0.5
    assert "test_mentions_powerful: AssertionError: output must mention POWERFUL" in result.details
    assert "assert 'POWERFUL' in 'something weak'" in result.details
    assert "test session starts" not in result.details and "=====" not in result.details


def test_fixtures_dir_is_left_untouched(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_out.py": PASSING})
    run(suite, "fixtures/test_out.py", "POWERFUL")
    assert sorted(p.name for p in (suite / "fixtures").iterdir()) == ["test_out.py"]
    assert not (suite / ".pytest_cache").exists()


def test_no_secret_reaches_the_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-harness-secret")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws")
    monkeypatch.setenv("MY_SERVICE_SECRET", "s")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    suite = make_suite(tmp_path, {"test_env.py": """
        import os

        def test_no_key():
            assert "ANTHROPIC_API_KEY" not in os.environ
            leaked = [k for k in os.environ
                      if k.startswith("ANTHROPIC_") or k.endswith(("_KEY", "_TOKEN", "_SECRET"))]
            assert leaked == []
            assert "sk-ant-harness-secret" not in repr(dict(os.environ))

        def test_sandbox():
            assert os.environ["HOME"] == os.getcwd()
            assert os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
            assert "PYTHONPATH" not in os.environ
            assert os.path.dirname(os.environ["AI_OUTPUT_FILE"]) == os.getcwd()
        """})
    result = run(suite, "fixtures/test_env.py", "anything")
    assert (result.passed, result.error) == (True, None), result.details
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-harness-secret"  # the harness keeps it


def test_sandbox_env_drops_secret_names_even_when_passed_through(tmp_path: Path) -> None:
    env = sandbox_env(tmp_path, tmp_path / "o", {"PATH": "/bin", "LANG": "C", "X_KEY": "k"})
    assert env["PATH"] == "/bin" and env["HOME"] == str(tmp_path) and "X_KEY" not in env


def test_only_skipped_tests_is_a_failure(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_skip.py": """
        import pytest

        @pytest.mark.skip(reason="not ready")
        def test_later():
            assert False
        """})
    result = run(suite, "fixtures/test_skip.py", "x")
    assert (result.passed, result.error) == (False, None)
    assert "only skipped tests" in result.details and "not ready" in result.details


def test_no_tests_collected_is_a_failure(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_empty.py": "X = 1\n"})
    result = run(suite, "fixtures/test_empty.py", "x")
    assert (result.passed, result.error) == (False, None)
    assert "no tests collected" in result.details


def test_collection_error_is_a_failure_with_the_reason(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_json.py": """
        import json, os
        DATA = json.load(open(os.environ["AI_OUTPUT_FILE"]))

        def test_has_name():
            assert "name" in DATA
        """})
    result = run(suite, "fixtures/test_json.py", "not json")
    assert (result.passed, result.error) == (False, None)
    assert "collection error" in result.details and "JSONDecodeError" in result.details
    assert run(suite, "fixtures/test_json.py", '{"name": 1}').passed


def test_config_above_the_suite_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n")
    (tmp_path / "conftest.py").write_text("raise SystemExit('outer conftest loaded')\n")
    suite = make_suite(tmp_path, {"test_out.py": PASSING})
    (suite / "conftest.py").write_text("raise SystemExit('suite conftest loaded')\n")
    assert run(suite, "fixtures/test_out.py", "POWERFUL").passed


def test_conftest_inside_fixtures_is_used(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {
        "conftest.py": """
            import os, pytest

            @pytest.fixture
            def output():
                return open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read()
            """,
        "test_fx.py": "def test_it(output):\n    assert output.startswith('ok')\n",
    })
    assert run(suite, "fixtures/test_fx.py", "ok then").passed
    assert not run(suite, "fixtures/test_fx.py", "nope").passed


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("own_timeout", [False, True])
def test_hung_test_is_killed_with_its_children(tmp_path: Path, own_timeout: bool) -> None:
    pidfile = tmp_path / "pids.txt"
    suite = make_suite(tmp_path, {"test_hang.py": f"""
        import os, subprocess, sys, time

        def test_hangs():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            with open({str(pidfile)!r}, "w") as f:
                f.write(f"{{os.getpid()}} {{child.pid}}")
            time.sleep(120)
        """})
    started = time.monotonic()
    if own_timeout:  # the judge's own `timeout` wins over the task's
        result = run(suite, "fixtures/test_hang.py", "x", task_timeout=300, timeout=2)
    else:
        result = run(suite, "fixtures/test_hang.py", "x", task_timeout=2)
    assert time.monotonic() - started < 30
    assert result.error is not None and "timed out after 2s" in result.error
    assert result.passed is False
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "pytest or its grandchild survived the timeout"


def test_background_children_do_not_outlive_a_passing_run(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid.txt"
    suite = make_suite(tmp_path, {"test_bg.py": f"""
        import subprocess, sys

        def test_spawns():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                     stdout=subprocess.DEVNULL)
            open({str(pidfile)!r}, "w").write(str(child.pid))
        """})
    started = time.monotonic()
    assert run(suite, "fixtures/test_bg.py", "x", task_timeout=60).passed
    assert time.monotonic() - started < 20
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def write_suite(suite: Path, test_file: str) -> Path:
    tasks = [{"id": "ok", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}},
             {"id": "evil", "prompt": "p", "judge": {"type": "pytest", "test_file": test_file}}]
    path = suite / "task_suite.yaml"
    path.write_text(yaml.safe_dump({"skill_id": "s", "version": "1.0", "tasks": tasks}))
    return path


@pytest.mark.parametrize("test_file, message", [
    ("fixtures/../fixtures_evil/test_x.py", "must stay inside fixtures/"),
    ("fixtures/../../outside/test_x.py", "must stay inside fixtures/"),
    ("fixtures/linked/test_x.py", "must stay inside fixtures/"),
    ("fixtures/test_link.py", "must stay inside fixtures/"),
    ("{abs}", "not absolute"),
    ("fixtures_evil/test_x.py", "must start with fixtures/"),
    ("fixtures/test_missing.py", "file not found"),
])
def test_fixture_escapes_are_rejected_at_load_time(tmp_path: Path, test_file: str,
                                                   message: str) -> None:
    suite = make_suite(tmp_path, {"test_ok.py": PASSING})
    for outside in (suite / "fixtures_evil", tmp_path / "outside"):
        outside.mkdir()
        (outside / "test_x.py").write_text(PASSING)
    os.symlink(tmp_path / "outside", suite / "fixtures" / "linked")
    os.symlink(tmp_path / "outside" / "test_x.py", suite / "fixtures" / "test_link.py")
    path = write_suite(suite, test_file.format(abs=suite / "fixtures" / "test_ok.py"))
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    text = str(caught.value)
    assert 'tasks[1] (id "evil").judge.test_file' in text and message in text
    assert len(caught.value.problems) == 1


def test_a_fixture_inside_fixtures_loads(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_ok.py": PASSING})
    (suite / "fixtures" / "sub").mkdir()
    (suite / "fixtures" / "sub" / "test_deep.py").write_text(PASSING)
    assert load_suite(write_suite(suite, "fixtures/sub/../test_ok.py")).tasks[1].id == "evil"
    assert load_suite(write_suite(suite, "fixtures/sub/test_deep.py"))


@pytest.mark.parametrize("extra, message", [
    ({"timeout": 0}, "must be a number of seconds > 0"),
    ({"timeout": "5"}, "must be a number of seconds > 0"),
    ({"test_fle": "x"}, "did you mean 'test_file'"),
])
def test_config_problems(tmp_path: Path, extra: dict[str, object], message: str) -> None:
    suite = make_suite(tmp_path, {"test_ok.py": PASSING})
    config = {"type": "pytest", "test_file": "fixtures/test_ok.py", **extra}
    problems = validate_judge_config(config, suite)
    assert any(message in m for _, m in problems), problems
