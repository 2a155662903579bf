"""Code a suite names, run where it can reach no secret: every `python` judge's callable is
imported and called in a jailed process (judges/python_runner.py inside), never in the
harness. A suite in a pull request can name any importable callable (`pty:spawn`,
`os:system`, `runpy:run_path`) and hand it the task's reference; in here it meets an
environment with no keys or tokens, no network, a read-only view of the system and of the
folders Python imports from, and the jail's limits.

    problems = check_callables(["mod:judge"], jail="auto")   # {spec: problem or None}
    found = call_callable("mod:judge", task, work, jail="auto")  # what the function returned

What the jail shows besides the system and this interpreter: skill-eval's own package (the
function may return a JudgeResult), and each folder on the harness's sys.path (read-only; a
`.git` in it hidden: a CI checkout keeps its token in .git/config), but never `/`, the
user's home or the temp folder (other runs' files). `--no-jail` runs the same process
unconfined, with the same scrubbed environment.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.bounded import FileTooLarge
from ..core.model import Task
from ..core.work import Work
from ..errors import ExecutorError
from ..jail import Confinement, JailKind, JailUnavailable, Limits, Mount, process
from ..jail.host_view import SYSTEM_DIRS, interpreter_dirs
from ..jail.providers import AUTO, JailProvider, resolve
from .pytest_channel import Channel
from .pytest_sandbox import judgement_dir, remove_dir, temp_parent
from .workspace_copy import readonly_copy, writable

CHANNEL_ENV = "SKILL_EVAL_PYTHON_CHANNEL"
TIMEOUT_SECONDS = 120.0  # a judgement, or loading every callable of a suite
LIMITS = Limits(disk_mb=64)
HARNESS_DIR, WORK_DIR = "/pyjudge-harness", "/pyjudge"
_RUNNER = Path(__file__).with_name("python_runner.py")
_PASSED_THROUGH = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")


class JailedCallError(ExecutorError):
    """The jailed process gave no answer: it could not start, timed out or died."""


def _visible(path: str) -> bool:
    """Whether the jail shows `path` already (the system folders, this interpreter)."""
    shown = [*SYSTEM_DIRS, *(target for _, target in interpreter_dirs())]
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in shown)


def import_folders() -> tuple[list[str], list[str]]:
    """(the folders the jail shows read-only, the jail's sys.path): each folder on the
    harness's sys.path, never `/`, the home, the temp folder or one holding them; and
    skill-eval's own package folder, shown alone (its parent goes on the path)."""
    # Folders that hold what the jail must not see: the home, every run's temp files.
    private = [os.path.realpath(os.path.expanduser("~")), str(temp_parent())]
    shown: dict[str, None] = {}
    path: dict[str, None] = {}
    for entry in sys.path:
        folder = os.path.realpath(entry or os.getcwd())
        if folder == "/" or any(p == folder or p.startswith(folder + "/") for p in private):
            continue
        if os.path.exists(folder):
            path[folder] = None
            if not _visible(folder):
                shown[folder] = None
    package = Path(__file__).resolve().parent.parent  # skill_eval/: a JudgeResult, the Task
    if not _visible(str(package)):
        shown[str(package)] = None
    path[str(package.parent)] = None
    return list(shown), list(path)


def _mounts(folders: list[str]) -> list[Mount]:
    mounts: list[Mount] = []
    for folder in folders:
        mounts.append(Mount("ro", folder, Path(folder)))
        git = Path(folder, ".git")
        if git.is_dir() and not git.is_symlink():
            mounts.append(Mount("tmpfs", str(git)))
        elif git.exists():
            mounts.append(Mount("ro", str(git), Path(os.devnull)))
    return mounts


def _env(cwd: str, fd: int) -> dict[str, str]:
    """All the process sees of the environment: nothing of the harness's but its locale."""
    env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
    return {
        **env,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": env.get("LANG", "C.UTF-8"),
        "HOME": cwd,
        "TMPDIR": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        CHANNEL_ENV: str(fd),
    }


def _run(order: dict[str, Any], jail: JailKind, extra: dict[str, Any] | None = None) -> Any:
    """Run the runner on `order` in the jail; what it found. JailedCallError when it said
    nothing (with why), JailUnavailable when no jail can run here."""
    provider: JailProvider = resolve(jail)
    tmp = judgement_dir()
    channel: Channel | None = None
    try:
        harness = tmp / "harness"
        harness.mkdir(mode=0o755)
        shutil.copyfile(_RUNNER, harness / "runner.py")
        jailed = provider.isolated
        seen = Path(HARNESS_DIR) if jailed else harness
        mounts = [Mount("tmpfs", WORK_DIR), Mount("ro", HARNESS_DIR, harness)]
        if extra is not None:
            with (harness / "request.pickle").open("wb") as handle:
                pickle.dump((extra["task"], extra["work"]), handle)
            order["request"] = str(seen / "request.pickle")
            if extra.get("workspace") is not None:
                mounts.append(Mount("ro", f"{WORK_DIR}/workspace", extra["workspace"]))
        folders, order["path"] = import_folders()
        (harness / "order.json").write_text(json.dumps(order), encoding="utf-8")
        for name in ("runner.py", "order.json", "request.pickle"):
            if (harness / name).exists():
                (harness / name).chmod(0o644)  # the container's user reads them
        cwd = WORK_DIR if jailed else str(tmp)
        channel = Channel()
        env = _env(cwd, provider.inside_fds([channel.child_fd])[0])
        argv = (provider.python, "-I", "-B", str(seen / "runner.py"), str(seen / "order.json"))
        confinement = Confinement(
            argv, cwd, env, tuple(mounts + (_mounts(folders) if jailed else [])), limits=LIMITS
        )
        kind = provider.name if jail == AUTO else jail  # docker:IMAGE keeps its image
        finished = process.run(
            kind, confinement, TIMEOUT_SECONDS, (channel.child_fd,), channel.start
        )
        channel.close()
        done = [e for e in channel.events() if e.get("event") == "done"]
        if finished.code is None:
            raise JailedCallError(f"timed out after {TIMEOUT_SECONDS:g}s (its jail killed)")
        if not done:
            said = " / ".join(finished.tail.strip().splitlines()[-3:])[-300:]
            raise JailedCallError(
                f"its process ended (exit {finished.code}) without an answer"
                + (f": {said}" if said else "")
            )
        return done[-1].get("found")
    finally:
        if channel is not None:
            channel.close(0)
        remove_dir(tmp)


def check_callables(specs: list[str], jail: JailKind) -> dict[str, str | None]:
    """Import each callable in one jailed process: spec -> why it does not load, or None.
    JailUnavailable when no jail can run here."""
    if not specs:
        return {}
    try:
        found = _run({"mode": "check", "specs": list(dict.fromkeys(specs))}, jail)
    except JailedCallError as exc:
        return dict.fromkeys(specs, f"loading it in the jail failed: {exc}")
    if not isinstance(found, dict):
        return dict.fromkeys(specs, "loading it in the jail gave no answer")
    return {s: (None if found.get(s) is None else str(found.get(s))) for s in specs}


def call_callable(spec: str, task: Task, work: Work, jail: JailKind) -> dict[str, Any]:
    """Call the callable on `work` (and `task`) in the jail: the runner's answer
    (python_runner._plain, or `load_error`/`raised`). JailedCallError, JailUnavailable,
    OSError/ValueError (the workspace copy) when there is none."""
    tmp = judgement_dir()
    try:
        workspace = readonly_copy(work, tmp / "workspace")
        inside = work
        if workspace is not None and work.files is not None:
            provider_isolated = resolve(jail).isolated
            root = Path(f"{WORK_DIR}/workspace") if provider_isolated else workspace
            files = tuple(replace(f, root=root) for f in work.files.files)
            inside = replace(work, files=replace(work.files, files=files, root=root))
        extra = {"task": task, "work": inside, "workspace": workspace}
        found = _run({"mode": "call", "spec": spec}, jail, extra)
    finally:
        if (tmp / "workspace").is_dir():
            writable(tmp / "workspace")
        remove_dir(tmp)
    if not isinstance(found, dict):
        raise JailedCallError("its answer was not an object")
    return found


__all__ = [
    "FileTooLarge",
    "JailUnavailable",
    "JailedCallError",
    "call_callable",
    "check_callables",
    "import_folders",
]
