"""`pytest`: run a suite's test file against the model output in a fresh, sandboxed process.

The test reads the output from the file named by `AI_OUTPUT_FILE`. Each judgement gets its own
`python -m pytest` process with plugin autoload off, no cache provider, a temporary working
directory and HOME, and an environment holding no API keys or tokens. A timeout kills the
whole process group. Passed iff pytest exits 0 having run at least one test.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import JudgeResult, Task
from .base import JudgeContext, JudgeSpec, register_judge
from .fixtures import FIXTURES_DIR, fixture_problem, resolve_fixture

# Never handed to the test process, whatever allow-list a future change adds.
_SECRET = re.compile(r"^ANTHROPIC_|_KEY$|_TOKEN$|_SECRET$|^CLAUDE_|PASSWORD", re.IGNORECASE)
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
MAX_DETAILS = 2000
# Built-in plugins a judgement never uses (CLI-only features); not loading them saves ~5%.
_UNUSED_PLUGINS = ("doctest", "pastebin", "setuponly", "setupplan", "stepwise", "faulthandler",
                   "debugging")


def sandbox_env(tmp: Path, output_file: Path, base: Mapping[str, str] | None = None) \
        -> dict[str, str]:
    """The whole environment of a pytest judgement: what Python needs and nothing secret."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in _PASSED_THROUGH if k in source}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update({
        "HOME": str(tmp),
        "TMPDIR": str(tmp),
        "AI_OUTPUT_FILE": str(output_file),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONDONTWRITEBYTECODE": "1",  # never write __pycache__ into the suite's fixtures
        "PYTHONIOENCODING": "utf-8",
    })
    return {k: v for k, v in env.items() if not _SECRET.search(k)}


def pytest_command(test_file: Path, fixtures: Path, tmp: Path) -> list[str]:
    """argv of one judgement. The suite's fixtures/ dir is rootdir and conftest boundary; an
    empty ini in the temp dir keeps any pytest config above the suite out of the run."""
    ini = tmp / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")
    return [
        sys.executable, "-B", "-m", "pytest", str(test_file),
        "-q", "-p", "no:cacheprovider", "--tb=short", "--no-header",
        "-c", str(ini), "--rootdir", str(fixtures), "--confcutdir", str(fixtures),
        f"--junitxml={tmp / 'report.xml'}", "-o", "junit_logging=no",
        *(arg for name in _UNUSED_PLUGINS for arg in ("-p", f"no:{name}")),
    ]


@dataclass(frozen=True)
class Report:
    """What a junit report says: counts and the failing lines worth showing an author."""

    tests: int
    skipped: int
    failing: list[str]
    skip_reasons: list[str]

    @property
    def ran(self) -> int:
        return self.tests - self.skipped


def parse_junit(path: Path) -> Report | None:
    """Counts and failure lines from pytest's junit xml, or None when it is missing/invalid."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = skipped = 0
    failing: list[str] = []
    skip_reasons: list[str] = []
    for suite in suites:
        tests += int(suite.get("tests", 0))
        skipped += int(suite.get("skipped", 0))
        for case in suite.iter("testcase"):
            name = case.get("name", "?")
            for tag in ("failure", "error"):
                for node in case.findall(tag):
                    failing.append(f"{name}: {_failure_text(node)}")
            for node in case.findall("skipped"):
                skip_reasons.append(f"{name}: {node.get('message', '')}".strip())
    return Report(tests, skipped, failing, skip_reasons)


def _failure_text(node: ET.Element) -> str:
    """The assertion line(s): the failure message, or the `E ` lines of the traceback."""
    message = (node.get("message") or "").strip()
    if message and message != "collection failure":
        return message
    text = node.text or ""
    e_lines = [ln.strip()[1:].strip() for ln in text.splitlines() if ln.strip().startswith("E ")]
    return "\n".join(e_lines[-6:]) or message or text.strip()[-300:]


def _trim(text: str) -> str:
    return text if len(text) <= MAX_DETAILS else text[:MAX_DETAILS - 15] + "\n... (trimmed)"


def _tail(path: Path, n: int = 8) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_pytest(test_file: Path, output: str, timeout: float,
               fixtures: Path | None = None) -> JudgeResult:
    """One sandboxed judgement of `output` by `test_file` (under the `fixtures` dir, by
    default its parent); never raises."""
    fixtures = fixtures or test_file.parent
    tmp = Path(tempfile.mkdtemp(prefix="skill-eval-pytest-"))
    try:
        output_file = tmp / "output.txt"
        output_file.write_text(output, encoding="utf-8")
        log = tmp / "pytest.log"
        started = time.monotonic()
        with open(log, "wb") as sink:
            proc = subprocess.Popen(  # argv only: the output never meets a shell
                pytest_command(test_file, fixtures, tmp), cwd=tmp,
                env=sandbox_env(tmp, output_file),
                stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.wait()
                return JudgeResult.failure(
                    f"pytest judge timed out after {timeout:g}s; process tree killed")
            finally:
                _kill_group(proc)  # whatever the tests left running in the background
        seconds = round(time.monotonic() - started, 3)
        return _interpret(code, parse_junit(tmp / "report.xml"), log, seconds)
    except OSError as exc:
        return JudgeResult.failure(f"cannot run pytest: {exc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _interpret(code: int, report: Report | None, log: Path, seconds: float) -> JudgeResult:
    if report is None or code in (3, 4):
        return JudgeResult.failure(f"pytest could not run (exit {code}):\n{_tail(log)}")
    data: dict[str, Any] = {"exit_code": code, "tests": report.tests,
                            "skipped": report.skipped, "seconds": seconds}
    if code == 0 and report.ran >= 1:
        return JudgeResult(passed=True, score=1.0,
                           details=f"{report.ran} test(s) passed", data=data)
    if code == 0 and report.skipped:
        reasons = "\n".join(report.skip_reasons[:5])
        return JudgeResult(passed=False, score=0.0, data=data,
                           details=_trim(f"only skipped tests, none ran ({report.skipped} "
                                         f"skipped):\n{reasons}"))
    if code in (0, 5):
        return JudgeResult(passed=False, score=0.0, data=data,
                           details="no tests collected: the test file defines no tests")
    failing = report.failing or [_tail(log)]
    head = f"{len(report.failing)} of {report.tests} test(s) failed or errored"
    if code == 2:
        head = "pytest was interrupted (collection error)"
    ran = max(report.ran, 1)
    score = max(0.0, (report.ran - len(report.failing)) / ran) if code == 1 else 0.0
    return JudgeResult(passed=False, score=score, data=data,
                       details=_trim(head + ":\n" + "\n".join(failing)))


class PytestJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.test_file = str(config["test_file"])
        self.timeout = config.get("timeout")

    def judge(self, task: Task, output: str, ctx: JudgeContext) -> JudgeResult:
        try:  # again at judge time: a symlink swapped after loading is still caught
            path = resolve_fixture(self.test_file, ctx.suite_dir)
        except ValueError as exc:
            return JudgeResult.failure(f"test_file {exc}")
        timeout = float(self.timeout if self.timeout is not None else task.timeout_seconds)
        fixtures = (ctx.suite_dir / FIXTURES_DIR).resolve()
        return run_pytest(path, output, timeout, fixtures)


def _check(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    problem = fixture_problem(config["test_file"], suite_dir)
    return [("test_file", problem)] if problem else []


register_judge(JudgeSpec(
    type="pytest",
    summary="a pytest file under fixtures/ passes against the output (AI_OUTPUT_FILE)",
    schema={
        "type": "object",
        "required": ["type", "test_file"],
        "properties": {
            "type": {"const": "pytest"},
            "test_file": {"type": "string", "minLength": 1,
                          "errorMessage": "must be a path starting with fixtures/"},
            "timeout": {"type": "number", "exclusiveMinimum": 0,
                        "errorMessage": "must be a number of seconds > 0"},
        },
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    },
    build=PytestJudge,
    check=_check,
))
