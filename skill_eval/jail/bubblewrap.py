"""The bubblewrap provider: a fresh user, PID, mount, IPC, UTS and (unless asked) network
namespace per confined command. Inside: the system folders and this interpreter read-only,
a size-capped empty /tmp, a fresh /proc that shows only the jail's own processes, and the
confinement's mounts; nothing of the state root, the suite, the user's home or other
attempts. The jail's own root and /dev are read-only: /tmp and the confinement's tmpfs and
`rw` mounts are the only places it can write (no /etc/ld.so.preload of its own, no /dev/shm).
Its processes run under confine.py's jail filter (loaded by bwrap's `--seccomp`): a socket
only of the families it allows (no vsock), no io_uring. No nested
user namespace (bubblewrap 0.8 and up). bwrap's own PID 1 reaps the tree: when the command
ends, whatever it started dies.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import Confinement, Limits
from .host_view import ETC, NETWORK_ETC, SYSTEM_DIRS, interpreter_dirs
from .providers import Launch, ProviderBase

# The uid/gid the command has inside; they map to the harness's own outside, so the files of
# a writable mount stay the harness's.
INSIDE_ID = "1000"


def binary() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def disables_userns() -> bool:
    """Whether this bwrap can forbid user namespaces inside the jail (0.8 and up)."""
    bwrap = binary()
    if bwrap is None:
        return False
    try:
        said = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return b"--disable-userns" in said.stdout + said.stderr


def system_view(network: bool) -> list[str]:
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    for name in (*ETC, *(NETWORK_ETC if network else ())):
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for source, target in interpreter_dirs():
        args += ["--ro-bind", source, target]
    return args


def argv(confinement: Confinement, seccomp: int | None = None) -> list[str]:
    """bwrap's argv for `confinement`; `seccomp`: an fd bwrap reads the jail's seccomp
    program from (confine.jail_filter)."""
    bwrap = binary()
    if bwrap is None:
        raise FileNotFoundError("bwrap")
    limits: Limits = confinement.limits
    size = str(limits.disk_mb * 1024 * 1024)
    args = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        INSIDE_ID,
        "--gid",
        INSIDE_ID,
        *(["--share-net"] if confinement.network else []),
        *(["--die-with-parent"] if confinement.die_with_parent else []),
        "--new-session",
        *(["--disable-userns"] if disables_userns() else []),
        "--cap-drop",
        "ALL",
        "--hostname",
        "jail",
        # /tmp first: an interpreter under /tmp is shown inside it
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        size,
        "--tmpfs",
        "/tmp",
        *system_view(confinement.network),
    ]
    for mount in confinement.mounts:
        if mount.kind == "tmpfs":
            args += ["--size", size, "--tmpfs", mount.target]
        else:
            flag = "--ro-bind" if mount.kind == "ro" else "--bind"
            args += [flag, str(mount.source), mount.target]
    # last, once every mount point exists: the rest of the jail's own tree cannot change
    args += ["--remount-ro", "/", "--remount-ro", "/dev", "--clearenv"]
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    for key, value in confinement.env.items():
        args += ["--setenv", key, value]
    return [*args, "--chdir", confinement.cwd, "--", *confinement.argv]


# What bwrap says when it may not create a user namespace (AppArmor's restriction on Ubuntu
# 24.04 and GitHub's ubuntu-latest, a sysctl, a container without CAP_SYS_ADMIN).
_USERNS_DENIED = (
    "uid map",
    "user namespace",
    "No permissions to create",
    "Operation not permitted",
)
_APPARMOR_SYSCTL = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def userns_denied(said: str) -> str:
    """The one-line problem for a bwrap that may not create its user namespace: its own words,
    who denies it when that can be read, and the fixes."""
    try:
        apparmor = _APPARMOR_SYSCTL.read_text().strip() == "1"
    except OSError:
        apparmor = False
    who = (
        "AppArmor restricts unprivileged user namespaces"
        if apparmor
        else (
            "unprivileged user namespaces are denied here (AppArmor on Ubuntu 24.04 and "
            "GitHub's ubuntu-latest, or a sysctl)"
        )
    )
    return (
        f"bubblewrap cannot create a user namespace ({said}): {who}; allow them with "
        "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or an AppArmor "
        "profile for bwrap (references/ci.md), or use the container provider (--jail container)"
    )


@functools.cache
def problem() -> str | None:
    """Why no bubblewrap jail can be built here, or None. Probed once per process by starting
    a real one (a namespace can be refused at run time: containers, sysctls, AppArmor)."""
    if not sys.platform.startswith("linux"):
        return f"the jail needs Linux with bubblewrap; this is {sys.platform}"
    if binary() is None:
        return "the jail needs bubblewrap: install it (apt-get install bubblewrap)"
    probe = Path(tempfile.mkdtemp(prefix="skill-eval-jail-probe-"))
    try:
        (probe / "seen").write_text("ok", encoding="utf-8")
        check = (
            "import os, sys; sys.exit(0 if open('/probe/seen').read() == 'ok' "
            "and os.getpid() <= 3 else 3)"
        )
        from . import Mount

        confinement = Confinement(
            (sys.executable, "-I", "-c", check),
            "/",
            {"PATH": "/usr/bin:/bin"},
            (Mount("ro", "/probe", probe),),
        )
        done = subprocess.run(
            argv(confinement), capture_output=True, timeout=20, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot start here ({exc})"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        if said and any(sign in said[-1] for sign in _USERNS_DENIED):
            return userns_denied(said[-1][:200])
        return (
            "bubblewrap cannot build a jail here ("
            + (said[-1] if said else f"exit {done.returncode}")
            + "): user namespaces may be disabled"
        )
    return None


class Bubblewrap(ProviderBase):
    """The `bubblewrap` provider: bwrap started by the harness, its fds passed as they are;
    the harness makes each jail's cgroup (jail/cgroup.py)."""

    name, own_cgroup = "bubblewrap", True

    def problem(self) -> str | None:
        return problem()

    def warning(self) -> str | None:
        from .cgroup import problem as no_cgroup  # (a root harness's jails: no process cap)

        return no_cgroup()

    def forget(self) -> None:
        problem.cache_clear()

    def launch(
        self, confinement: Confinement, fds: Sequence[int], timeout: float | None = None
    ) -> Launch:
        """The jail runs under confine.jail_filter (its socket families, no io_uring), which
        bwrap reads from a memfd passed with the jail's own fds."""
        from .confine import jail_filter
        from .pipes import close_fd, first_child
        from .workspace_channel import through_proc

        program = os.memfd_create("skill-eval-seccomp")
        try:
            os.write(program, jail_filter())
            os.lseek(program, 0, os.SEEK_SET)
            args = argv(confinement, seccomp=program)
        except BaseException:
            close_fd(program)
            raise
        return Launch(
            args,
            (*fds, program),
            env={"PATH": os.defpath},
            workspace=through_proc(first_child),
            cleanup=lambda: close_fd(program),
        )


PROVIDER = Bubblewrap()
