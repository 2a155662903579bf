"""The jail: how anything the candidate controls is started (code a judge runs on an output,
later the agent and its tools). One seam: a `Confinement` says what the process may see and
do; a provider (jail/providers.py, registered by name) starts it so: `bubblewrap` on Linux,
`container` (Podman), `docker` (the Docker CLI, macOS and Windows too), plugins; `none`
runs the command as it is and is chosen only when the user says `--no-jail`. `auto`, the
default, is the first that can run here.

Where no provider works, `providers.require` raises `JailUnavailable` naming what to install: a jail
that works in some environments and silently not in others is the bug this package avoids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import ExecutorError

# A jail provider's name (`bubblewrap`, `container`, `docker`, `none`, a plugin's), or `auto`.
JailKind = str


# What a run without a jail says first (summary, improve, review) and records in its artifact.
NO_JAIL = (
    "no jail (--no-jail): the agent, its tools and the code judges run on outputs had the "
    "harness's own rights; a verdict from this run is not proof against a candidate that "
    "tampers with its evaluation"
)


class JailUnavailable(ExecutorError):
    """No jail can be built here (no bubblewrap, no user namespaces, not Linux). `why` says
    what is missing and what to install; `way_out` what a command with `--no-jail` (or
    `--jail`) may do instead, said after it: a command without those flags (`validate`, the
    gate) says `why` alone."""

    def __init__(self, why: str, *, way_out: str | None = None) -> None:
        super().__init__(f"{why}; {way_out}" if way_out else why)
        self.why, self.way_out = why, way_out


@dataclass(frozen=True)
class Limits:
    """What one jailed process tree may use. `memory_mb` is RLIMIT_AS per process (None: no
    cap, for runtimes such as Node or Bun that reserve large address ranges); `data_mb` is
    RLIMIT_DATA per process (writable private memory: the cap that works for those
    runtimes); `file_size_mb` is RLIMIT_FSIZE per file; `processes` caps the jail's
    processes and threads (its cgroup's pids.max; RLIMIT_NPROC too, which the kernel ignores
    for root); `total_memory_mb` the whole jail's memory, its tmpfs files included (its
    cgroup's; None: no cap); `disk_mb` caps each writable tmpfs (all its files together).
    The cgroup's caps hold where one can be made (jail/cgroup.py)."""

    memory_mb: int | None = 4096
    data_mb: int | None = None
    file_size_mb: int = 512
    processes: int = 1024
    disk_mb: int = 1024
    total_memory_mb: int | None = 8192


@dataclass(frozen=True)
class Mount:
    """One path inside the jail: a host path shown read-only (`ro`) or writable (`rw`), or
    an empty size-capped `tmpfs`. Applied in order after the system's read-only view, so a
    later mount may sit inside an earlier tmpfs."""

    kind: Literal["ro", "rw", "tmpfs"]
    target: str
    source: Path | None = None


@dataclass(frozen=True)
class Confinement:
    """A command and everything it may see: `env` is its whole environment; `mounts` the only
    host paths it sees beside the read-only system folders and interpreter; no network unless
    `network`; its own PID namespace, so nothing it starts outlives it. `die_with_parent`: it
    is killed when the harness dies (bwrap's parent-death signal); False only for a command
    that ends itself when the harness goes (a jail's holder, on its control socket's EOF)."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    mounts: tuple[Mount, ...] = ()
    network: bool = False
    limits: Limits = field(default_factory=Limits)
    die_with_parent: bool = True


__all__ = [
    "NO_JAIL",
    "Confinement",
    "JailKind",
    "JailUnavailable",
    "Limits",
    "Mount",
]
