"""The docker provider (#54) on Docker Engine here: its container has no network interface but
loopback, no capability, no /dev/shm or message queue to write, a read-only root and the caps
it was given; its sockets cross the link (link.py) whole and in order under back-pressure; a
SIGKILLed harness leaves no container; with bubblewrap and Podman hidden, `auto` picks it and
says so; a pytest-judge suite, the agent demo and the trigger demo reach the same verdicts as
under bubblewrap; a real Claude Code attempt in it passes its task while its Bash finds no
network, no key and no place to write but the workspace, HOME and /tmp.

Docker-free: a hostile copy-back stream (what a container on another machine sends for its
workspace) writes nothing outside its folder and is read within copyout.py's caps; the
agent image's pins are the install scripts' and the Dockerfile's. The attacks every provider
faces run on this one too, through the `jail_provider` fixture (tests/conftest.py).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.catalog import pinned_packages
from skill_eval.jail import Limits, providers
from skill_eval.jail.agent_image import LABEL, pins_differ
from skill_eval.jail.copyout import Caps
from skill_eval.jail.docker import PROVIDER as DOCKER
from skill_eval.jail.docker import host_root
from skill_eval.jail.docker_files import DockerFiles
from skill_eval.jail.session import JailBroken, JailedCommand
from skill_eval.jail.tree_wire import number, path_field
from tests.agent_clis import PINS as TESTED_PINS
from tests.helpers import REPO

PINS = pinned_packages()  # the agent executors' own (ExecutorSpec.package)

needs_docker = pytest.mark.skipif(
    DOCKER.problem() is not None, reason=f"docker: {DOCKER.problem()}"
)
LIMITS = Limits(memory_mb=None, data_mb=2048, disk_mb=64, processes=200, total_memory_mb=1024)
PY = (sys.executable, "-I", "-S", "-c")


def in_docker(script: str, stdin: bytes = b"", limits: Limits = LIMITS) -> tuple[list[bytes], Any]:
    lines: list[bytes] = []
    with JailedCommand("docker", limits) as jail:
        jail.start((*PY, script), {"PATH": "/usr/bin:/bin", "HOME": jail.home})
        ended = jail.run(stdin, 120, lambda line: lines.append(line) is None)
    return lines, ended


# -- the container -------------------------------------------------------------------------------

FACTS = r"""
import glob, json, os
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
def writes(path):
    try:
        with open(os.path.join(path, "probe"), "w") as f:
            f.write("x")
        return True
    except OSError:
        return False
def one(pattern):
    found = glob.glob(pattern, recursive=True)
    return open(found[0]).read().strip() if found else None
print(json.dumps({
    "uid": os.getuid(),
    "interfaces": sorted(os.listdir("/sys/class/net")),
    "cap_eff": status["CapEff"].strip(), "cap_bnd": status["CapBnd"].strip(),
    "no_new_privs": status["NoNewPrivs"].strip(),
    "shm": os.path.exists("/dev/shm"),
    "writable": sorted(p for p in ("/", "/etc", "/usr", "/dev", "/dev/mqueue", "/run",
        "/run/skill-eval", "/run/skill-eval-link", "/home", "/tmp", "/workspace",
        "/home/agent", os.path.dirname(os.__file__)) if writes(p)),
    "pids_max": one("/sys/fs/cgroup/**/pids.max"),
    "memory": one("/sys/fs/cgroup/**/memory.limit_in_bytes") or one("/sys/fs/cgroup/**/memory.max"),
    "hostname": open("/proc/sys/kernel/hostname").read().strip(),
    "env": sorted(os.environ),
}), flush=True)
"""


@needs_docker
def test_the_container_has_no_network_capability_or_writable_system() -> None:
    lines, ended = in_docker(FACTS)
    assert ended.code == 0, ended
    facts = json.loads(lines[0])
    assert facts["uid"] == 1000
    assert facts["interfaces"] == ["lo"]  # --network none: loopback alone
    assert facts["cap_eff"] == "0000000000000000" and facts["cap_bnd"] == "0000000000000000"
    assert facts["no_new_privs"] == "1"
    assert facts["shm"] is False  # --ipc none: no /dev/shm at all
    assert facts["writable"] == ["/home/agent", "/tmp", "/workspace"], facts["writable"]
    assert facts["pids_max"] == "200"
    assert int(facts["memory"]) == 1024 * 1024 * 1024
    assert facts["hostname"] == "jail"
    # the confinement's environment, nothing added (LC_CTYPE: Python's own C-locale
    # coercion, PEP 538, in the process that looks)
    assert set(facts["env"]) - {"LC_CTYPE"} == {"HOME", "PATH"}, facts["env"]


AT_THE_LINK = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, 1, 0, 0), ctypes.get_errno(), flush=True)  # PTRACE_ATTACH
try:
    open("/proc/1/mem", "rb")
    print("mem opened", flush=True)
except OSError as exc:
    print("mem", exc.errno, flush=True)
os.kill(1, 9)  # (no error: the kernel drops it, the first process has no SIGKILL handler)
os.kill(1, 15)
print("still here", flush=True)
"""


@needs_docker
def test_nothing_in_the_container_can_trace_read_or_stop_the_link() -> None:
    """The container's first process relays every stream: the command's uid can neither
    trace it, read its memory, nor kill it (the run finishes and says how it ended)."""
    lines, ended = in_docker(AT_THE_LINK)
    assert lines == [b"ptrace -1 1", b"mem 13", b"still here"], lines  # EPERM, EACCES
    assert ended.code == 0


@needs_docker
def test_the_link_carries_every_stream_whole_under_back_pressure() -> None:
    """4 MB of stdout read slowly, 1 MB of stderr and 3 MB of stdin at once: each arrives
    whole and in order (a reader that stops holds up no other channel)."""
    script = """
import hashlib, os, sys
got = sys.stdin.buffer.read()
sys.stderr.write("e" * 1_000_000)
sys.stderr.flush()
out = hashlib.sha256()
for i in range(40_000):
    line = f"{i:08d} " + "x" * 91 + "\\n"
    out.update(line.encode())
    sys.stdout.write(line)
sys.stdout.write(hashlib.sha256(got).hexdigest() + " " + out.hexdigest() + "\\n")
"""
    stdin = os.urandom(3 * 1024 * 1024)
    lines: list[bytes] = []

    def slowly(line: bytes) -> bool:
        if len(lines) < 3:
            time.sleep(0.5)  # the harness falls behind: the link must wait, not drop
        lines.append(line)
        return True

    with JailedCommand("docker", LIMITS) as jail:
        jail.start((*PY, script), {"PATH": "/usr/bin:/bin"})
        ended = jail.run(stdin, 300, slowly)
    assert ended.code == 0, ended
    *body, last = lines
    seen = hashlib.sha256(b"".join(line + b"\n" for line in body)).hexdigest()
    assert last.decode() == f"{hashlib.sha256(stdin).hexdigest()} {seen}"
    assert len(body) == 40_000 and ended.stderr.endswith("e" * 1000)


@needs_docker
def test_a_killed_harness_leaves_no_container(tmp_path: Path) -> None:
    harness = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from skill_eval.jail import Limits
from skill_eval.jail.session import JailBroken, JailedCommand
jail = JailedCommand("docker", Limits(memory_mb=None, data_mb=2048, disk_mb=64))
jail.start(["/bin/sleep", "300"], {{"PATH": "/usr/bin:/bin"}})
print("started", flush=True)
jail.run(b"", 300, lambda line: True)
"""
    proc = subprocess.Popen([sys.executable, "-c", harness], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
        label = f"label=org.skill-eval.harness={proc.pid}"
        assert _containers(label), "the jail's container is not labelled with its harness"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 60  # a loaded machine's daemon is slower
        while (left := _containers(label)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left == [], "a container outlived its SIGKILLed harness"
    finally:
        if proc.poll() is None:
            proc.kill()


def _containers(label: str) -> list[str]:
    done = subprocess.run(
        ["docker", "ps", "-aq", "--filter", label], capture_output=True, text=True, timeout=60
    )
    return done.stdout.split()


# -- choosing it ---------------------------------------------------------------------------------


def path_without(tmp_path: Path, hidden: tuple[str, ...]) -> str:
    """A PATH of links to every program on this PATH but `hidden` (first of a name wins)."""
    into = tmp_path / "bin"
    into.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isdir(directory):
            for entry in os.scandir(directory):
                link = into / entry.name
                if entry.name not in hidden and not os.path.lexists(link):
                    link.symlink_to(entry.path)
    return str(into)


PYTEST_CASES = {
    "report-ok": ('{"status": "ok"}', '{"status": "broken"}'),
    "report-both": ('{"status": "ok"}', '{"status": "ok"}'),
    "report-neither": ('{"status": "no"}', "not json"),
}


def pytest_suite_run(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    from tests.helpers import write_outputs, write_skill, write_suite
    from tests.test_judges_e2e import TEST_REPORT

    (tmp_path / "suite" / "fixtures").mkdir(parents=True)
    (tmp_path / "suite" / "fixtures" / "test_report.py").write_text(TEST_REPORT)
    judge = {"type": "pytest", "test_file": "fixtures/test_report.py", "timeout": 120}
    tasks = [{"id": t, "prompt": f"Task {t}", "judge": judge} for t in PYTEST_CASES]
    suite = write_suite(tmp_path / "suite", tasks)
    outputs = write_outputs(
        tmp_path / "outputs.yaml",
        {
            "candidate": {t: good for t, (good, _) in PYTEST_CASES.items()},
            "baseline": {t: bad for t, (_, bad) in PYTEST_CASES.items()},
        },
    )
    skill = write_skill(tmp_path / "skill")
    command = [sys.executable, "-m", "skill_eval.cli", "run", "--standalone"]
    command += ["--task-suite", str(suite), "--skill-path", str(skill), "--executor", "mock"]
    command += ["--mock-outputs", str(outputs), "--state-root", str(tmp_path / "state")]
    command += ["--max-retries", "0", "--policy", "delta", *extra]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )


def verdicts(done: Any) -> tuple[dict[str, Any], dict[str, bool], dict[str, bool]]:
    data = json.loads(Path(done.stdout.strip().splitlines()[-1]).read_text())
    arms = [
        {r["task_id"]: r["passed"] for r in data[f"{a}_results"]} for a in ("candidate", "baseline")
    ]
    return data, arms[0], arms[1]


@needs_docker
def test_auto_picks_docker_when_bubblewrap_and_podman_are_hidden_and_says_so(
    tmp_path: Path,
) -> None:
    path = path_without(tmp_path, ("bwrap", "podman"))
    done = pytest_suite_run(tmp_path, env={"PATH": path})
    data, candidate, baseline = verdicts(done)
    assert data["manifest"]["isolation"]["jail"] == "docker", data["manifest"]["isolation"]
    said = [line for line in done.stderr.splitlines() if line.startswith("jail: auto chose")]
    assert said and said[0].startswith("jail: auto chose the docker provider (bubblewrap: "), said
    assert "container: the container provider needs podman" in said[0]
    assert candidate == {"report-ok": True, "report-both": True, "report-neither": False}
    assert baseline == {"report-ok": False, "report-both": True, "report-neither": False}


@needs_docker
def test_a_pytest_suite_reaches_the_same_verdicts_under_docker_as_under_bubblewrap(
    tmp_path: Path,
) -> None:
    if (why := providers.REGISTRY.get("bubblewrap").problem()) is not None:  # type: ignore[union-attr]
        pytest.skip(f"bubblewrap: {why}")
    found = {}
    for jail in ("bubblewrap", "docker"):
        done = pytest_suite_run(tmp_path / jail, "--jail", jail)
        data, candidate, baseline = verdicts(done)
        assert data["manifest"]["isolation"]["jail"] == jail
        found[jail] = (data["evaluation"]["verdict"], candidate, baseline)
    assert found["docker"] == found["bubblewrap"], found
    assert found["docker"][1]["report-ok"] and not found["docker"][2]["report-ok"]


@needs_docker
def test_a_seed_over_the_jails_disk_is_refused_in_one_line_and_the_channel_holds(
    tmp_path: Path,
) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "big.bin").write_bytes(b"x" * (3 * 1024 * 1024))
    lines: list[bytes] = []
    with JailedCommand("docker", Limits(memory_mb=None, data_mb=2048, disk_mb=1)) as jail:
        home = jail.home
        jail.start((*PY, f"print(open('{home}/note').read(), flush=True)"), {"PATH": "/bin"})
        with pytest.raises(JailBroken, match=r"/workspace/big\.bin: No space left on device"):
            jail.seed(seed)
        jail.put(f"{home}/note", b"still in step")  # the same channel, after the refusal
        ended = jail.run(b"", 120, lambda line: lines.append(line) is None)
    assert lines == [b"still in step"] and ended.code == 0, ended


# -- the copy back, as a stream ------------------------------------------------------------------


def record(kind: bytes, path: bytes, *rest: bytes) -> bytes:
    return kind + path_field(path) + b"".join(rest)


def file_record(path: bytes, data: bytes, size: int | None = None) -> bytes:
    return (
        record(b"F", path, number(0o644, 4), number(len(data) if size is None else size, 8)) + data
    )


# (what the jail's side sends, the sentence the copy ends with, files copied)
HOSTILE = {
    "climbs out": (file_record(b"../escaped", b"x"), "a path out of the workspace", 0),
    "absolute": (file_record(b"/tmp/escaped", b"x"), "a path out of the workspace", 0),
    "through a file": (
        file_record(b"a", b"x") + file_record(b"a/b", b"y"),
        "could not be read back",
        1,
    ),
    "a folder before its parent": (record(b"D", b"no/such", number(0o755, 4)), "No such file", 0),
    "twice the same file": (file_record(b"a", b"x") + file_record(b"a", b"y"), "File exists", 1),
    "over the size cap": (file_record(b"big", b"", size=10**12), "big (1000000000000 bytes)", 0),
    "cut short": (file_record(b"a", b"xy", size=100), "the stream ended", 0),
    "unknown record": (b"Z", "a malformed copy stream", 0),
    "too many entries": (
        b"".join(file_record(b"f%d" % i, b"") for i in range(12)),
        "more than 10 files",
        10,
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_copy_stream_writes_nothing_outside_and_says_why(
    tmp_path: Path, case: str
) -> None:
    sent, said, files = HOSTILE[case]
    ours, theirs = socket.socketpair()
    asked = bytearray()

    def jail_side() -> None:
        while len(asked) < 1 + 2 + len(b"/workspace") + 24:  # the request: R, path, caps
            asked.extend(theirs.recv(4096))
        theirs.sendall(sent)
        theirs.shutdown(socket.SHUT_WR)

    server = threading.Thread(target=jail_side, daemon=True)
    server.start()
    into = tmp_path / "area" / "copy"
    copied = DockerFiles(ours, kill=lambda: None).collect("/workspace", into, Caps(files=10))
    server.join(10)
    assert said in (copied.over or ""), copied
    assert copied.files == files
    outside = [p for p in into.parent.rglob("*") if not (p == into or into in p.parents)]
    assert outside == []
    assert not Path("/tmp/escaped").exists()


# -- the agent image -----------------------------------------------------------------------------


def test_the_image_pins_are_the_install_scripts_and_the_dockerfiles() -> None:
    scripts = (REPO / "scripts" / "install_agents.sh").read_text()
    scripts += (REPO / "scripts" / "install_claude_cli.sh").read_text()
    dockerfile = (REPO / "containers" / "agent-jail" / "Dockerfile").read_text()
    for variable, package in (
        ("CLAUDE_CLI_VERSION", "@anthropic-ai/claude-code"),
        ("OPENCODE_VERSION", "opencode-ai"),
        ("CODEX_VERSION", "@openai/codex"),
    ):
        assert re.search(rf'{variable}="\$\{{{variable}:-{re.escape(PINS[package])}\}}"', scripts)
        assert re.search(rf"ARG {variable}={re.escape(PINS[package])}\n", dockerfile), variable
    assert {PINS["opencode-ai"], PINS["@openai/codex"]} == set(TESTED_PINS.values())


def test_an_image_off_the_pins_or_unlabelled_is_named() -> None:
    good = {LABEL + package: version for package, version in PINS.items()}
    assert pins_differ("img", good, PINS) is None
    off = pins_differ("img", {**good, LABEL + "opencode-ai": "1.0.0"}, PINS)
    assert off == (
        "the docker image img holds agent CLIs not at skill-eval's pins: opencode-ai 1.0.0 "
        f"(pinned: {PINS['opencode-ai']})"
    )
    assert "no org.skill-eval.npm.* labels" in (pins_differ("img", {"maintainer": "x"}, PINS) or "")


@needs_docker
def test_a_run_on_an_image_off_the_pins_says_so() -> None:
    name = "skill-eval-test-labels:off-pins"
    empty = io.BytesIO()
    tarfile.open(fileobj=empty, mode="w").close()  # an empty root: labels are all it is for
    subprocess.run(
        ["docker", "import", "--change", f"LABEL {LABEL}opencode-ai=0.0.1", "-", name],
        input=empty.getvalue(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    try:
        warning = DOCKER.variant(name).image_warning(PINS) or ""
        assert "opencode-ai 0.0.1 (pinned: " in warning and "claude-code missing" in warning
    finally:
        subprocess.run(["docker", "rmi", "-f", name], capture_output=True, timeout=120)


# -- a run on an image of its own (`docker:IMAGE`), as on Docker Desktop ---------------------------

SYSTEM_PYTHON = Path("/usr/bin/python3.11")


def _needed_libraries(programs: list[Path]) -> set[Path]:
    found: set[Path] = set()
    for program in programs:
        done = subprocess.run(["ldd", str(program)], capture_output=True, text=True, timeout=60)
        found |= {Path(p) for p in re.findall(r"(/\S+\.so[.\d]*)", done.stdout)}
    return found


@pytest.fixture(scope="module")
def small_image() -> str:
    """An image with a Python of its own (this machine's /usr/bin/python3.11 and its standard
    library, the C libraries they load, env, prlimit, sh) and nothing of the harness's
    interpreter, labelled at the pins: what the agent image gives the jail, without a
    registry. Imported once per engine (its name is its content's hash)."""
    if not SYSTEM_PYTHON.is_file() or shutil.which("ldd") is None:
        pytest.skip("no /usr/bin/python3.11 to make a small image of")
    stdlib = SYSTEM_PYTHON.parent.parent / "lib" / "python3.11"
    programs = [SYSTEM_PYTHON, Path("/usr/bin/env"), Path("/usr/bin/prlimit"), Path("/bin/sh")]
    modules = sorted((stdlib / "lib-dynload").glob("*.so"))
    files = {*programs, *_needed_libraries([*programs, *modules])}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        with tarfile.open(fileobj=io.BytesIO(host_root())) as skeleton:
            for member in skeleton.getmembers():  # the mountpoints and the top links
                tar.addfile(member)
        for path in sorted(files):  # (at its folder's real path: /bin is a link here)
            where = os.path.join(os.path.realpath(path.parent), path.name)
            tar.add(os.path.realpath(path), arcname=where.lstrip("/"))
        python3 = tarfile.TarInfo("usr/bin/python3")
        python3.type, python3.linkname = tarfile.SYMTYPE, "python3.11"
        tar.addfile(python3)
        skipped = {"test", "idlelib", "tkinter", "turtledemo", "__pycache__", "ensurepip"}
        tar.add(stdlib, arcname=str(stdlib).lstrip("/"),
                filter=lambda m: None if Path(m.name).name in skipped else m)  # fmt: skip
    data = buffer.getvalue()
    name = f"skill-eval-test-python:{hashlib.sha256(data).hexdigest()[:12]}"
    labels = [a for p, v in PINS.items() for a in ("--change", f'LABEL "{LABEL}{p}"="{v}"')]
    if subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode:
        subprocess.run(
            ["docker", "import", *labels, "-", name], input=data, capture_output=True, check=True
        )
    return name


@needs_docker
def test_a_jail_on_an_image_runs_the_images_python_and_its_workspace_comes_back(
    tmp_path: Path, small_image: str
) -> None:
    kind = f"docker:{small_image}"
    provider = providers.resolve(kind)  # (its probe started a jail on the image)
    assert (provider.name, provider.python, provider.warning()) == ("docker", "python3", None)
    seed = tmp_path / "seed"
    (seed / "inputs").mkdir(parents=True)
    (seed / "inputs" / "task.txt").write_text("seeded")
    script = """
import os, sys
print(sys.executable, open("inputs/task.txt").read(), os.path.exists(sys.argv[0]), flush=True)
open("out.txt", "w").write("made in the image")
"""
    lines: list[bytes] = []
    with JailedCommand(kind, LIMITS) as jail:
        assert jail.python == "python3"  # (the shell prefix runs the image's own)
        jail.start((jail.python, "-I", "-S", "-c", script), {"PATH": "/usr/bin:/bin"})
        jail.seed(seed)
        ended = jail.run(b"", 120, lambda line: lines.append(line) is None)
        copied = jail.collect(tmp_path / "back", Caps())
    assert ended.code == 0, ended
    assert lines == [b"/usr/bin/python3 seeded False"]  # not the harness's interpreter
    assert (tmp_path / "back" / "out.txt").read_text() == "made in the image"
    assert copied.files == 2 and copied.over is None
