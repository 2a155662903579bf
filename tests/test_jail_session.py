"""An agent attempt's jail (#28): a command held by the holder around a tmpfs workspace, seeded
before and copied out after; nothing it starts survives it; its stdout cannot be forged from
inside; the workspace is capped in bytes and copied out within caps, links never followed.
Each runs on every jail provider (bubblewrap, Podman, Docker: tests/conftest.py): a provider
that cannot start here skips, naming why (the `none` kind runs everywhere)."""

from __future__ import annotations

import ast
import http.server
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from skill_eval.executors.claude.dialect import MESSAGES
from skill_eval.jail import Limits, cgroup, teardown
from skill_eval.jail.api_proxy import FORWARD_PORT, ApiProxy
from skill_eval.jail.copyout import Caps
from skill_eval.jail.session import JailedCommand
from tests.conftest import jail_params

# Every attack runs against each provider that can start here (#40).
JAILS = jail_params()
LIMITS = Limits(memory_mb=None, data_mb=2048, disk_mb=64)
PY = (sys.executable, "-I", "-S", "-c")


def run_script(
    kind: str,
    script: str,
    tmp_path: Path,
    *,
    stdin: bytes = b"",
    timeout: float = 120,  # only a hang takes that long, even on a loaded machine
    stop_at: bytes | None = None,
    caps: Caps | None = None,
    seed: dict[str, str] | None = None,
    forward: ApiProxy | None = None,
) -> tuple[list[bytes], object, object, Path]:
    lines: list[bytes] = []
    host = tmp_path / "host-workspace"
    source = tmp_path / "seed"
    source.mkdir(exist_ok=True)
    for name, text in (seed or {}).items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)

    def on_line(line: bytes) -> bool:
        lines.append(line)
        return line != stop_at

    with JailedCommand(kind, LIMITS, forward=forward) as jail:  # type: ignore[arg-type]
        env = {"PATH": "/usr/bin:/bin", "HOME": jail.home, "WS": jail.workspace}
        jail.start((*PY, script), env)
        jail.seed(source)
        ended = jail.run(stdin, timeout, on_line)
        copied = jail.collect(host, caps or Caps())
    return lines, ended, copied, host


@pytest.mark.parametrize("kind", JAILS)
def test_a_command_runs_in_its_seeded_workspace_and_its_files_come_out(
    tmp_path: Path, kind: str
) -> None:
    script = """
import os, sys
print(open("task.txt").read().strip(), flush=True)
print(sys.stdin.read().strip(), flush=True)
os.makedirs("out", exist_ok=True)
open("out/report.md", "w").write("# done")
print(os.getcwd(), os.environ["HOME"], flush=True)
"""
    lines, ended, copied, host = run_script(
        kind, script, tmp_path, stdin=b"the prompt", seed={"task.txt": "seeded"}
    )
    assert lines == [b"seeded", b"the prompt", b"/workspace /home/agent"]
    assert ended.code == 0 and not ended.stopped  # type: ignore[attr-defined]
    assert (host / "out" / "report.md").read_text() == "# done"
    assert (host / "task.txt").read_text() == "seeded"
    assert copied.files == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", JAILS)
def test_a_daemon_started_in_the_attempt_does_not_outlive_it(tmp_path: Path, kind: str) -> None:
    marker = f"skill-eval-daemon-{os.getpid()}-{time.monotonic_ns()}"
    script = f"""
import subprocess, time
daemon = subprocess.Popen(["{marker}", "300"], executable="/bin/sleep", start_new_session=True)
time.sleep(0.1)
running = b"{marker}" in open(f"/proc/{{daemon.pid}}/cmdline", "rb").read()
print("started" if running else "not started", flush=True)
"""
    lines, ended, _, _ = run_script(kind, script, tmp_path)
    assert lines == [b"started"]  # a daemon of its own session, running when the command ended
    deadline = time.monotonic() + 30  # it dies with the jail: poll, a loaded machine is slower
    while (alive := _alive(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive == []


def _alive(marker: str) -> list[str]:
    return [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize("kind", JAILS)
def test_the_harness_is_not_visible_and_the_stream_cannot_be_reopened(
    tmp_path: Path, kind: str
) -> None:
    script = f"""
import os
print("harness-visible" if os.path.exists("/proc/{os.getpid()}/environ") else "harness-hidden",
      flush=True)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(len(pids), flush=True)
try:
    with open("/proc/self/fd/1", "w") as forged:
        forged.write("forged line\\n")
    print("reopened", flush=True)
except OSError as exc:
    print("refused", exc.errno, flush=True)
"""
    lines, _, _, _ = run_script(kind, script, tmp_path)
    assert lines[0] == b"harness-hidden"
    assert int(lines[1]) <= 4  # bwrap's init, the holder, this command (and its ls)
    assert lines[2].startswith(b"refused") and b"forged line" not in b"".join(lines)


@pytest.mark.parametrize("kind", JAILS)
def test_stopping_on_a_line_kills_the_command(tmp_path: Path, kind: str) -> None:
    script = """
import time
print("first", flush=True)
print("enough", flush=True)
time.sleep(600)
print("never", flush=True)
"""
    started = time.monotonic()
    lines, ended, _, _ = run_script(kind, script, tmp_path, stop_at=b"enough", timeout=900)
    # not killed, it would sleep 600 s: a bound far below that holds on a loaded machine
    assert time.monotonic() - started < 300
    assert not ended.timed_out  # type: ignore[attr-defined]
    assert lines == [b"first", b"enough"]
    assert ended.stopped and ended.code is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", JAILS)
def test_a_timeout_ends_the_command_and_the_workspace_still_comes_out(
    tmp_path: Path, kind: str
) -> None:
    script = """
import time
open("partial.txt", "w").write("so far")
print("working", flush=True)
time.sleep(600)
"""
    # 10 s: time for the jail and Python to start and write the file on a loaded machine
    lines, ended, _, host = run_script(kind, script, tmp_path, timeout=10)
    assert lines == [b"working"]
    assert ended.timed_out and ended.code is None  # type: ignore[attr-defined]
    assert (host / "partial.txt").read_text() == "so far"


@pytest.mark.parametrize("kind", JAILS)
def test_the_workspace_is_capped_in_bytes(tmp_path: Path, kind: str) -> None:
    script = """
import errno
try:
    with open("big.bin", "wb") as f:
        for _ in range(200):
            f.write(b"x" * (1 << 20))
    print("wrote it all", flush=True)
except OSError as exc:
    print("full", errno.errorcode.get(exc.errno), flush=True)
"""
    lines, _, _, host = run_script(kind, script, tmp_path)
    assert lines[0].startswith(b"full")  # 64 MiB tmpfs, 200 MiB asked
    assert (host / "big.bin").stat().st_size <= 64 * 1024 * 1024


@pytest.mark.parametrize("kind", ["none", *JAILS])
def test_links_and_fifos_are_never_followed_on_the_way_out(tmp_path: Path, kind: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    script = f"""
import os
os.symlink("{secret}", "leak.txt")
os.symlink("/etc/passwd", "passwd")
os.mkfifo("pipe")
open("real.txt", "w").write("mine")
print("ok", flush=True)
"""
    _, _, copied, host = run_script(kind, script, tmp_path)
    assert sorted(p.name for p in host.iterdir()) == ["real.txt"]
    assert copied.links == ("leak.txt", "passwd") and copied.special == ("pipe",)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["none", *JAILS])
def test_the_copy_out_stops_at_its_file_cap(tmp_path: Path, kind: str) -> None:
    script = """
for i in range(500):
    open(f"f{i:04d}.txt", "w").write("x")
print("made", flush=True)
"""
    _, _, copied, _ = run_script(kind, script, tmp_path, caps=Caps(files=100))
    assert copied.files == 100  # type: ignore[attr-defined]
    assert "more than 100 files" in (copied.over or "")  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["none", *JAILS])
def test_folders_and_links_count_toward_the_cap_too(tmp_path: Path, kind: str) -> None:
    """200,000 empty folders cost nothing to make in the jail: each is an entry to copy."""
    script = """
import os
for i in range(300):
    os.makedirs(f"d{i:04d}/e")
    os.symlink("/etc/passwd", f"l{i:04d}")
print("made", flush=True)
"""
    _, _, copied, host = run_script(kind, script, tmp_path, caps=Caps(files=100))
    assert copied.files == 0 and len(copied.links) <= 100  # type: ignore[attr-defined]
    assert "more than 100 files (folders and links count)" in (copied.over or "")  # type: ignore[attr-defined]
    assert sum(1 for _ in host.rglob("*")) <= 100


@pytest.mark.parametrize("kind", JAILS)
def test_a_jail_without_network_reaches_the_model_api_through_the_harness(
    tmp_path: Path, kind: str
) -> None:
    """Inside, 127.0.0.1:FORWARD_PORT is the model API: the harness's proxy answers, adding
    the real key; the jail itself holds only the placeholder and reaches nothing else."""
    seen: list[dict[str, str]] = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the base class's name
            seen.append({k.lower(): v for k, v in self.headers.items()})
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 5))
            self.end_headers()
            self.wfile.write(b"echo:" + body)

        def log_message(self, *args: object) -> None:
            pass

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = ApiProxy(
        f"http://127.0.0.1:{upstream.server_address[1]}", {"x-api-key": "REAL"}, MESSAGES
    )
    script = f"""
import http.client, os, socket
c = http.client.HTTPConnection("127.0.0.1", {FORWARD_PORT}, timeout=10)
key = "{proxy.placeholder}"
c.request("POST", "/v1/messages", body=b'{{"model":"m"}}', headers={{"x-api-key": key}})
print(c.getresponse().read().decode(), flush=True)
try:
    socket.create_connection(("1.1.1.1", 443), timeout=2)
    print("internet", flush=True)
except OSError:
    print("no network", flush=True)
"""
    try:
        lines, _, _, _ = run_script(kind, script, tmp_path, forward=proxy)
    finally:
        upstream.shutdown()
    assert lines == [b'echo:{"model":"m"}', b"no network"]
    assert seen[0]["x-api-key"] == "REAL"


def test_unjailed_runs_the_same_steps(tmp_path: Path) -> None:
    script = """
import os, sys
print(open("task.txt").read(), sys.stdin.read(), flush=True)
open("made.txt", "w").write(os.environ["WS"] == os.getcwd() and "here" or "elsewhere")
"""
    lines, ended, _, host = run_script(
        "none", script, tmp_path, stdin=b"prompt", seed={"task.txt": "seeded"}
    )
    assert lines == [b"seeded prompt"]
    assert ended.code == 0  # type: ignore[attr-defined]
    assert json.dumps((host / "made.txt").read_text()) == '"here"'


@pytest.mark.parametrize("kind", JAILS)
def test_the_command_holds_no_fd_of_the_holder(tmp_path: Path, kind: str) -> None:
    """Only its stdin, stdout and stderr: the holder's control socket and the API channel stay
    with the holder (a command holding them could answer for it or reach the harness)."""
    script = """
import os
print(sorted(int(fd) for fd in os.listdir("/proc/self/fd")), flush=True)
"""
    proxy = ApiProxy("http://127.0.0.1:9", {}, MESSAGES)
    lines, ended, _, _ = run_script(kind, script, tmp_path, forward=proxy)
    assert ended.code == 0  # type: ignore[attr-defined]
    assert json.loads(lines[0]) == [0, 1, 2, 3]  # 3: the listing's own


@pytest.mark.parametrize("kind", JAILS)
def test_a_program_that_cannot_start_is_exit_127_with_a_reason(tmp_path: Path, kind: str) -> None:
    with JailedCommand(kind, LIMITS) as jail:
        jail.start(["/nonexistent/claude", "-p"], {"PATH": "/usr/bin:/bin"})
        ended = jail.run(b"", 30, lambda line: True)
    assert ended.code == 127
    assert "cannot run /nonexistent/claude" in ended.stderr


@pytest.mark.parametrize(
    ("credentials", "seen_auth", "seen_key"),
    [
        ({"x-api-key": "REAL"}, None, "REAL"),  # a key: the client's credentials are replaced
        ({}, "Bearer OAUTH-LOGIN", "sk-ant-jail-x"),  # a subscription login: they pass
    ],
)
def test_the_api_proxy_replaces_the_clients_credentials_only_with_its_own(
    credentials: dict[str, str], seen_auth: str | None, seen_key: str | None
) -> None:
    seen: list[dict[str, str]] = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the base class's name
            seen.append({k.lower(): v for k, v in self.headers.items()})
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = ApiProxy(f"http://127.0.0.1:{upstream.server_address[1]}", credentials, MESSAGES)
    client, server_side = socket.socketpair()
    threading.Thread(target=proxy.serve, args=(server_side,), daemon=True).start()
    client.sendall(
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
        b"x-api-key: sk-ant-jail-x\r\nAuthorization: Bearer OAUTH-LOGIN\r\n"
        b"Connection: close\r\n\r\n{}"
    )
    reply = b""
    while chunk := client.recv(4096):
        reply += chunk
    upstream.shutdown()
    assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"ok")
    assert seen[0].get("authorization") == seen_auth and seen[0].get("x-api-key") == seen_key


ESCAPEE = """
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
cli = os.getpid()
child = os.fork()
if child == 0:  # code that escaped a shell wrapper: in the CLI's own domain
    tried = []
    pidfd = os.pidfd_open(cli)
    tried.append(("getfd", libc.syscall(438, pidfd, 1, 0), ctypes.get_errno()))
    tried.append(("ptrace", libc.ptrace(16, cli, 0, 0), ctypes.get_errno()))
    for name, call in (
        ("mem", lambda: os.open(f"/proc/{cli}/mem", os.O_WRONLY)),
        ("unix", lambda: socket.socket(socket.AF_UNIX).fileno()),
        ("preload", lambda: os.open("/etc/ld.so.preload", os.O_WRONLY | os.O_CREAT)),
        ("tcp", lambda: socket.create_connection(("127.0.0.1", 9), timeout=2).fileno()),
    ):
        try:
            tried.append((name, call(), 0))
        except OSError as exc:
            tried.append((name, -1, exc.errno))
    os.write(2, repr(tried).encode())  # the stream is the CLI's: the verdict goes to stderr
    os._exit(0)
os.waitpid(child, 0)
api = socket.create_connection(("127.0.0.1", PORT), timeout=5)  # the CLI's own way out
print("cli reached the forward", flush=True)
"""


@pytest.mark.parametrize("kind", JAILS)
def test_code_that_escapes_a_shell_finds_nothing_more_than_the_cli_had(
    tmp_path: Path, kind: str
) -> None:
    """The CLI's own Landlock domain (holder.py --confine) from its first instruction: a
    process of that domain (code run before a shell prefix) takes no fd of the CLI's stream,
    traces or writes into no process, makes no Unix socket, writes no /etc/ld.so.preload, and
    reaches the API forward only."""
    from skill_eval.jail.confine import landlock

    if not landlock():
        pytest.skip("this kernel has no Landlock")
    lines: list[bytes] = []
    proxy = ApiProxy("http://127.0.0.1:9", {"x-api-key": "sk-real"}, MESSAGES)
    with JailedCommand(kind, LIMITS, forward=proxy, confine=True) as jail:
        jail.start((*PY, ESCAPEE.replace("PORT", str(FORWARD_PORT))), {"PATH": "/usr/bin:/bin"})
        ended = jail.run(b"", 30, lambda line: lines.append(line) is None)
    assert lines == [b"cli reached the forward"], lines
    tried = {name: (result, errno) for name, result, errno in ast.literal_eval(ended.stderr)}
    assert set(tried) == {"getfd", "ptrace", "mem", "unix", "preload", "tcp"}, tried
    assert all(result < 0 for result, _ in tried.values()), tried


@pytest.mark.parametrize("kind", JAILS)
def test_a_fork_bomb_stops_at_the_jails_process_cap_even_as_root(tmp_path: Path, kind: str) -> None:
    """Its sleepers (600 s each) are gone long before they would end: they died with the
    jail, however long a busy machine takes to fork them or to kill them."""
    marker = f"bomb-{os.getpid()}-{time.monotonic_ns()}"
    script = f"""
import os, time
forked = failed = 0
for _ in range(1300):  # {marker}
    try:
        pid = os.fork()
    except OSError:
        failed += 1
        continue
    if pid == 0:
        os.close(1)
        time.sleep(600)
        os._exit(0)
    forked += 1
print(forked, failed, sum(p.isdigit() for p in os.listdir("/proc")), flush=True)
"""
    lines: list[bytes] = []
    limits = Limits(memory_mb=None, data_mb=2048, disk_mb=64, processes=100)
    with JailedCommand(kind, limits) as jail:
        jail.start((*PY, script), {"PATH": "/usr/bin:/bin"})
        jail.run(b"", 300, lambda line: lines.append(line) is None)  # only a hang takes 300 s
    forked, failed, live = map(int, lines[0].split())
    assert forked > 50 and failed > 1000 and live <= 100, (forked, failed, live)
    teardown.wait()  # a jail's end runs on a thread of its own
    deadline = time.monotonic() + 120
    while (alive := _alive(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive == [], "the sleepers outlived their jail"
    found = cgroup.place()  # (None: no cgroup here; RLIMIT_NPROC held, the harness not root)
    for parent in found.parents if found else ():
        assert not list(parent.glob(f"skill-eval-{os.getpid()}-*")), "a jail's cgroup was left"


# What a command in the jail can write and which sockets it can open (issue 50): each
# mountpoint and the usual scratch folders tried with a new file, each socket family with a
# new socket, io_uring (whose requests seccomp never sees) with its setup call.
REACH = r"""
import ctypes, os, socket
places = {line.split()[1] for line in open("/proc/mounts")}
places |= {"/", "/dev", "/dev/shm", "/dev/mqueue", "/run", "/var/tmp", "/etc", "/home", "/tmp"}
writable = []
for place in sorted(places):
    if place.startswith(("/proc", "/sys")):
        continue
    path = os.path.join(place, f".probe-{os.getpid()}")
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(path)
        writable.append(place)
    except OSError:
        pass
print("writable", " ".join(writable), flush=True)
families = {"unix": (1, 1), "inet": (2, 1), "inet6": (10, 1), "netlink": (16, 3),
            "packet": (17, 3), "alg": (38, 5), "vsock": (40, 1)}
opened = []
for name, (family, kind) in families.items():
    try:
        socket.socket(family, kind).close()
        opened.append(name)
    except OSError:
        pass
print("sockets", " ".join(opened), flush=True)
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print("io_uring", "yes" if libc.syscall(425, 8, params) >= 0 else "no", flush=True)
"""
# What every jail lets its commands write, whichever provider (references/security.md), and
# the socket families it lets them open (an agent's own domains drop unix: confine.py).
WRITABLE = {"/tmp", "/workspace", "/home/agent"}
SOCKETS = {"unix", "inet", "inet6", "netlink"}


def reach(lines: list[bytes]) -> dict[str, set[str]]:
    said = dict(line.decode().partition(" ")[::2] for line in lines)
    return {key: set(value.split()) for key, value in said.items()}


@pytest.mark.parametrize("kind", JAILS)
def test_a_jail_writes_only_its_documented_places_and_opens_no_vsock(
    tmp_path: Path, kind: str
) -> None:
    lines, ended, _, _ = run_script(kind, REACH, tmp_path)
    assert ended.code == 0, ended.stderr  # type: ignore[attr-defined]
    found = reach(lines)
    assert found["writable"] == WRITABLE  # no /dev/shm, no /dev/mqueue, nothing of the root
    assert found["sockets"] == SOCKETS  # no vsock (the host, on a VM), no packet, no alg
    assert found["io_uring"] == {"no"}
