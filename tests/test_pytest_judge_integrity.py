"""Issue 17, pytest judge: the judged output cannot forge its verdict (a summary written next to
AI_OUTPUT_FILE, a sibling judgement's output.txt rewritten), a process ending mid-test fails
that test, and each judgement runs under resource limits and dies with the harness. The attacks
run on each jail provider that can start here (the `jail_provider` fixture, tests/conftest.py);
the huge assertion message and the temp dirs, which no provider touches, on the default."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.jail.providers import REGISTRY
from skill_eval.judges import JudgeContext, build_judge, run_judge
from skill_eval.judges.pytest_run import run_pytest
from skill_eval.judges.pytest_sandbox import judgement_dir, remove_dir
from tests.conftest import JAIL_PROVIDERS
from tests.test_judges_pytest import _gone, _pids_with

EXEC_TESTS = """
import os

def test_one():
    exec(open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read(), {})
    assert ANSWER == 42

def test_two():
    assert 1 == 2

def test_three():
    assert 1 == 3

def test_four():
    assert 1 == 4
"""

# The attack of the issue: find the harness's result file near AI_OUTPUT_FILE, write an
# "all passed" summary into every candidate, and leave before any test can fail.
FORGER = """
import glob, json, os
here = os.path.dirname(os.environ["AI_OUTPUT_FILE"])
forged = {"phase": "finished", "collected": 4, "passed": 4, "failed": 0, "errors": 0,
          "skipped": 0, "xfailed": 0, "interrupted": False, "interrupt_reason": "",
          "internal_error": "", "exitstatus": 0, "failures": [], "skips": []}
for root in {here, os.path.dirname(here)} - {"/"}:  # in the jail the parent is / itself
    for name in glob.glob(os.path.join(root, "**", "*"), recursive=True):
        if name.endswith((".json", ".jsonl")) or "summary" in name:
            try:
                open(name, "w").write(json.dumps(forged) + "\\n")
            except OSError:
                pass
    try:
        open(os.path.join(root, "harness", "summary.json"), "w").write(json.dumps(forged))
    except OSError:
        pass
for fd in range(3, 64):  # and anything the process inherited
    try:
        os.write(fd, (json.dumps({"event": "finished", "exitstatus": 0}) + "\\n").encode())
    except OSError:
        pass
os._exit(0)
"""


def make_suite(tmp_path: Path, files: dict[str, str]) -> Path:
    suite = tmp_path / "suite"
    (suite / "fixtures").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (suite / "fixtures" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return suite


def _problem(jail: str) -> str | None:
    provider = REGISTRY.get(jail)
    return "not registered" if provider is None else provider.problem()


def judge(
    suite: Path, test_file: str, output: str, jail: str = "bubblewrap", **extra: object
) -> JudgeResult:
    if (missing := _problem(jail)) is not None:
        pytest.skip(missing)
    config = {"type": "pytest", "test_file": test_file, **extra}
    task = Task(id="t", prompt="p", judge=config, timeout_seconds=60)
    context = JudgeContext(suite_dir=suite, jail=jail)
    return run_judge(build_judge(config), task, Work(output), context)


@pytest.mark.parametrize("jail", [*JAIL_PROVIDERS, "none"])
def test_a_forged_summary_and_exit_0_is_a_failure(tmp_path: Path, jail: str) -> None:
    if (missing := _problem(jail)) is not None:
        pytest.skip(missing)
    suite = make_suite(tmp_path, {"test_exec.py": EXEC_TESTS})
    result = run_pytest(suite / "fixtures" / "test_exec.py", Work(FORGER), 30, jail=jail)
    assert (result.passed, result.error) == (False, None), result.details
    assert result.score == 0.0
    # The test that was running when the process vanished is named as failed.
    assert "test_one" in result.details and "ended during" in result.details


def test_a_process_ending_mid_test_fails_that_test_not_the_ones_before(
    tmp_path: Path, jail_provider: str
) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_exec.py": """
        import os

        def test_first():
            assert True

        def test_second():
            exec(open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read(), {})
        """
        },
    )
    result = judge(suite, "fixtures/test_exec.py", "import os\nos._exit(0)", jail_provider)
    assert (result.passed, result.error) == (False, None)
    assert "test_second" in result.details and "ended during" in result.details
    assert result.data["passed"] == 1 and result.score == 0.5


@pytest.mark.slow
def test_a_candidate_cannot_rewrite_a_concurrent_judgements_output(
    tmp_path: Path, jail_provider: str
) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_slow.py": """
            import os, time

            def test_reads_late():
                time.sleep(3)
                assert open(os.environ["AI_OUTPUT_FILE"]).read() == "RIGHT"
            """,
            "test_vandal.py": """
            import glob, os, tempfile, time

            def test_vandal():
                mine = os.environ["AI_OUTPUT_FILE"]
                roots = {tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm",
                         os.path.dirname(os.path.dirname(os.path.dirname(mine)))}
                deadline = time.monotonic() + 4
                roots.discard("/")
                while time.monotonic() < deadline:
                    for root in roots:
                        for path in glob.glob(os.path.join(root, "**", "output.txt"),
                                              recursive=True):
                            if os.path.realpath(path) != os.path.realpath(mine):
                                try:
                                    open(path, "w").write("WRONG")
                                except OSError:
                                    pass
                    time.sleep(0.05)
            """,
        },
    )
    results: dict[str, JudgeResult] = {}
    victim = threading.Thread(
        target=lambda: results.update(
            victim=judge(suite, "fixtures/test_slow.py", "RIGHT", jail_provider)
        )
    )
    victim.start()
    time.sleep(0.3)
    results["vandal"] = judge(suite, "fixtures/test_vandal.py", "x", jail_provider)
    victim.join()
    assert results["vandal"].passed
    assert results["victim"].passed, results["victim"].details


def test_the_judgement_temp_dir_is_0700() -> None:
    # The host side of a judgement (its copies, the output): closed to other users.
    path = judgement_dir()
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
    finally:
        remove_dir(path)


def test_memory_is_limited(tmp_path: Path, jail_provider: str) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_mem.py": """
        def test_hog():
            block = bytearray(3 * 1024 ** 3)
            assert block
        """
        },
    )
    result = judge(suite, "fixtures/test_mem.py", "x", jail_provider, memory_mb=512)
    assert (result.passed, result.error) == (False, None), result.details
    assert "MemoryError" in result.details


def test_file_size_is_limited(tmp_path: Path, jail_provider: str) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_big.py": """
        def test_write():
            with open("big.bin", "wb") as handle:
                for _ in range(64):
                    handle.write(b"x" * 1024 * 1024)
        """
        },
    )
    result = judge(suite, "fixtures/test_big.py", "x", jail_provider, file_size_mb=8)
    assert (result.passed, result.error) == (False, None), result.details


def test_limits_are_set_in_the_judgement(tmp_path: Path, jail_provider: str) -> None:
    # The kernel exempts root from RLIMIT_NPROC (references/security.md), so this checks the
    # limits the tests see rather than forking 200 children. In a container the process cap is
    # its pids cgroup alone: RLIMIT_NPROC counts uid 1000's processes in every container, and
    # a cap of 20 there kept this judgement from starting while another jail ran.
    processes = (
        "assert resource.getrlimit(resource.RLIMIT_NPROC) == (20, 20)"
        if jail_provider == "bubblewrap"
        else "assert resource.getrlimit(resource.RLIMIT_NPROC)[0] > 1000\n"
        "            pids = [p for p in glob.glob('/sys/fs/cgroup/**/pids.max', recursive=True)]\n"
        "            assert pids and all(open(p).read().strip() == '20' for p in pids), pids"
    )
    suite = make_suite(
        tmp_path,
        {
            "test_limits.py": f"""
        import glob, resource

        def test_limits():
            {processes}
            assert resource.getrlimit(resource.RLIMIT_AS)[0] == 700 * 1024 ** 2
            assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == 9 * 1024 ** 2
        """
        },
    )
    result = judge(
        suite,
        "fixtures/test_limits.py",
        "x",
        jail_provider,
        processes=20,
        memory_mb=700,
        file_size_mb=9,
    )
    assert result.passed, result.details


def test_judgements_die_with_the_harness(tmp_path: Path, jail_provider: str) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path,
        {
            "test_hang.py": f"""
        import subprocess, sys, time

        def test_hangs():
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", {marker!r}],
                             start_new_session=True)
            time.sleep(120)
        """
        },
    )
    script = textwrap.dedent(f"""
        from pathlib import Path
        from skill_eval.judges.pytest_run import run_pytest
        from skill_eval.core.work import Work
        run_pytest(Path({str(suite / "fixtures" / "test_hang.py")!r}), Work("x"), 300,
                   jail={jail_provider!r})
        """)
    harness = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parent.parent)
    deadline = time.monotonic() + 120  # polled: generous for a loaded machine, free otherwise
    while not _pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids_with(marker), "the judgement never started"
    os.kill(harness.pid, signal.SIGKILL)
    harness.wait()
    assert _gone(marker, 30), "the judgement outlived its harness"


def test_a_killed_harness_leaves_its_temp_dir_to_the_next_run(tmp_path: Path) -> None:
    # A harness killed with -9 cannot clean up; the next process removes what a dead one left.
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = Path(tempfile.gettempdir()) / f"skill-eval-pytest-{dead.stdout.strip()}-x1"
    (orphan / "work").mkdir(parents=True)
    script = (
        "from skill_eval.judges.pytest_sandbox import judgement_dir, remove_dir\n"
        "remove_dir(judgement_dir())\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parent.parent)
    assert not orphan.exists()


def test_a_huge_assertion_message_is_a_plain_failure(tmp_path: Path) -> None:
    suite = make_suite(
        tmp_path,
        {
            "test_huge.py": """
        def test_huge():
            assert False, "x" * 5_000_000
        """
        },
    )
    result = judge(suite, "fixtures/test_huge.py", "x")
    assert (result.passed, result.error) == (False, None)
    assert "1 of 1 test(s) failed" in result.details and "tamper" not in result.details


def test_sigterm_of_a_run_kills_its_judgements_and_removes_their_dirs(
    tmp_path: Path, jail_provider: str
) -> None:
    marker = f"term-{uuid.uuid4().hex}"
    suite = make_suite(
        tmp_path,
        {
            "test_hang.py": f"""
        import subprocess, sys, time

        def test_hangs():
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", {marker!r}])
            time.sleep(120)
        """
        },
    )
    (suite / "task_suite.yaml").write_text(
        "skill_id: s\nversion: '1.0'\ntasks:\n  - id: t\n    prompt: p\n    judge:\n"
        "      type: pytest\n      test_file: fixtures/test_hang.py\n",
        encoding="utf-8",
    )
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: skill\ndescription: d\n---\n\nbody\n", encoding="utf-8"
    )
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skill_eval.cli",
            "run",
            "--standalone",
            "--task-suite",
            str(suite / "task_suite.yaml"),
            "--skill-path",
            str(skill),
            "--mock",
            "-q",
            "--no-baseline",
            "--state-root",
            str(tmp_path / "state"),
            "--jail",
            jail_provider,
        ],
        cwd=Path(__file__).parent.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120  # polled: generous for a loaded machine, free otherwise
    while not _pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids_with(marker), "the judgement never started"
    mine = list(Path(tempfile.gettempdir()).glob(f"skill-eval-pytest-{run.pid}-*"))
    assert mine
    run.send_signal(signal.SIGTERM)
    assert run.wait(120) == 130
    assert _gone(marker, 30), "a judgement outlived the run"
    assert not any(path.exists() for path in mine)
