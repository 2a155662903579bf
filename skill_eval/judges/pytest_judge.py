"""`pytest`: run a suite's test file against the model output in a fresh, sandboxed process.

The test reads the output from the file named by `AI_OUTPUT_FILE`. Each judgement copies the
suite's `fixtures/` into its own temp dir and runs `python -m pytest` there: plugin autoload
off, no cache, no config but ours, an environment holding no keys or tokens, and on Linux a
fresh user+PID namespace that hides the harness's processes and dies whole on timeout.
The harness's own plugin (`pytest_plugin`) reports what ran; the verdict cross-checks it with
the exit code. Anything the tested code causes is a failure; only "could not judge" is an error.
"""

from __future__ import annotations

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

from ..core.bounded import FileTooLarge
from ..core.model import JudgeResult, Task
from ..core.paths import inside
from ..core.work import Work
from ..jail import Confinement, JailKind, Limits, Mount, process
from ..jail import bubblewrap as jail_bubblewrap
from .base import JudgeContext, JudgeSpec
from .fixtures import FIXTURES_DIR, fixture_problem, resolve_fixture
from .pytest_channel import CHANNEL_ENV, Channel
from .pytest_sandbox import cancel_all, judgement_dir, remove_dir
from .workspace_copy import readonly_copy, writable

# The writable folders are tmpfs (memory): a judgement gets 256 MiB of them.
DEFAULT_LIMITS = Limits(disk_mb=256)
__all__ = ["cancel_all", "run_pytest", "sandbox_env", "verdict"]

# Never handed to the test process, whatever allow-list a future change adds.
_SECRET = re.compile(r"^ANTHROPIC_|_KEY$|_TOKEN$|_SECRET$|^CLAUDE_|PASSWORD", re.IGNORECASE)
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
MAX_DETAILS = 2000
# Built-in plugins a judgement never uses (CLI-only features); not loading them saves ~5%.
_UNUSED_PLUGINS = (
    "doctest",
    "pastebin",
    "setuponly",
    "setupplan",
    "stepwise",
    "faulthandler",
    "debugging",
    "junitxml",
)
# The harness plugin runs as a top-level module copied into each judgement's temp dir
# (importing `skill_eval.judges.pytest_plugin` would drag in the judges package, ~150 ms).
PLUGIN_MODULE = "skill_eval_pytest_plugin"
_PLUGIN_SOURCE = Path(__file__).with_name("pytest_plugin.py")
_CACHES = {"__pycache__", ".pytest_cache"}

Isolation = Literal["bubblewrap", "none"]
# Where the judgement's files appear inside the jail.
JUDGE_DIR, HARNESS_DIR = "/judge", "/harness"


def sandbox_env(
    tmp: Path, output_file: Path, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment the tests see: what Python needs and nothing secret."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in _PASSED_THROUGH if k in source}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        {
            "HOME": str(tmp),
            "TMPDIR": str(tmp),
            "AI_OUTPUT_FILE": str(output_file),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    return {k: v for k, v in env.items() if not _SECRET.search(k)}


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
        sys.executable,
        "-B",
        "-m",
        "pytest",
        str(test_file),
        "-p",
        PLUGIN_MODULE,
        "-q",
        "-p",
        "no:cacheprovider",
        "--tb=short",
        "--no-header",
        "-c",
        str(ini),
        "--rootdir",
        str(work),
        "--confcutdir",
        str(work / FIXTURES_DIR),
        *(() if conftest else ("--noconftest",)),
        *(arg for name in _UNUSED_PLUGINS for arg in ("-p", f"no:{name}")),
    ]


def _trim(text: str) -> str:
    return text if len(text) <= MAX_DETAILS else text[: MAX_DETAILS - 15] + "\n... (trimmed)"


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
    rows = [
        f"{e.get('name', '?')}: {e.get('message', '')}" if isinstance(e, dict) else str(e)
        for e in entries[:limit]
    ]
    return "\n".join(rows)


def verdict(
    code: int, summary: Mapping[str, Any] | None, log: str, data: dict[str, Any]
) -> JudgeResult:
    """Pure: the result of a pytest run from its exit code, the plugin's summary and the log's
    tail. Errors only when pytest never reached a session or rejected our own invocation;
    everything the tested code can cause is a failure."""
    isolated = data.get("isolation") == "bubblewrap"
    if summary is None:  # nothing of the suite's tests, let alone the output, has run
        return JudgeResult.failure(
            f"pytest could not start a session ({exit_text(code, isolated)}):\n{log}"
        )
    if summary.get("forged"):  # whatever else happened, the run cannot be trusted
        why = (
            ""
            if summary.get("phase") == "finished"
            else "\n" + _unfinished(code, summary, log, data).details
        )
        return _fail(
            "the result channel received lines the harness plugin did not send: "
            "the tested code tampered with it" + why,
            data,
        )
    if summary.get("phase") != "finished":
        return _unfinished(code, summary, log, data)
    counts = {
        k: int(summary.get(k) or 0)
        for k in ("collected", "passed", "failed", "errors", "skipped", "xfailed")
    }
    data.update(
        {
            "exit_code": code,
            "tests": counts["collected"],
            "passed": counts["passed"],
            "failed": counts["failed"] + counts["errors"],
            "skipped": counts["skipped"] + counts["xfailed"],
        }
    )
    failures, skips = summary.get("failures") or [], summary.get("skips") or []
    if summary.get("interrupted"):
        return _fail(
            f"pytest was interrupted ({summary.get('interrupt_reason') or 'no reason'}"
            f", {exit_text(code, isolated)}): the run did not complete\n" + _lines(failures),
            data,
        )
    if code == 4 and counts["collected"] == 0 and not counts["errors"]:
        return JudgeResult.failure(f"pytest rejected the judge's invocation (exit 4):\n{log}")
    if code == 3 or summary.get("internal_error"):
        return _fail(
            f"pytest hit an internal error ({exit_text(code, isolated)}): "
            f"{summary.get('internal_error') or log}",
            data,
        )
    total = counts["collected"]
    score = counts["passed"] / total if total else 0.0
    bad = counts["failed"] + counts["errors"]
    if code == 0 == summary.get("exitstatus") and total and counts["passed"] == total and not bad:
        return JudgeResult(passed=True, score=1.0, details=f"{total} test(s) passed", data=data)
    if bad:
        head = (
            f"collection error, pytest was interrupted ({exit_text(code, isolated)})"
            if not total
            else f"{bad} of {total} test(s) failed or errored"
        )
        return _fail(head + ":\n" + _lines(failures), data, score)
    if counts["skipped"] and not total:
        return _fail("skipped: the test module was skipped, no test ran:\n" + _lines(skips), data)
    if not total:
        return _fail(
            f"no tests collected: the test file defines no tests ({exit_text(code, isolated)})",
            data,
        )
    not_run = total - counts["passed"]
    if not_run and not counts["passed"]:
        return _fail(
            f"only skipped tests, none ran ({not_run} skipped or xfailed):\n" + _lines(skips), data
        )
    if not_run:
        return _fail(
            f"{not_run} of {total} test(s) skipped or xfailed; every collected test "
            f"must pass:\n" + _lines(skips),
            data,
            score,
        )
    return _fail(
        f"every test passed but pytest reported {exit_text(code, isolated)}:\n{log}", data, score
    )


def _unfinished(
    code: int, summary: Mapping[str, Any], log: str, data: dict[str, Any]
) -> JudgeResult:
    """The process ended before pytest finished: the test running then fails, the tests that
    ended before keep their streamed outcomes, and the judgement fails."""
    isolated = data.get("isolation") == "bubblewrap"
    total, passed = int(summary.get("collected") or 0), int(summary.get("passed") or 0)
    running = summary.get("running") or ""
    data.update(
        {
            "exit_code": code,
            "tests": total,
            "passed": passed,
            "failed": int(summary.get("failed") or 0) + int(summary.get("errors") or 0),
        }
    )
    where = f"; the process ended during {running}, which fails" if running else ""
    return _fail(
        f"pytest died before finishing its run ({exit_text(code, isolated)}){where}; "
        f"the tested code ended it:\n{log}",
        data,
        passed / total if total else 0.0,
    )


def run_pytest(
    test_file: Path,
    work: Work,
    timeout: float,
    fixtures: Path | None = None,
    *,
    jail: JailKind = "bubblewrap",
    limits: Limits = DEFAULT_LIMITS,
) -> JudgeResult:
    """One jailed judgement of `work` (its text, written as output.txt) by `test_file`, which
    lies under `fixtures` (by default its parent). The tests see read-only copies of the
    fixtures, the output and the final workspace, a size-capped writable working folder and
    /tmp, no network, no secret and nothing else of this machine. `jail="none"` (the user's
    --no-jail) runs them unconfined. Never raises."""
    fixtures = (fixtures or test_file.parent).resolve()
    if jail != "none" and (missing := jail_bubblewrap.problem()) is not None:
        return JudgeResult.failure(f"cannot jail the pytest judgement: {missing}")
    tmp = judgement_dir()  # 0700, a fresh random name
    channel: Channel | None = None
    try:
        work_dir, harness = tmp / "work", tmp / "harness"
        harness.mkdir()
        copy_fixtures(fixtures, work_dir / FIXTURES_DIR)
        shutil.copyfile(_PLUGIN_SOURCE, harness / f"{PLUGIN_MODULE}.py")
        (harness / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (work_dir / "output.txt").write_text(work.text, encoding="utf-8")
        relative = test_file.resolve().relative_to(fixtures)
        conftest = any((work_dir / FIXTURES_DIR).rglob("conftest.py"))
        workspace = readonly_copy(work, tmp / "workspace")
        jailed = jail != "none"
        cwd = Path(JUDGE_DIR) if jailed else work_dir
        seen_harness = Path(HARNESS_DIR) if jailed else harness
        channel = Channel()
        env = {
            **sandbox_env(cwd, cwd / "output.txt"),
            "PYTHONPATH": str(seen_harness),
            CHANNEL_ENV: str(channel.child_fd),
        }
        if jailed:
            env["TMPDIR"] = "/tmp"
        mounts = [
            Mount("tmpfs", JUDGE_DIR),
            Mount("ro", f"{JUDGE_DIR}/{FIXTURES_DIR}", work_dir / FIXTURES_DIR),
            Mount("ro", f"{JUDGE_DIR}/output.txt", work_dir / "output.txt"),
            Mount("ro", HARNESS_DIR, harness),
        ]
        if workspace is not None:  # agent tasks: the final workspace
            env["AI_WORKSPACE"] = str(cwd / "workspace")
            mounts.append(Mount("ro", f"{JUDGE_DIR}/workspace", workspace))
        argv = pytest_command(
            cwd / FIXTURES_DIR / relative, cwd, seen_harness / "pytest.ini", conftest
        )
        confinement = Confinement(tuple(argv), str(cwd), env, tuple(mounts), limits=limits)
        isolation: Isolation = "bubblewrap" if jailed else "none"
        started = time.monotonic()
        finished = process.run(jail, confinement, timeout, (channel.child_fd,), channel.start)
        channel.close()
        log = _tail_lines(finished.tail)
        if finished.code is None:
            return _fail(
                _timeout_message(timeout, isolation) + f"\n{log}",
                {"isolation": isolation, "timed_out": True},
            )
        data: dict[str, Any] = {
            "isolation": isolation,
            "seconds": round(time.monotonic() - started, 3),
        }
        return verdict(finished.code, channel.summary(), log, data)
    except FileTooLarge as exc:  # the agent's workspace, over what is copied: its doing
        return _fail(str(exc), {"over_limit": True})
    except (OSError, ValueError) as exc:
        return JudgeResult.failure(f"cannot run pytest: {exc}")
    finally:
        if channel is not None:
            channel.close(0)
        if (tmp / "workspace").is_dir():
            writable(tmp / "workspace")  # the read-only copy, so that it can be removed
        remove_dir(tmp)


def _tail_lines(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _timeout_message(timeout: float, isolation: Isolation) -> str:
    if isolation == "bubblewrap":
        return f"timed out after {timeout:g}s; process tree killed (its whole jail)"
    return (
        f"timed out after {timeout:g}s; pytest's process group killed (no jail: "
        f"--no-jail; processes that left the group with setsid() may survive)"
    )


@functools.cache
def pytest_problem() -> str | None:
    """Why this interpreter cannot run the judge's `python -m pytest`, or None. Found with
    `find_spec`, not an import: validating a suite stays fast. Checked once per process."""
    if importlib.util.find_spec("pytest") is not None:
        return None
    return (
        f"pytest judges need pytest, which {sys.executable} cannot import "
        f"(skill-eval runs it with its own interpreter): "
        f"{sys.executable} -m pip install pytest"
    )


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
            processes=int(config.get("processes", defaults.processes)),
            disk_mb=int(config.get("disk_mb", defaults.disk_mb)),
        )

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
        return run_pytest(path, work, timeout, fixtures, jail=ctx.jail, limits=self.limits)


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
            "test_file": {
                "type": "string",
                "minLength": 1,
                "errorMessage": "must be a path starting with fixtures/",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "errorMessage": "must be a number of seconds > 0",
            },
            "memory_mb": {
                "type": "integer",
                "minimum": 64,
                "errorMessage": "must be a whole number of MiB >= 64",
            },
            "file_size_mb": {
                "type": "integer",
                "minimum": 1,
                "errorMessage": "must be a whole number of MiB >= 1",
            },
            "processes": {
                "type": "integer",
                "minimum": 1,
                "errorMessage": "must be a whole number >= 1",
            },
            "disk_mb": {
                "type": "integer",
                "minimum": 1,
                "errorMessage": "must be a whole number of MiB >= 1",
            },
        },
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    },
    build=PytestJudge,
    deterministic=True,
    check=_check,
)
