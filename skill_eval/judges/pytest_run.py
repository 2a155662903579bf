"""One pytest judgement as a process: the suite's `fixtures/` copied into a fresh temp dir,
`python -m pytest` run there against the output (the file named by `AI_OUTPUT_FILE`), and its
result read by judges/pytest_verdict.py.

Plugin autoload off, no cache, no config but ours, an environment holding no keys or tokens,
and on Linux a jail (bubblewrap: a fresh user+PID namespace that hides the harness's processes
and dies whole on timeout). The harness's own plugin (`pytest_plugin`) reports what ran over
a channel only it holds (judges/pytest_channel.py).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.bounded import FileTooLarge
from ..core.model import JudgeResult
from ..core.paths import inside
from ..core.work import Work
from ..jail import Confinement, JailKind, JailUnavailable, Limits, Mount, process
from ..jail.providers import AUTO, isolated, resolve
from .fixtures import FIXTURES_DIR
from .pytest_channel import CHANNEL_ENV, Channel
from .pytest_sandbox import judgement_dir, remove_dir
from .pytest_verdict import failed, verdict
from .workspace_copy import readonly_copy, writable

# The writable folders are tmpfs (memory): a judgement gets 256 MiB of them.
DEFAULT_LIMITS = Limits(disk_mb=256)
__all__ = ["DEFAULT_LIMITS", "run_pytest", "sandbox_env"]

# Never handed to the test process, whatever allow-list a future change adds.
_SECRET = re.compile(r"^ANTHROPIC_|_KEY$|_TOKEN$|_SECRET$|^CLAUDE_|PASSWORD", re.IGNORECASE)
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
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

Isolation = str  # the jail provider's name (`none`: no jail)
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


def pytest_command(
    test_file: Path, work: Path, ini: Path, conftest: bool, python: str = sys.executable
) -> list[str]:
    """argv of one judgement: our empty ini instead of any config found on disk, the temp dir
    as rootdir, conftest.py files only from the copied fixtures/ (none at all without one)."""
    return [
        python,
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


def run_pytest(
    test_file: Path,
    work: Work,
    timeout: float,
    fixtures: Path | None = None,
    *,
    jail: JailKind = "auto",
    limits: Limits = DEFAULT_LIMITS,
) -> JudgeResult:
    """One jailed judgement of `work` (its text, written as output.txt) by `test_file`, which
    lies under `fixtures` (by default its parent). The tests see read-only copies of the
    fixtures, the output and the final workspace, a size-capped writable working folder and
    /tmp, no network, no secret and nothing else of this machine. `jail="none"` (the user's
    --no-jail) runs them unconfined. Never raises."""
    fixtures = (fixtures or test_file.parent).resolve()
    try:
        provider = resolve(jail)
    except JailUnavailable as exc:
        return JudgeResult.failure(f"cannot jail the pytest judgement: {exc}")
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
        cwd = Path(JUDGE_DIR) if (jailed := provider.isolated) else work_dir
        seen_harness = Path(HARNESS_DIR) if jailed else harness
        channel = Channel()
        env = {
            **sandbox_env(cwd, cwd / "output.txt"),
            "PYTHONPATH": str(seen_harness),
            CHANNEL_ENV: str(provider.inside_fds([channel.child_fd])[0]),
        }
        env |= {"TMPDIR": "/tmp"} if jailed else {}
        mounts = [
            Mount("tmpfs", JUDGE_DIR),
            Mount("ro", f"{JUDGE_DIR}/{FIXTURES_DIR}", work_dir / FIXTURES_DIR),
            Mount("ro", f"{JUDGE_DIR}/output.txt", work_dir / "output.txt"),
            Mount("ro", HARNESS_DIR, harness),
        ]
        if workspace is not None:  # agent tasks: the final workspace (unjailed: the copy itself)
            env["AI_WORKSPACE"] = str(cwd / "workspace" if jailed else workspace)
            mounts.append(Mount("ro", f"{JUDGE_DIR}/workspace", workspace))
        ini, python = seen_harness / "pytest.ini", provider.python
        argv = pytest_command(cwd / FIXTURES_DIR / relative, cwd, ini, conftest, python)
        confinement = Confinement(tuple(argv), str(cwd), env, tuple(mounts), limits=limits)
        isolation: Isolation = provider.name
        started = time.monotonic()
        # the kind as given (docker:IMAGE keeps its image); auto's choice is the provider's name
        kind = provider.name if jail == AUTO else jail
        finished = process.run(kind, confinement, timeout, (channel.child_fd,), channel.start)
        channel.close()
        log = _tail_lines(finished.tail)
        if finished.code is None:
            return failed(
                _timeout_message(timeout, isolation) + f"\n{log}",
                {"isolation": isolation, "isolated": jailed, "timed_out": True},
            )
        data: dict[str, Any] = {
            "isolation": isolation,
            "isolated": jailed,
            "seconds": round(time.monotonic() - started, 3),
        }
        return verdict(finished.code, channel.summary(), log, data)
    except FileTooLarge as exc:  # the agent's workspace, over what is copied: its doing
        return failed(str(exc), {"over_limit": True})
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
    if isolated(isolation):
        return f"timed out after {timeout:g}s; process tree killed (its whole jail)"
    return (
        f"timed out after {timeout:g}s; pytest's process group killed (no jail: "
        f"--no-jail; processes that left the group with setsid() may survive)"
    )
