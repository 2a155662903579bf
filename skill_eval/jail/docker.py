"""The docker provider: one container per jail through the `docker` CLI alone, so Docker
Desktop (macOS, Windows), Colima, OrbStack and Docker Engine all serve. No network at all
(`--network none`), a read-only root, size-capped tmpfs for the workspace, HOME and /tmp, no
/dev/shm (`--ipc none`) and no message queue to write, `--pids-limit` and `--memory`, no
capability, no new privileges, uid 1000 inside, removed at the end and after a killed
harness (a reaper, as the container provider's).

Docker's CLI passes no fd into a container and Docker Desktop shares no host socket, so the
jail's sockets (the holder's control and streams, the model-API connections, a judgement's
result channel) travel as channels of one stream over the container's stdin and stdout
(link.py, link_ends.py): the model API stays the harness's forward, the key never enters.
The workspace is seeded and copied back over the same link (docker_files.py), so a daemon in
a VM serves as well as one on this machine.

Its root: on Linux by default an image holding only mountpoints (imported from a tar the
provider makes, `skill-eval-host:*`) with this machine's system folders, a short list of /etc
files and this interpreter mounted read-only, the view bubblewrap gives; that needs the
daemon on this machine. Elsewhere, or with `--jail docker:IMAGE`, an image with python3 (and
pytest, and the agent CLIs): containers/agent-jail/Dockerfile builds one (agent_image.py
says when its agents are not at the pins). With such an image the executors run its own
agent CLIs (image_programs), never a host binary: on macOS that is a binary Linux cannot run.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from . import Confinement, JailUnavailable, Mount
from .agent_image import DEFAULT_IMAGE, LABEL, pins_differ
from .docker_files import DockerFiles
from .host_view import etc_files, interpreter_dirs, system_folders, top_links
from .providers import Launch, ProviderBase
from .workspace_channel import WorkspaceChannel

INSIDE = "1000:1000"  # the command's uid and gid
HERE = Path(__file__).resolve().parent  # link_ends.py, link.py, tree_wire.py: read-only inside
LINK_DIR = "/run/skill-eval-link"
_PROBE_TIMEOUT = 120  # a first container on a loaded machine; the image may be cold
_HOST_DIRS = ("usr", "proc", "dev", "sys", "tmp", "etc", "run", "home", "workspace")
# What the docker CLI needs of the harness's environment to find its engine (a context, a
# remote host, a rootless socket); the container's own environment is the confinement's.
_CLI_ENV = ("PATH", "HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME")


def cli() -> str | None:
    return shutil.which("docker")


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _CLI_ENV or k.startswith("DOCKER_")}
    return {"PATH": os.defpath, **env}


def _docker(*args: str, stdin: bytes | None = None, timeout: float = 60) -> tuple[int, str]:
    """(exit code, what it said: stdout, else stderr's last line) of one docker command."""
    docker = cli()
    if docker is None:
        return 127, "no docker CLI"
    try:
        done = subprocess.run(
            [docker, *args], input=stdin, capture_output=True, timeout=timeout, env=cli_env()
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return 1, str(exc)
    out = done.stdout.decode("utf-8", "replace").strip()
    err = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return done.returncode, out if done.returncode == 0 else (err[-1][:300] if err else out)


def host_root() -> bytes:
    """The tar the host-view image is made from: the mountpoints, the system's top links."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, target in top_links():
            link = tarfile.TarInfo(name.lstrip("/"))
            link.type, link.linkname = tarfile.SYMTYPE, target
            tar.addfile(link)
        for name in _HOST_DIRS:
            folder = tarfile.TarInfo(name)
            folder.type, folder.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
            tar.addfile(folder)
    return buffer.getvalue()


@functools.cache
def host_image() -> str:
    """The host-view image, imported once per engine (its name is its content's hash)."""
    data = host_root()
    name = f"skill-eval-host:{hashlib.sha256(data).hexdigest()[:12]}"
    if _docker("image", "inspect", "--format", "{{.Id}}", name)[0] != 0:
        code, said = _docker("import", "-", name, stdin=data, timeout=120)
        if code != 0:
            raise JailUnavailable(f"docker cannot import the jail's root image ({said})")
    return name


def _mount(mount: Mount, size: int) -> list[str]:
    if mount.kind == "tmpfs":  # the command's own: uid 1000 writes it, runs what it wrote
        options = f"rw,exec,nosuid,nodev,size={size},mode=0755,uid=1000,gid=1000"
        return ["--tmpfs", f"{mount.target}:{options}"]
    fields = ["type=bind", f"src={mount.source}", f"dst={mount.target}"]
    fields += ["readonly"] if mount.kind == "ro" else []
    return ["--mount", ",".join(_csv(f) for f in fields)]


def _csv(field: str) -> str:
    """One field of `--mount` (the CLI reads it as CSV: a comma or quote needs quoting)."""
    return '"' + field.replace('"', '""') + '"' if ("," in field or '"' in field) else field


def _host_view(network: bool) -> list[Mount]:
    mounts = [Mount("ro", f, Path(f)) for f in (*system_folders(), *etc_files(network))]
    return mounts + [Mount("ro", target, Path(source)) for source, target in interpreter_dirs()]


def run_args(
    confinement: Confinement, name: str, image: str, count: int, python: str, host: bool
) -> list[str]:
    """`docker run`'s arguments for `confinement`, its command behind the link's inside end
    with `count` relayed fds; `host`: the host's system mounted on `image`."""
    limits = confinement.limits
    size = limits.disk_mb * 1024 * 1024
    ulimits = ["nofile=1024:1024", f"fsize={limits.file_size_mb * 1024 * 1024}", "msgqueue=0:0"]
    ulimits += [f"data={limits.data_mb * 1024 * 1024}"] if limits.data_mb is not None else []
    memory = [f"{limits.total_memory_mb}m"] if limits.total_memory_mb else []
    args = ["run", "-i", "--rm", "--name", name, "--pull", "never", "--log-driver", "none"]
    args += ["--label", f"org.skill-eval.harness={os.getpid()}"]  # whose it is (docker ps)
    args += ["--network", "host" if confinement.network else "none", "--read-only"]
    args += ["--ipc", "none", "--cgroupns", "private", "--cap-drop", "ALL"]
    args += ["--security-opt", "no-new-privileges", "--user", INSIDE, "--hostname", "jail"]
    args += ["--pids-limit", str(limits.processes)]
    args += [a for m in memory for a in ("--memory", m, "--memory-swap", m)]
    args += [a for u in ulimits for a in ("--ulimit", u)]
    # /dev/mqueue: docker mounts it writable even with --ipc none (and msgqueue=0 holds too)
    args += ["--mount", "type=tmpfs,dst=/dev/mqueue,readonly"]
    args += ["--tmpfs", f"/tmp:rw,exec,nosuid,nodev,size={size},mode=1777"]
    args += ["--workdir", confinement.cwd]
    mounts = [*(_host_view(confinement.network) if host else []), Mount("ro", LINK_DIR, HERE)]
    for mount in (*mounts, *confinement.mounts):
        args += _mount(mount, size)
    env = [f"{key}={value}" for key, value in confinement.env.items()]
    # RLIMIT_AS per process, as bubblewrap's jail has it: docker's --ulimit takes no `as`.
    space = limits.memory_mb and limits.memory_mb * 1024 * 1024
    cap = ["/usr/bin/prlimit", f"--as={space}:{space}", "--"] if space else []
    # The link's inside end starts under the jail's seccomp filter (confine.py: its socket
    # families, no io_uring), as a container's first command does, so all it starts does too.
    screen = [python, "-I", "-S", f"{LINK_DIR}/confine.py", "--jail", "--"]
    inside = [*screen, python, "-I", "-S", f"{LINK_DIR}/link_ends.py", "inside"]
    inside += ["--count", str(count)]
    # `env -i`: the command's environment is the confinement's alone (docker adds PATH,
    # HOSTNAME and HOME to the first process's, which no flag removes).
    return [*args, image, *inside, "--files", "--", "/usr/bin/env", "-i", *env, *cap,
            *confinement.argv]  # fmt: skip


class Docker(ProviderBase):
    """The `docker` provider (see the module's docstring); `variant(IMAGE)` runs IMAGE."""

    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        if image is None and not sys.platform.startswith("linux"):
            image = DEFAULT_IMAGE  # no host system to show: the agent image
        self.image = image
        self.python = "python3" if image else sys.executable
        self._variants: dict[str, Docker] = {}

    def variant(self, option: str) -> Docker:
        return self._variants.setdefault(option, Docker(option))

    def inside_fds(self, fds: Sequence[int]) -> list[int]:
        return list(range(3, 3 + len(fds)))

    def launch(
        self, confinement: Confinement, fds: Sequence[int], timeout: float | None = None
    ) -> Launch:
        docker = cli()
        if docker is None:
            raise JailUnavailable(self._missing())
        name = f"skill-eval-{uuid.uuid4().hex[:16]}"
        image = self.image or host_image()
        run = run_args(confinement, name, image, len(fds), self.python, self.image is None)
        files, files_inside = socket.socketpair()
        relayed = [*fds, files_inside.fileno()]
        link = [sys.executable, "-I", "-S", str(HERE / "link_ends.py"), "outside", "--fds"]
        link += [",".join(map(str, relayed)), "--", docker, *run]

        def workspace(pid: int) -> WorkspaceChannel:
            files_inside.close()  # the outside end has its own copy by now
            return DockerFiles(files, kill=lambda: _detached([docker, "kill", name]))

        return Launch(
            link,
            pass_fds=relayed,
            env=cli_env(),
            own_cgroup=False,
            workspace=workspace,
            cleanup=_cleanup(docker, name, (files, files_inside)),
        )

    @functools.cache  # noqa: B019 (one probe per provider and process)
    def problem(self) -> str | None:
        if cli() is None:
            return self._missing()
        code, said = _docker("version", "--format", "{{.Server.Version}}", timeout=30)
        if code != 0:
            return (
                f"docker cannot reach its engine ({said}): start Docker (dockerd, Docker Desktop)"
            )
        if self.image is not None:
            if _docker("image", "inspect", "--format", "{{.Id}}", self.image)[0] != 0:
                return (
                    f"the docker provider's image {self.image} is not built here: build it once "
                    f"with `docker build -t {self.image} containers/agent-jail` (references/ci.md)"
                )
        try:
            failed = _probe(self)
        except JailUnavailable as exc:
            return str(exc)
        if failed is None:
            return None
        if self.image is None:
            return (
                f"docker cannot start a jail on this machine's system ({failed}): the engine "
                "must run on this machine and its uid 1000 read this Python and skill-eval's "
                f"folder; else build the agent image and pass --jail docker:{DEFAULT_IMAGE}"
            )
        return f"docker cannot start a jail here ({failed})"

    def image_warning(self, pins: Mapping[str, str]) -> str | None:
        return pins_differ(self.image, _labels(self.image), pins) if self.image else None

    def image_programs(self) -> bool:
        # An image of its own holds the agent CLIs (the host's may be a macOS binary); the
        # host-view image shows this machine's system, whose CLIs run as under bubblewrap.
        return self.image is not None

    def image_version(self, package: str) -> str | None:
        return _labels(self.image).get(LABEL + package) if self.image else None

    def forget(self) -> None:
        Docker.problem.cache_clear()
        host_image.cache_clear()

    def _missing(self) -> str:
        if sys.platform.startswith("linux"):
            return "the docker provider needs docker (apt-get install docker.io, then dockerd)"
        return f"the docker provider needs Docker Desktop; no docker CLI on {sys.platform}"


def _labels(image: str) -> dict[str, str]:
    import json

    code, said = _docker("image", "inspect", "--format", "{{json .Config.Labels}}", image)
    try:
        found = json.loads(said) if code == 0 else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _probe(provider: Docker) -> str | None:
    """Start a real jail with every flag one uses, through the link, an fd relayed in; None
    when the command inside reached it as uid 1000, else what went wrong."""
    check = "import os; os.write(3, b'ok' if os.getuid() == 1000 else b'root')"
    confinement = Confinement((provider.python, "-I", "-c", check), "/", {"PATH": "/usr/bin:/bin"})
    ours, theirs = socket.socketpair()
    launch = provider.launch(confinement, [theirs.fileno()])
    try:
        done = subprocess.run(
            launch.argv,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            pass_fds=tuple(launch.pass_fds),
            env=launch.env,
        )
        theirs.close()
        ours.settimeout(5)
        heard = ours.recv(16) if done.returncode == 0 else b""
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    finally:
        ours.close()
        theirs.close()
        launch.cleanup()
    if heard == b"ok":
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit {done.returncode}, nothing came through the link"


def _detached(argv: list[str]) -> None:
    """Run a docker command without waiting for it (it outlives a harness about to exit)."""
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=cli_env(),
        )
    except OSError:
        pass


def _cleanup(docker: str, name: str, held: Sequence[socket.socket]) -> Callable[[], None]:
    """The container's removal, and a reaper for a harness killed before it: a shell of its
    own session waits on a pipe only the harness holds; when the harness cleans up, or dies
    (SIGKILL closes the pipe), the shell removes the container (`--rm` has removed one that
    ended; the daemon, not the harness, holds one that did not). Off the jail's path."""
    read, write = os.pipe()
    remove = shlex.join([docker, "rm", "--force", name])
    try:
        subprocess.Popen(
            ["/bin/sh", "-c", f"IFS= read -r said; exec {remove}"],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=cli_env(),
        )
    finally:
        os.close(read)
    pipe = [write]

    def cleanup() -> None:
        for sock in held:
            sock.close()
        for fd in pipe:  # (once: a second call must not close a reused fd number)
            os.close(fd)  # the shell reads EOF and removes the container
        pipe.clear()

    return cleanup


PROVIDER = Docker()
