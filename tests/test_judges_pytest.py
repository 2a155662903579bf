"""The pytest judge: the fixtures rule at load time, and a jailed process per judgement
(read-only copies of the fixtures, scrubbed environment, its own namespaces, size-capped
writable folders); what the tested code causes is a failure, only "could not judge" is an
error. The jail needs bubblewrap: without it these tests skip, naming it."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

import skill_eval
from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.errors import SuiteError
from skill_eval.inputs.suite import load_suite
from skill_eval.jail.bubblewrap import problem as jail_problem
from skill_eval.judges import JudgeContext, build_judge, run_judge, validate_judge_config
from skill_eval.judges.pytest_run import run_pytest, sandbox_env
from skill_eval.judges.pytest_verdict import verdict

needs_jail = pytest.mark.skipif(jail_problem() is not None, reason=str(jail_problem()))

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


def run(
    suite: Path, test_file: str, output: str, task_timeout: float = 60, **extra: object
) -> JudgeResult:
    if (missing := jail_problem()) is not None:
        pytest.skip(missing)
    config = {"type": "pytest", "test_file": test_file, **extra}
    assert validate_judge_config(config, suite) == []
    task = Task(id="t", prompt="p", judge=config, timeout_seconds=task_timeout)
    return run_judge(build_judge(config), task, Work(output), JudgeContext(suite_dir=suite))


def test_passes_when_every_test_passes(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_out.py": PASSING})
    result = run(suite, "fixtures/test_out.py", "Something POWERFUL")
    assert (result.passed, result.score, result.error) == (True, 1.0, None)
    assert result.details == "2 test(s) passed"
    assert result.data["tests"] == 2 and result.data["passed"] == 2
    assert result.data["isolation"] == "bubblewrap"


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
    suite = make_suite(
        tmp_path,
        {
            "test_env.py": """
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
            assert "SKILL_EVAL_PYTEST_SUMMARY" not in os.environ  # where the verdict is written
            assert os.path.dirname(os.environ["AI_OUTPUT_FILE"]) == os.getcwd()
        """
        },
    )
    result = run(suite, "fixtures/test_env.py", "anything")
    assert (result.passed, result.error) == (True, None), result.details
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-harness-secret"  # the harness keeps it


def test_sandbox_env_drops_secret_names_even_when_passed_through(tmp_path: Path) -> None:
    env = sandbox_env(tmp_path, tmp_path / "o", {"PATH": "/bin", "LANG": "C", "X_KEY": "k"})
    assert env["PATH"] == "/bin" and env["HOME"] == str(tmp_path) and "X_KEY" not in env


def test_only_skipped_tests_is_a_failure(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_skip.py": """
        import pytest

        @pytest.mark.skip(reason="not ready")
        def test_later():
            assert False
        """
        },
    )
    result = run(suite, "fixtures/test_skip.py", "x")
    assert (result.passed, result.error) == (False, None)
    assert "only skipped tests" in result.details and "not ready" in result.details


def test_no_tests_collected_is_a_failure(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, {"test_empty.py": "X = 1\n"})
    result = run(suite, "fixtures/test_empty.py", "x")
    assert (result.passed, result.error) == (False, None)
    assert "no tests collected" in result.details


def test_collection_error_is_a_failure_with_the_reason(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_json.py": """
        import json, os
        DATA = json.load(open(os.environ["AI_OUTPUT_FILE"]))

        def test_has_name():
            assert "name" in DATA
        """
        },
    )
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
    suite = make_suite(
        tmp_path,
        {
            "conftest.py": """
            import os, pytest

            @pytest.fixture
            def output():
                return open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read()
            """,
            "test_fx.py": "def test_it(output):\n    assert output.startswith('ok')\n",
        },
    )
    assert run(suite, "fixtures/test_fx.py", "ok then").passed
    assert not run(suite, "fixtures/test_fx.py", "nope").passed


def _pids_with(marker: str) -> list[int]:
    """Host PIDs of live (non-zombie) processes whose command line holds `marker`: PIDs written
    from inside a PID namespace mean nothing out here."""
    pids = []
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as handle:
                if marker.encode() not in handle.read():
                    continue
            with open(path.replace("cmdline", "stat"), encoding="utf-8") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] != "Z":
                    pids.append(int(path.split("/")[2]))
        except (OSError, IndexError):
            continue
    return pids


def _gone(marker: str, seconds: float = 30) -> bool:  # polled: generous costs nothing
    deadline = time.monotonic() + seconds
    while _pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _pids_with(marker)


def _sleeper(marker: str, detach: bool) -> str:
    """Test code starting a child that sleeps with `marker` in its argv, detached by setsid()
    (its own session and process group) when asked."""
    return (
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', "
        f"{marker!r}], stdout=subprocess.DEVNULL, start_new_session={detach})"
    )


HANG_TIMEOUT = 10  # seconds: pytest starts the hanging test well within it, even loaded


@pytest.mark.parametrize("own_timeout", [False, True])
def test_hung_test_is_a_failure_and_its_tree_is_killed(tmp_path: Path, own_timeout: bool) -> None:
    marker = f"hang-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path,
        {
            "test_hang.py": f"""
        import subprocess, sys, time

        def test_hangs():
            {_sleeper(marker, detach=False)}
            time.sleep(120)
        """
        },
    )
    started = time.monotonic()
    # HANG_TIMEOUT gives pytest time to start the test (and its child) on a loaded machine
    if own_timeout:  # the judge's own `timeout` wins over the task's
        result = run(suite, "fixtures/test_hang.py", "x", task_timeout=300, timeout=HANG_TIMEOUT)
    else:
        result = run(suite, "fixtures/test_hang.py", "x", task_timeout=HANG_TIMEOUT)
    assert time.monotonic() - started < 90  # a missed timeout would wait out the 120 s sleep
    # The output hung the tests: the candidate fails, it is not excused as a judge error.
    assert (result.passed, result.score, result.error) == (False, 0.0, None)
    assert result.details.startswith(f"timed out after {HANG_TIMEOUT}s;")
    assert result.data["timed_out"]
    assert _gone(marker), "the tests' child survived the timeout"


def test_detached_process_dies_with_the_jail(tmp_path: Path) -> None:
    marker = f"daemon-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path,
        {
            "test_daemon.py": f"""
        import subprocess, sys, time

        def test_daemonises_then_hangs():
            {_sleeper(marker, detach=True)}
            time.sleep(120)
        """
        },
    )
    result = run(suite, "fixtures/test_daemon.py", "x", task_timeout=HANG_TIMEOUT)
    assert (result.passed, result.error) == (False, None)
    assert "process tree killed (its whole jail)" in result.details
    assert _gone(marker), "a setsid() child survived the timeout"


def test_unjailed_timeout_message_claims_only_the_group_kill(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path, {"test_hang.py": "import time\n\ndef test_h():\n    time.sleep(60)\n"}
    )
    result = run_pytest(suite / "fixtures" / "test_hang.py", Work("x"), 1, jail="none")
    assert (result.passed, result.error, result.data["isolation"]) == (False, None, "none")
    assert "pytest's process group killed" in result.details
    assert "may survive" in result.details and "process tree killed" not in result.details


@pytest.mark.parametrize("detach", [False, True])
def test_background_children_do_not_outlive_a_passing_run(tmp_path: Path, detach: bool) -> None:
    marker = f"bg-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path,
        {
            "test_bg.py": f"""
        import subprocess, sys

        def test_spawns():
            {_sleeper(marker, detach=detach)}
        """
        },
    )
    started = time.monotonic()
    result = run(suite, "fixtures/test_bg.py", "x", task_timeout=60)
    assert result.passed
    assert time.monotonic() - started < 90  # it did not wait for the child's 120 s sleep
    assert _gone(marker)


# A test that runs the output: every way the output can end, hang or fool pytest.
EXEC_OUTPUT = """
import os

def test_runs_the_output():
    exec(open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read(), {})

def test_something_else():
    assert True
"""


@pytest.mark.parametrize(
    "output, reason",
    [
        ("import os\nos._exit(0)", "pytest died before finishing its run (exit 0)"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "killed by SIGKILL"),
        (
            "import pytest\npytest.exit('forged', returncode=0)",
            "interrupted (Exit: forged, exit 0)",
        ),
        (
            "import pytest\npytest.exit('usage?', returncode=4)",
            "interrupted (Exit: usage?, exit 4)",
        ),
        ("import pytest\npytest.exit('internal?', returncode=3)", "interrupted (Exit: internal?"),
        ("raise KeyboardInterrupt", "pytest was interrupted (KeyboardInterrupt"),
        ("import pytest\npytest.skip('not today')", "1 of 2 test(s) skipped or xfailed"),
        ("import sys\nsys.exit(0)", "1 of 2 test(s) failed or errored"),
    ],
)
def test_whatever_the_output_does_to_pytest_is_a_failure(
    tmp_path: Path, output: str, reason: str
) -> None:
    suite = make_suite(tmp_path, {"test_exec.py": EXEC_OUTPUT})
    result = run(suite, "fixtures/test_exec.py", output)
    assert (result.passed, result.error) == (False, None), result.details
    assert reason in result.details
    assert result.score <= 0.5
    assert run(suite, "fixtures/test_exec.py", "x = 1").passed


@pytest.mark.parametrize(
    "output, reason",
    [
        ("import sys\nsys.exit(0)", "pytest hit an internal error (exit 3): SystemExit: 0"),
        (
            "import pytest\npytest.exit('bye', returncode=0)",
            "collection error in fixtures/test_mod.py",
        ),
        (
            "import pytest\npytest.skip('later', allow_module_level=True)",
            "skipped: the test module was skipped",
        ),
    ],
)
def test_output_run_at_import_time_cannot_excuse_or_forge(
    tmp_path: Path, output: str, reason: str
) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_mod.py": """
        import os
        exec(open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read(), {})

        def test_it():
            pass
        """
        },
    )
    result = run(suite, "fixtures/test_mod.py", output)
    assert (result.passed, result.error) == (False, None), result.details
    assert reason in result.details


def test_module_level_skip_is_reported_as_skipped(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_modskip.py": """
        import pytest
        pytest.skip("needs a GPU", allow_module_level=True)

        def test_never():
            pass
        """
        },
    )
    result = run(suite, "fixtures/test_modskip.py", "x")
    assert (result.passed, result.error) == (False, None)
    assert "skipped" in result.details and "needs a GPU" in result.details
    assert "defines no tests" not in result.details


def test_a_skip_among_passes_fails_the_judgement(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_some.py": """
        import pytest

        def test_ok():
            pass

        @pytest.mark.skip(reason="flaky")
        def test_skipped():
            pass
        """
        },
    )
    result = run(suite, "fixtures/test_some.py", "x")
    assert (result.passed, result.score, result.error) == (False, 0.5, None)
    assert "every collected test must pass" in result.details and "flaky" in result.details


def test_a_broken_conftest_is_a_judge_error_not_the_outputs_fault(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path, {"conftest.py": "raise RuntimeError('suite bug')\n", "test_out.py": PASSING}
    )
    result = run(suite, "fixtures/test_out.py", "POWERFUL")
    assert result.error is not None and "could not start a session" in result.error
    assert "suite bug" in result.error


def test_fixtures_are_read_only_and_state_does_not_leak_between_judgements(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "counter.txt": "0",
            "helper.py": "VALUE = 1\n",
            "test_tamper.py": """
            import os, pathlib
            import pytest
            from helper import VALUE

            HERE = pathlib.Path(__file__).parent

            def test_tampers_with_its_folder():
                assert (HERE / "counter.txt").read_text() == "0" and VALUE == 1
                for name, text in [("counter.txt", "1"), ("helper.py", "VALUE = 2\\n"),
                                   ("conftest.py", "raise SystemExit('planted')\\n"),
                                   ("pytest.ini", "[pytest]\\naddopts = --co\\n"),
                                   ("test_tamper.py", "def test_forged():\\n    pass\\n")]:
                    with pytest.raises(OSError):
                        (HERE / name).write_text(text)
                # the working folder and /tmp are writable, and start empty every time
                assert not os.path.exists("scratch.txt")
                pathlib.Path("scratch.txt").write_text("x")
                assert not os.path.exists("/tmp/mark")
                pathlib.Path("/tmp/mark").write_text("x")
            """,
        },
    )
    before = {p.name: p.read_bytes() for p in (suite / "fixtures").iterdir()}
    for _ in range(2):
        result = run(suite, "fixtures/test_tamper.py", "x")
        assert (result.passed, result.error) == (True, None), result.details
    assert {p.name: p.read_bytes() for p in (suite / "fixtures").iterdir()} == before


def test_the_copy_follows_symlinks_only_to_files_inside_fixtures(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "data.txt": "inside",
            "test_links.py": """
        import pathlib

        HERE = pathlib.Path(__file__).parent

        def test_links():
            assert (HERE / "alias.txt").read_text() == "inside"
            assert not (HERE / "outside.txt").exists() and not (HERE / "up").exists()
        """,
        },
    )
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(suite / "fixtures" / "data.txt", suite / "fixtures" / "alias.txt")
    os.symlink(tmp_path / "secret.txt", suite / "fixtures" / "outside.txt")
    os.symlink(tmp_path, suite / "fixtures" / "up")  # a folder link could also loop
    result = run(suite, "fixtures/test_links.py", "x")
    assert (result.passed, result.error) == (True, None), result.details


def test_config_files_in_fixtures_are_not_ours_and_are_ignored(tmp_path: Path) -> None:
    breaking = "[pytest]\naddopts = --co -p no:python\n"
    suite = make_suite(
        tmp_path,
        {
            "test_out.py": PASSING,
            "pytest.ini": breaking,
            "tox.ini": breaking,
            "setup.cfg": "[tool:pytest]\naddopts = --co\n",
            "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '--co'\n",
        },
    )
    result = run(suite, "fixtures/test_out.py", "POWERFUL")
    assert (result.passed, result.details) == (True, "2 test(s) passed")


SECRET = "sk-ant-harness-secret-" + "4242"
LEAK_PROBE = f"""
import glob, os, re

def test_no_visible_process_holds_the_key():
    seen = {{}}
    for path in [f"/proc/{{os.getppid()}}/environ", *glob.glob("/proc/*/environ")]:
        try:
            with open(path, "rb") as handle:
                seen[path] = handle.read()
        except OSError:
            pass
    assert "/proc/self/environ" in seen  # the probe can read at all
    assert [path for path, env in seen.items() if {SECRET.encode()!r} in env] == []
    # No capabilities, so no unmounting the namespace's /proc to uncover the host's.
    with open("/proc/self/status", encoding="utf-8") as handle:
        assert int(re.search(r"CapEff:\\s*(\\w+)", handle.read()).group(1), 16) == 0
"""


@needs_jail
def test_tests_cannot_read_the_harness_key_through_proc(tmp_path: Path) -> None:
    """The harness process holds ANTHROPIC_API_KEY in its environment from its start (as when a
    user exports it), so /proc/<harness>/environ has it; the tests must not see that file."""
    suite = make_suite(tmp_path, {"test_leak.py": LEAK_PROBE})
    harness = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from skill_eval.judges import JudgeContext, build_judge, run_judge\n"
        "from skill_eval.core.model import Task\n"
        "from skill_eval.core.work import Work\n"
        "config = {'type': 'pytest', 'test_file': 'fixtures/test_leak.py'}\n"
        "result = run_judge(build_judge(config), Task(id='t', prompt='p', judge=config),"
        " Work('x'), JudgeContext(suite_dir=Path(sys.argv[1])))\n"
        "print(json.dumps(result.to_dict()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", harness, str(suite)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={
            **os.environ,
            "ANTHROPIC_API_KEY": SECRET,
            "PYTHONPATH": str(Path(skill_eval.__file__).parent.parent),
        },
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["error"] is None
    assert result["passed"], result["details"]
    assert result["data"]["isolation"] == "bubblewrap"


@pytest.mark.parametrize(
    "code, summary, passed, error, text",
    [
        (1, None, False, True, "could not start a session (exit 1)"),
        (
            4,
            {"phase": "finished", "collected": 0, "exitstatus": 4},
            False,
            True,
            "rejected the judge's invocation",
        ),
        (4, {"phase": "session"}, False, False, "died before finishing its run (exit 4)"),
        (-9, {"phase": "session"}, False, False, "killed by SIGKILL"),
        (
            0,
            {
                "phase": "finished",
                "collected": 2,
                "passed": 2,
                "exitstatus": 0,
                "interrupted": True,
                "interrupt_reason": "Exit: x",
            },
            False,
            False,
            "interrupted",
        ),
        (
            0,
            {"phase": "finished", "collected": 2, "passed": 2, "exitstatus": 1},
            False,
            False,
            "every test passed but",
        ),
        (
            1,
            {"phase": "finished", "collected": 2, "passed": 2, "exitstatus": 0},
            False,
            False,
            "every test passed but pytest reported exit 1",
        ),
        (
            0,
            {"phase": "finished", "collected": 2, "passed": 1, "exitstatus": 0},
            False,
            False,
            "1 of 2 test(s) skipped",
        ),
        (
            3,
            {
                "phase": "finished",
                "collected": 1,
                "passed": 1,
                "exitstatus": 3,
                "internal_error": "boom",
            },
            False,
            False,
            "internal error (exit 3): boom",
        ),
        (
            5,
            {"phase": "finished", "collected": 0, "exitstatus": 5},
            False,
            False,
            "no tests collected",
        ),
        (
            0,
            {"phase": "finished", "collected": 2, "passed": 2, "exitstatus": 0},
            True,
            False,
            "2 test(s) passed",
        ),
    ],
)
def test_verdict_table(
    code: int, summary: dict[str, Any] | None, passed: bool, error: bool, text: str
) -> None:
    result = verdict(code, summary, "log tail", {"isolation": "none"})
    assert (result.passed, result.error is not None) == (passed, error)
    assert text in result.details


def test_jail_exit_codes_read_as_signals() -> None:
    isolated = verdict(137, {"phase": "session"}, "", {"isolation": "bubblewrap", "isolated": True})
    assert "killed by SIGKILL" in isolated.details
    assert "exit 137" in verdict(137, {"phase": "session"}, "", {"isolation": "none"}).details


def write_suite(suite: Path, test_file: str) -> Path:
    tasks = [
        {"id": "ok", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}},
        {"id": "evil", "prompt": "p", "judge": {"type": "pytest", "test_file": test_file}},
    ]
    path = suite / "task_suite.yaml"
    path.write_text(yaml.safe_dump({"skill_id": "s", "version": "1.0", "tasks": tasks}))
    return path


@pytest.mark.parametrize(
    "test_file, message",
    [
        ("fixtures/../fixtures_evil/test_x.py", "must stay inside fixtures/"),
        ("fixtures/../../outside/test_x.py", "must stay inside fixtures/"),
        ("fixtures/linked/test_x.py", "must stay inside fixtures/"),
        ("fixtures/test_link.py", "must stay inside fixtures/"),
        ("{abs}", "not absolute"),
        ("fixtures_evil/test_x.py", "must start with fixtures/"),
        ("fixtures/test_missing.py", "file not found"),
    ],
)
def test_fixture_escapes_are_rejected_at_load_time(
    tmp_path: Path, test_file: str, message: str
) -> None:
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


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"timeout": 0}, "must be a number of seconds > 0"),
        ({"timeout": "5"}, "must be a number of seconds > 0"),
        ({"test_fle": "x"}, "did you mean 'test_file'"),
    ],
)
def test_config_problems(tmp_path: Path, extra: dict[str, object], message: str) -> None:
    suite = make_suite(tmp_path, {"test_ok.py": PASSING})
    config = {"type": "pytest", "test_file": "fixtures/test_ok.py", **extra}
    problems = validate_judge_config(config, suite)
    assert any(message in m for _, m in problems), problems
