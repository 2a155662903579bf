"""One agent CLI run in a jail of its own: what every jailed agent executor does the same way
(Claude Code, OpenCode, Codex), whatever the CLI and its event stream.

    proxy = ProxySlot(lambda: ApiProxy(base_url, dialect.credentials(key), dialect))
    run = AgentRun(kind, mounts, prepare, on_line, timeout, workspace=ws, forward=proxy.get())
    done = launch(run)            # done.ended (exit code, timeout, stderr), done.copied

`prepare(jail)` gets the started-to-be jail (its HOME and workspace, as the command sees them)
and returns the command, its whole environment and the files to put before it runs (a login,
a config file). The workspace is seeded in after them, read back bounded after everything in
the jail is dead. With kind `none` (--no-jail) the same steps run the CLI unconfined in host
temporary folders. Each run may count its API replies (`api_log`), so an attempt that ended
while the API was failing is told apart from one the agent ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.bounded import MAX_STREAM_BYTES
from ..jail import JailKind, Limits, Mount
from ..jail.api_proxy import ApiLog, ApiProxy
from ..jail.copyout import Caps, Copied
from ..jail.providers import image_version, isolated
from ..jail.session import Ended, JailedCommand, cancel_all
from .reachability import nothing_listens

# An attempt's jail: Bun and Node reserve large address ranges, so memory is capped as
# writable data per process; the workspace, HOME and /tmp are tmpfs of `disk_mb` each.
AGENT_LIMITS = Limits(memory_mb=None, data_mb=8192, file_size_mb=1024, processes=1024, disk_mb=1024)
COPY_CAPS = Caps(files=10_000, file_bytes=256 * 1024 * 1024, total_bytes=1024 * 1024 * 1024)


@dataclass(frozen=True)
class Start:
    """What `prepare` returns: the command, its whole environment, and files to write before
    it runs (paths as the command sees them, under its HOME or workspace)."""

    argv: Sequence[str]
    env: Mapping[str, str]
    files: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentRun:
    """One run: the jail's kind and the read-only mounts the CLI needs (its binary, tools),
    how to start it, who reads its stdout lines (False: stop it), its time, the runner's
    workspace (seeded in, copied back; None: an empty one, not copied), the API forward
    (None: no API), `confine` (the CLI in a Landlock domain of its own: holder.py), its stdin
    and the log its API replies are counted in."""

    kind: JailKind
    mounts: Sequence[Mount]
    prepare: Callable[[JailedCommand], Start]
    on_line: Callable[[bytes], bool]
    timeout: float
    workspace: Path | None = None
    proxy: ApiProxy | None = None
    confine: bool = False
    stdin: bytes = b""
    api_log: ApiLog | None = None


@dataclass(frozen=True)
class Done:
    """How a run ended and what came back to the workspace (None without one)."""

    ended: Ended
    copied: Copied | None


def launch(run: AgentRun) -> Done:
    """Run it; raises OSError or JailBroken when the jail itself fails (an error attempt)."""
    proxy = run.proxy if isolated(run.kind) else None
    forward = proxy.observed(run.api_log) if proxy and run.api_log is not None else proxy
    confine = run.confine and isolated(run.kind)
    with JailedCommand(
        run.kind, AGENT_LIMITS, mounts=run.mounts, forward=forward, confine=confine
    ) as jail:
        start = run.prepare(jail)
        jail.start(start.argv, start.env)
        for path, data in start.files.items():
            jail.put(path, data)
        if run.workspace is not None:
            jail.seed(run.workspace)
        ended = jail.run(run.stdin, run.timeout, run.on_line, MAX_STREAM_BYTES)
        copied = jail.collect(run.workspace, COPY_CAPS) if run.workspace is not None else None
    return Done(ended, copied)


class ProxySlot:
    """The executor's one API proxy, made on first use (thread-safe): a run that never needs
    the API (no jail) never reads the credentials."""

    def __init__(self, make: Callable[[], ApiProxy]) -> None:
        self._make = make
        self._proxy: ApiProxy | None = None
        self._lock = threading.Lock()

    def get(self) -> ApiProxy:
        with self._lock:
            if self._proxy is None:
                self._proxy = self._make()
            return self._proxy

    def unreachable(self) -> str | None:
        """`nothing listens at URL` when the proxy's upstream refused a connection before it
        ever answered (no attempt of the run can reach it), else None."""
        with self._lock:
            proxy = self._proxy
        return nothing_listens(proxy.url) if proxy is not None and proxy.unreachable() else None


def image_cli_version(kind: JailKind, package: str) -> str:
    """The version of the agent CLI a jail of `kind` runs from its own image: its label for
    npm `package` (ExecutorSpec.package, `name@pin`), not the host's `--version` (there may
    be no host CLI, or one Linux cannot run). "unknown ..." when the image has no label."""
    name = package.rpartition("@")[0] or package
    found = image_version(kind, name)
    if found is None:
        return f"unknown (the jail's image records no version of {name})"
    return f"{found} ({name}, from the jail image's label)"


__all__ = [
    "AGENT_LIMITS",
    "COPY_CAPS",
    "AgentRun",
    "Done",
    "ProxySlot",
    "Start",
    "image_cli_version",
    "launch",
]


class CliRuns:
    """What an executor running one jailed CLI per attempt keeps across its attempts: whether
    the run was cancelled, and the CLI's version, asked once (`ask_version`). A mixin before
    ExecutorBase; the executor's __init__ calls CliRuns.__init__."""

    def __init__(self) -> None:
        self._cancelled = threading.Event()
        self._version: str | None = None
        self._version_lock = threading.Lock()

    def ask_version(self) -> str | None:
        """The CLI's `--version` (binaries.version: cached per binary); None: no binary."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Kill every running attempt's jail (and everything in it) before returning; later
        attempts fail at once. Called by the runner on Ctrl-C or SIGTERM."""
        self._cancelled.set()
        cancel_all()

    def version(self) -> str | None:
        """The CLI's version, once per process ("unknown ..." answers are asked again)."""
        with self._version_lock:
            if self._version is None:
                found = self.ask_version()
                if found is None or found.startswith("unknown"):
                    return found
                self._version = found
            return self._version
