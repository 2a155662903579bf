"""The container provider: one Podman container per jail (`podman run --rm`), with no network
(`--network none`), a read-only root, `--pids-limit`, `--memory`, a run-time cap
(`--timeout`), all capabilities dropped, no new privileges, uid 1000 inside, no /dev/shm
(`--ipc none`) and a masked /dev/mqueue, the jail's seccomp filter (confine.py: its socket
families, no io_uring) on its first command, and removed at the end. The harness's sockets
enter with `--preserve-fds` (renumbered from 3): the jail's holder passes each model-API
connection out over one of them, so the API key never enters and the container needs no
network at all.

Its root: by default (`--jail container`) an empty folder of the harness's with the host's
system folders, a short list of /etc files and this interpreter shown read-only, the same
view bubblewrap gives; `--jail container:IMAGE` runs IMAGE instead (the repo's Dockerfile
builds one with Python and the agent CLIs; the jail's helpers then run under its `python3`).
Docker's CLI has no `--preserve-fds`: Docker has a provider of its own (jail/docker.py).
"""

from __future__ import annotations

import atexit
import functools
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from . import Confinement, Mount
from .host_view import ETC, NETWORK_ETC, SYSTEM_DIRS, interpreter_dirs
from .providers import Launch, ProviderBase
from .workspace_channel import through_proc

INSIDE = (1000, 1000)  # the command's uid and gid
# The jail's seccomp filter (confine.py) comes in at this path; the command starts under it.
FILTER = "/run/skill-eval-filter/confine.py"
CONFINE = Path(__file__).resolve().parent / "confine.py"
# Tried in order until a probe container starts: the runtime's defaults, then runc (crun
# refuses a hybrid cgroup v1 layout), then cgroupfs (no systemd to ask).
_GLOBAL_FLAGS: tuple[tuple[str, ...], ...] = (
    (),
    ("--runtime", "runc"),
    ("--runtime", "runc", "--cgroup-manager", "cgroupfs"),
)
_PROBE_TIMEOUT = 60


def runtime() -> str | None:
    """The container CLI: podman (Docker's is the docker provider's, jail/docker.py)."""
    return shutil.which("podman")


@functools.cache
def skeleton() -> Path:
    """An empty root the host's folders are shown in (removed when the harness exits)."""
    root = Path(tempfile.mkdtemp(prefix="skill-eval-rootfs-"))
    root.chmod(0o755)
    for name in SYSTEM_DIRS:
        if os.path.islink(name):
            (root / name.lstrip("/")).symlink_to(os.readlink(name))
    for name in ("proc", "dev", "sys", "tmp", "etc", "run", "home", "workspace"):
        (root / name).mkdir(mode=0o755, exist_ok=True)
    (root / "tmp").chmod(0o1777)  # (a runtime may copy a tmpfs's mode from the folder below)
    atexit.register(shutil.rmtree, root, True)
    return root


def _mount_args(confinement: Confinement, size: int, image: str | None) -> list[str]:
    args: list[str] = ["--tmpfs", f"/tmp:rw,size={size},mode=1777,notmpcopyup"]
    args += ["-v", f"{CONFINE}:{FILTER}:ro"]
    if image is None:  # the host's system, as bubblewrap shows it
        for folder in SYSTEM_DIRS:
            if os.path.isdir(folder) and not os.path.islink(folder):
                args += ["-v", f"{folder}:{folder}:ro"]
        for name in (*ETC, *(NETWORK_ETC if confinement.network else ())):
            if os.path.exists(f"/etc/{name}"):
                args += ["-v", f"/etc/{name}:/etc/{name}:ro"]
        for source, target in interpreter_dirs():
            args += ["-v", f"{source}:{target}:ro"]
    for mount in confinement.mounts:
        if image is None and mount.kind == "tmpfs":
            _mountpoint(mount.target)
        args += _one(mount, size)
    return args


def _mountpoint(target: str) -> None:
    """The skeleton's folder a tmpfs is mounted on, mode 1777: the runtime gives the tmpfs the
    mode of a folder already there (it made /home/agent 0755 in every jail after the first,
    and the agent, uid 1000, could not write its HOME)."""
    folder = skeleton() / target.lstrip("/")
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o1777)


def _one(mount: Mount, size: int) -> list[str]:
    if mount.kind == "tmpfs":
        return ["--tmpfs", f"{mount.target}:rw,size={size},mode=1777,notmpcopyup"]
    suffix = "ro" if mount.kind == "ro" else "rw"
    return ["-v", f"{mount.source}:{mount.target}:{suffix}"]


def run_args(
    confinement: Confinement, fds: int, name: str, timeout: float | None, image: str | None
) -> list[str]:
    """`podman run`'s arguments (after the runtime and its global flags) for `confinement`."""
    limits = confinement.limits
    size = limits.disk_mb * 1024 * 1024
    # RLIMIT_NPROC counts a uid's processes machine-wide, and uid 1000 is every container's:
    # a cap there would count one jail's processes against another's (a fork bomb in one
    # attempt kept a concurrent judgement from starting). --pids-limit caps each container
    # (its own cgroup); nproc is set as high as the runtime takes (the harness's own hard
    # limit, at most the kernel's pid_max: runc refused more, and its default, here).
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], _pid_max())
    ulimits = [
        "nofile=1024:1024",
        f"nproc={nproc}:{nproc}",
        f"fsize={limits.file_size_mb * 1024 * 1024}",
    ]
    if limits.data_mb is not None:
        ulimits.append(f"data={limits.data_mb * 1024 * 1024}")
    args = [
        "run",
        "--rm",
        "--name",
        name,
        "--read-only",
        "--read-only-tmpfs=false",
        "--network",
        "host" if confinement.network else "none",
        # No /dev/shm, a read-only /dev/mqueue: /tmp and the confinement's tmpfs and `rw`
        # mounts are the only places the command can write, as under bubblewrap.
        "--ipc",
        "none",
        "--security-opt",
        "mask=/dev/mqueue",
        "--cgroupns=private",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--user",
        f"{INSIDE[0]}:{INSIDE[1]}",
        "--hostname",
        "jail",
        "--pids-limit",
        str(limits.processes),
        *(["--memory", f"{limits.total_memory_mb}m"] if limits.total_memory_mb else []),
        *(arg for u in ulimits for arg in ("--ulimit", u)),
        *(["--timeout", str(int(timeout) + 1)] if timeout else []),
        *(["--preserve-fds", str(fds)] if fds else []),
        "--workdir",
        confinement.cwd,
        *_mount_args(confinement, size, image),
    ]
    args += [image] if image else ["--rootfs", str(skeleton())]
    # `env -i`: the command's environment is the confinement's alone, as under bubblewrap (the
    # runtime adds TERM, HOSTNAME and the passwd entry's HOME, which no flag removes).
    env = [f"{key}={value}" for key, value in confinement.env.items()]
    # RLIMIT_AS per process, as bubblewrap's jail has it: no runtime's --ulimit takes `as`.
    space = limits.memory_mb and limits.memory_mb * 1024 * 1024
    cap = ["/usr/bin/prlimit", f"--as={space}:{space}", "--"] if space else []
    # The jail's seccomp filter (a socket only of the families confine.py allows, no
    # io_uring): what bwrap's --seccomp does, done by the command's first process here, since
    # the runtime's own profile allows every socket family (vsock included).
    python = "python3" if image else sys.executable
    screen = [python, "-I", "-S", FILTER, "--jail", "--"]
    return [*args, "/usr/bin/env", "-i", *env, *cap, *screen, *confinement.argv]


def _pid_max() -> int:
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        return 32768  # the kernel's default


class Container(ProviderBase):
    """The `container` provider (see the module's docstring); `variant(IMAGE)` runs IMAGE."""

    def __init__(self, image: str | None = None) -> None:
        self.image = image
        self.name = "container"
        self.python = "python3" if image else sys.executable

    def variant(self, image: str) -> Container:
        return Container(image)

    def inside_fds(self, fds: Sequence[int]) -> list[int]:
        return list(range(3, 3 + len(fds)))

    def forget(self) -> None:
        Container.problem.cache_clear()

    def launch(
        self, confinement: Confinement, fds: Sequence[int], timeout: float | None = None
    ) -> Launch:
        cli = runtime()
        if cli is None:
            raise FileNotFoundError("podman")
        name = f"skill-eval-{uuid.uuid4().hex[:16]}"
        prefix = [cli, *_flags(cli, self.image)]
        argv = [*prefix, *run_args(confinement, len(fds), name, timeout, self.image)]
        inside = self.inside_fds(fds)
        return Launch(
            argv,
            pass_fds=(*fds, *inside),
            move_fds=tuple(zip(fds, inside, strict=True)),
            env={"PATH": os.environ.get("PATH", os.defpath)},
            own_cgroup=False,
            workspace=through_proc(
                lambda pid: _first_process(prefix, name), INSIDE if os.geteuid() == 0 else None
            ),
            cleanup=_cleanup(prefix, name),
        )

    @functools.cache  # noqa: B019 (one probe per provider and process)
    def problem(self) -> str | None:
        cli = runtime()
        if not sys.platform.startswith("linux") and cli is None:
            return f"the container provider needs Podman; none is installed on {sys.platform}"
        if cli is None:
            return "the container provider needs podman (apt-get install podman runc)"
        said = _probe(cli, self.image)
        return None if said is None else f"podman cannot start a jail here ({said})"


def _probe(cli: str, image: str | None) -> str | None:
    """Start a real container with every flag a jail uses and an fd passed in; keep the first
    global flags that work (`_flags`). None when one did, else what the runtime said."""
    said = "no attempt"
    for flags in _GLOBAL_FLAGS:
        done = _probe_with(cli, flags, image)
        if done is None:
            _FLAGS[(cli, image)] = flags
            return None
        said = done
    return said


_FLAGS: dict[tuple[str, str | None], tuple[str, ...]] = {}


def _flags(cli: str, image: str | None) -> tuple[str, ...]:
    return _FLAGS.get((cli, image), ())


def _probe_with(cli: str, flags: Sequence[str], image: str | None) -> str | None:
    import socket

    check = "import os; os.write(3, b'ok' if os.getuid() == 1000 else b'root')"
    python = "python3" if image else sys.executable
    confinement = Confinement((python, "-I", "-c", check), "/", {"PATH": "/usr/bin:/bin"})
    ours, theirs = socket.socketpair()
    name = f"skill-eval-probe-{uuid.uuid4().hex[:12]}"
    argv = [cli, *flags, *run_args(confinement, 1, name, _PROBE_TIMEOUT, image)]
    fd = theirs.fileno()
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=_PROBE_TIMEOUT + 10,
            stdin=subprocess.DEVNULL,
            pass_fds=(fd, 3) if fd != 3 else (3,),
            preexec_fn=(lambda: os.dup2(fd, 3)) if fd != 3 else None,
        )
        theirs.close()
        ours.settimeout(1)
        heard = ours.recv(16) if done.returncode == 0 else b""
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    finally:
        ours.close()
        theirs.close()
        _remove([cli, *flags], name)
    if heard == b"ok":
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit {done.returncode}, no fd reached the container"


def _first_process(prefix: Sequence[str], name: str) -> int | None:
    done = subprocess.run(
        [*prefix, "inspect", "--format", "{{.State.Pid}}", name],
        capture_output=True,
        timeout=30,
        check=False,
    )
    text = done.stdout.decode().strip()
    return int(text) if done.returncode == 0 and text.isdigit() and int(text) > 0 else None


def _cleanup(prefix: Sequence[str], name: str) -> Callable[[], None]:
    """The container's removal at the end, and a reaper for a harness killed before it: a shell
    of its own session waits on a pipe only the harness holds. A harness that cleans up tells it
    so; one that dies (SIGKILL) closes the pipe unsaid, and the shell removes the container
    (its runtime's monitor, not the harness, holds it: it would live to its --timeout)."""
    read, write = os.pipe()
    remove = shlex.join([*prefix, "rm", "--force", "--time", "0", name])
    try:
        subprocess.Popen(
            ["/bin/sh", "-c", f"IFS= read -r said || exec {remove}"],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        os.close(read)

    held = [write]

    def cleanup() -> None:
        _remove(prefix, name)
        for fd in held:  # (once: a second call must not close a reused fd number)
            try:
                os.write(fd, b"removed\n")
            except OSError:
                pass
            finally:
                os.close(fd)
        held.clear()

    return cleanup


def _remove(prefix: Sequence[str], name: str) -> None:
    """Kill and remove the container (nothing when `--rm` already did)."""
    try:
        subprocess.run(
            [*prefix, "rm", "--force", "--time", "0", name],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        pass


PROVIDER = Container()
