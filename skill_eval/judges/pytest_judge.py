"""`pytest`: run a suite's test file against the model output in a fresh, sandboxed process.

The test reads the output from the file named by `AI_OUTPUT_FILE`. Each judgement copies the
suite's `fixtures/` into its own temp dir and runs `python -m pytest` there: plugin autoload
off, no cache, no config but ours, an environment holding no keys or tokens, and on Linux a
fresh user+PID namespace that hides the harness's processes and dies whole on timeout.
The harness's own plugin (`pytest_plugin`) reports what ran; the verdict cross-checks it with
the exit code. Anything the tested code causes is a failure; only "could not judge" is an error.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ..model import JudgeResult, Task
from ..paths import inside
from ..work import Work
from .base import JudgeContext, JudgeSpec
from .fixtures import FIXTURES_DIR, fixture_problem, resolve_fixture
from .pytest_channel import CHANNEL_ENV, Channel
from .pytest_sandbox import (
    Limits,
    cancel_all,
    inside_path,
    judgement_dir,
    namespace_prefix,
    remove_dir,
    run_sandboxed,
    sandbox_argv,
    tail_of,
)
from .work_judges import readonly_copy, writable

DEFAULT_LIMITS = Limits()
__all__ = ["cancel_all", "namespace_prefix", "run_pytest", "sandbox_env", "tail_of", "verdict"]

# Never handed to the test process, whatever allow-list a future change adds.
_SECRET = re.compile(r"^ANTHROPIC_|_KEY$|_TOKEN$|_SECRET$|^CLAUDE_|PASSWORD", re.IGNORECASE)
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
MAX_DETAILS = 2000
# Built-in plugins a judgement never uses (CLI-only features); not loading them saves ~5%.
_UNUSED_PLUGINS = ("doctest", "pastebin", "setuponly", "setupplan", "stepwise", "faulthandler",
                   "debugging", "junitxml")
# The harness plugin runs as a top-level module copied into each judgement's temp dir
# (importing `skill_eval.judges.pytest_plugin` would drag in the judges package, ~150 ms).
PLUGIN_MODULE = "skill_eval_pytest_plugin"
_PLUGIN_SOURCE = Path(__file__).with_name("pytest_plugin.py")
_CACHES = {"__pycache__", ".pytest_cache"}

Isolation = Literal["pid-namespace", "none"]


def sandbox_env(tmp: Path, output_file: Path, base: Mapping[str, str] | None = None) \
        -> dict[str, str]:
    """The environment the tests see: what Python needs and nothing secret."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in _PASSED_THROUGH if k in source}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update({
        "HOME": str(tmp),
        "TMPDIR": str(tmp),
        "AI_OUTPUT_FILE": str(output_file),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    })
    return {k: v for k, v in env.items() if not _SECRET.search(k)}


@functools.cache
def _shield_harness() -> bool:
    """Without a PID namespace the tests can see this process in /proc. Non-dumpable, its
    environ and memory are closed to a test running as the same non-root user (not to root)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return int(ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)) == 0  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        return False


def copy_fixtures(source: Path, dest: Path) -> None:
    """Copy the suite's fixtures/ so a test run cannot change them for later judgements.
    Symlinks are followed only to files inside fixtures/; caches are left behind."""
    root = source.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(names) & _CACHES
        for name in names:
            path = Path(folder, name)
            if path.is_symlink() and (path.is_dir() or not inside(root, path)):
                skipped.add(name)
        return skipped

    shutil.copytree(root, dest, symlinks=False, ignore=ignore)


def pytest_command(test_file: Path, work: Path, ini: Path, conftest: bool) -> list[str]:
    """argv of one judgement: our empty ini instead of any config found on disk, the temp dir
    as rootdir, conftest.py files only from the copied fixtures/ (none at all without one)."""
    return [
        sys.executable, "-B", "-m", "pytest", str(test_file),
        "-p", PLUGIN_MODULE, "-q", "-p", "no:cacheprovider", "--tb=short", "--no-header",
        "-c", str(ini), "--rootdir", str(work), "--confcutdir", str(work / FIXTURES_DIR),
        *(() if conftest else ("--noconftest",)),
        *(arg for name in _UNUSED_PLUGINS for arg in ("-p", f"no:{name}")),
    ]


def _trim(text: str) -> str:
    return text if len(text) <= MAX_DETAILS else text[:MAX_DETAILS - 15] + "\n... (trimmed)"


def exit_text(code: int, isolated: bool) -> str:
    """`exit 1`, `killed by SIGKILL`; under the namespace's sh a signal death reads 128+N."""
    signum = -code if code < 0 else (code - 128 if isolated and code > 128 else 0)
    try:
        return f"exit {code}" if not signum else f"killed by {signal.Signals(signum).name}"
    except ValueError:
        return f"exit {code}"


def _fail(details: str, data: dict[str, Any], score: float = 0.0) -> JudgeResult:
    return JudgeResult(passed=False, score=score, details=_trim(details), data=data)


def _lines(entries: list[Any], limit: int = 10) -> str:
    rows = [f"{e.get('name', '?')}: {e.get('message', '')}" if isinstance(e, dict) else str(e)
            for e in entries[:limit]]
    return "\n".join(rows)


def verdict(code: int, summary: Mapping[str, Any] | None, log: str,
            data: dict[str, Any]) -> JudgeResult:
    """Pure: the result of a pytest run from its exit code, the plugin's summary and the log's
    tail. Errors only when pytest never reached a session or rejected our own invocation;
    everything the tested code can cause is a failure."""
    isolated = data.get("isolation") == "pid-namespace"
    if summary is None:  # nothing of the suite's tests, let alone the output, has run
        return JudgeResult.failure(
            f"pytest could not start a session ({exit_text(code, isolated)}):\n{log}")
    if summary.get("forged"):  # whatever else happened, the run cannot be trusted
        why = "" if summary.get("phase") == "finished" else \
            "\n" + _unfinished(code, summary, log, data).details
        return _fail("the result channel received lines the harness plugin did not send: "
                     "the tested code tampered with it" + why, data)
    if summary.get("phase") != "finished":
        return _unfinished(code, summary, log, data)
    counts = {k: int(summary.get(k) or 0)
              for k in ("collected", "passed", "failed", "errors", "skipped", "xfailed")}
    data.update({"exit_code": code, "tests": counts["collected"], "passed": counts["passed"],
                 "failed": counts["failed"] + counts["errors"],
                 "skipped": counts["skipped"] + counts["xfailed"]})
    failures, skips = summary.get("failures") or [], summary.get("skips") or []
    if summary.get("interrupted"):
        return _fail(f"pytest was interrupted ({summary.get('interrupt_reason') or 'no reason'}"
                     f", {exit_text(code, isolated)}): the run did not complete\n"
                     + _lines(failures), data)
    if code == 4 and counts["collected"] == 0 and not counts["errors"]:
        return JudgeResult.failure(f"pytest rejected the judge's invocation (exit 4):\n{log}")
    if code == 3 or summary.get("internal_error"):
        return _fail(f"pytest hit an internal error ({exit_text(code, isolated)}): "
                     f"{summary.get('internal_error') or log}", data)
    total = counts["collected"]
    score = counts["passed"] / total if total else 0.0
    bad = counts["failed"] + counts["errors"]
    if code == 0 == summary.get("exitstatus") and total and counts["passed"] == total and not bad:
        return JudgeResult(passed=True, score=1.0, details=f"{total} test(s) passed", data=data)
    if bad:
        head = (f"collection error, pytest was interrupted ({exit_text(code, isolated)})"
                if not total else f"{bad} of {total} test(s) failed or errored")
        return _fail(head + ":\n" + _lines(failures), data, score)
    if counts["skipped"] and not total:
        return _fail("skipped: the test module was skipped, no test ran:\n" + _lines(skips),
                     data)
    if not total:
        return _fail(f"no tests collected: the test file defines no tests "
                     f"({exit_text(code, isolated)})", data)
    not_run = total - counts["passed"]
    if not_run and not counts["passed"]:
        return _fail(f"only skipped tests, none ran ({not_run} skipped or xfailed):\n"
                     + _lines(skips), data)
    if not_run:
        return _fail(f"{not_run} of {total} test(s) skipped or xfailed; every collected test "
                     f"must pass:\n" + _lines(skips), data, score)
    return _fail(f"every test passed but pytest reported {exit_text(code, isolated)}:\n{log}",
                 data, score)


def _unfinished(code: int, summary: Mapping[str, Any], log: str,
                data: dict[str, Any]) -> JudgeResult:
    """The process ended before pytest finished: the test running then fails, the tests that
    ended before keep their streamed outcomes, and the judgement fails."""
    isolated = data.get("isolation") == "pid-namespace"
    total, passed = int(summary.get("collected") or 0), int(summary.get("passed") or 0)
    running = summary.get("running") or ""
    data.update({"exit_code": code, "tests": total, "passed": passed,
                 "failed": int(summary.get("failed") or 0) + int(summary.get("errors") or 0)})
    where = f"; the process ended during {running}, which fails" if running else ""
    return _fail(f"pytest died before finishing its run ({exit_text(code, isolated)}){where}; "
                 f"the tested code ended it:\n{log}", data, passed / total if total else 0.0)


def run_pytest(test_file: Path, work: Work, timeout: float, fixtures: Path | None = None,
               *, isolate: bool = True, limits: Limits = DEFAULT_LIMITS) -> JudgeResult:
    """One sandboxed judgement of `work` (its text, written as output.txt) by `test_file`,
    which lies under `fixtures` (by default its parent). `isolate=False` skips the namespace
    even where it works. Never raises."""
    fixtures = (fixtures or test_file.parent).resolve()
    prefix = namespace_prefix() if isolate else ()
    isolation: Isolation = "pid-namespace" if prefix else "none"
    if not prefix:
        _shield_harness()
    tmp = judgement_dir()  # 0700, a fresh random name
    channel: Channel | None = None
    try:
        cwd, harness = tmp / "work", tmp / "harness"
        harness.mkdir()
        copy_fixtures(fixtures, cwd / FIXTURES_DIR)
        shutil.copyfile(_PLUGIN_SOURCE, harness / f"{PLUGIN_MODULE}.py")
        (harness / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (cwd / "output.txt").write_text(work.text, encoding="utf-8")
        copied = cwd / FIXTURES_DIR / test_file.resolve().relative_to(fixtures)
        conftest = any((cwd / FIXTURES_DIR).rglob("conftest.py"))
        seen = functools.partial(inside_path, tmp, isolated=bool(prefix))
        channel = Channel()
        env = {**sandbox_env(seen(cwd), seen(cwd / "output.txt")),
               "PYTHONPATH": str(seen(harness)), CHANNEL_ENV: str(channel.child_fd)}
        if (workspace := readonly_copy(work, tmp / "workspace")) is not None:
            env["AI_WORKSPACE"] = str(seen(workspace))  # agent tasks: the final workspace
        log = tmp / "pytest.log"  # outside the tests' cwd; the harness holds it open
        started = time.monotonic()
        argv = sandbox_argv(prefix, tmp, seen(cwd), pytest_command(
            seen(copied), seen(cwd), seen(harness / "pytest.ini"), conftest))
        code = run_sandboxed(argv, cwd, env, log, timeout, limits, (channel.child_fd,),
                             channel.start)
        channel.close()
        if code is None:
            return _fail(_timeout_message(timeout, isolation) + f"\n{tail_of(log)}",
                         {"isolation": isolation, "timed_out": True})
        data: dict[str, Any] = {"isolation": isolation,
                                "seconds": round(time.monotonic() - started, 3)}
        return verdict(code, channel.summary(), tail_of(log), data)
    except (OSError, ValueError) as exc:
        return JudgeResult.failure(f"cannot run pytest: {exc}")
    finally:
        if channel is not None:
            channel.close(0)
        if (tmp / "workspace").is_dir():
            writable(tmp / "workspace")  # the read-only copy, so that it can be removed
        remove_dir(tmp)


def _timeout_message(timeout: float, isolation: Isolation) -> str:
    if isolation == "pid-namespace":
        return f"timed out after {timeout:g}s; process tree killed (its whole PID namespace)"
    return (f"timed out after {timeout:g}s; pytest's process group killed (no PID namespace "
            f"here: processes that left the group with setsid() may survive)")


@functools.cache
def pytest_problem() -> str | None:
    """Why this interpreter cannot run the judge's `python -m pytest`, or None. Found with
    `find_spec`, not an import: validating a suite stays fast. Checked once per process."""
    if importlib.util.find_spec("pytest") is not None:
        return None
    return (f"pytest judges need pytest, which {sys.executable} cannot import "
            f"(skill-eval runs it with its own interpreter): "
            f"{sys.executable} -m pip install pytest")


def has_pytest_judge(config: Any) -> bool:
    """True when a judge config, through any nesting (all, any, weighted, composite), holds a
    `pytest` judge."""
    if isinstance(config, Mapping):
        return config.get("type") == "pytest" or any(map(has_pytest_judge, config.values()))
    if isinstance(config, list):
        return any(map(has_pytest_judge, config))
    return False


def preflight_pytest(tasks: Sequence[Task]) -> list[str]:
    """Before a run: one message when a task has a pytest judge and pytest cannot run here."""
    problem = pytest_problem()
    if problem is None or not any(has_pytest_judge(t.judge) for t in tasks):
        return []
    return [problem]


class PytestJudge:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.test_file = str(config["test_file"])
        self.timeout = config.get("timeout")
        defaults = DEFAULT_LIMITS
        self.limits = Limits(
            memory_mb=int(config.get("memory_mb", defaults.memory_mb)),
            file_size_mb=int(config.get("file_size_mb", defaults.file_size_mb)),
            processes=int(config.get("processes", defaults.processes)))

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        missing = pytest_problem()
        if missing is not None:  # permanent: every judgement of the run would hit it
            return JudgeResult.failure(missing)
        try:  # again at judge time: a symlink swapped after loading is still caught
            path = resolve_fixture(self.test_file, ctx.suite_dir)
        except ValueError as exc:  # permanent: the file will not come back on a retry
            return JudgeResult.failure(f"test_file {exc}")
        timeout = float(self.timeout if self.timeout is not None else task.timeout_seconds)
        fixtures = (ctx.suite_dir / FIXTURES_DIR).resolve()
        return run_pytest(path, work, timeout, fixtures, limits=self.limits)


def _check(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    problem = fixture_problem(config["test_file"], suite_dir)
    return [("test_file", problem)] if problem else []


PYTEST_SPEC = JudgeSpec(
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
            "memory_mb": {"type": "integer", "minimum": 64,
                          "errorMessage": "must be a whole number of MiB >= 64"},
            "file_size_mb": {"type": "integer", "minimum": 1,
                             "errorMessage": "must be a whole number of MiB >= 1"},
            "processes": {"type": "integer", "minimum": 1,
                          "errorMessage": "must be a whole number >= 1"},
        },
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    },
    build=PytestJudge,
    check=_check,
)
