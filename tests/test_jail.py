"""The jail (#28): what a jailed command can see and do, and the attacks on the pytest judge
it stops (output code writing the run's journal, editing the suite's fixture on disk, quoting
a file from the user's home in an assertion, filling the disk, a venv under /tmp). Each runs on
every jail provider that can start here (the `jail_provider` fixture of tests/conftest.py): one
that cannot skips, naming why."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.jail import Confinement, JailUnavailable, Limits, Mount, process
from skill_eval.jail.providers import require
from skill_eval.judges import JudgeContext, build_judge, run_judge
from tests.test_judges_pytest import _gone


def jailed(
    kind: str,
    script: str,
    *,
    mounts: tuple[Mount, ...] = (),
    network: bool = False,
    limits: Limits | None = None,
    timeout: float = 120,  # only a hang takes that long, even on a loaded machine
) -> process.Finished:
    confinement = Confinement(
        (sys.executable, "-I", "-c", textwrap.dedent(script)),
        "/",
        {"PATH": "/usr/bin:/bin", "ONLY": "this"},
        mounts,
        network,
        limits or Limits(),
    )
    return process.run(kind, confinement, timeout)  # type: ignore[arg-type]


def test_a_jailed_command_sees_only_the_system_and_its_mounts(
    tmp_path: Path, jail_provider: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "attempts.jsonl").write_text("{}\n")
    shown = tmp_path / "shown"
    shown.mkdir()
    (shown / "in.txt").write_text("input")
    done = jailed(
        jail_provider,
        f"""
        import os
        assert not os.path.exists({str(state)!r})
        assert not os.path.exists({os.path.expanduser("~")!r} + "/.bashrc")
        assert open("/in/in.txt").read() == "input"
        try:
            open("/in/new.txt", "w")
        except OSError:
            pass
        else:
            raise SystemExit("a read-only mount took a write")
        # ours, plus what bwrap (PWD) and Python's locale coercion (LC_CTYPE) add
        assert set(os.environ) <= {{"PATH", "ONLY", "PWD", "LC_CTYPE"}}, dict(os.environ)
        assert os.environ["ONLY"] == "this"
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
        assert str({os.getpid()}) not in pids and len(pids) <= 3, pids
        print("JAILED OK")
        """,
        mounts=(Mount("ro", "/in", shown),),
    )
    assert (done.code, done.tail.strip()) == (0, "JAILED OK"), done.tail
    assert not (shown / "new.txt").exists()


def test_no_network_unless_asked(jail_provider: str) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        probe = f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {server.server_port}), timeout=3)
            except OSError as exc:
                print("REFUSED", exc)
            else:
                print("CONNECTED")
            """
        assert "REFUSED" in jailed(jail_provider, probe).tail
    finally:
        server.shutdown()


def test_nothing_started_in_the_jail_survives_it(jail_provider: str) -> None:
    marker = f"daemon-{uuid.uuid4().hex}"
    done = jailed(
        jail_provider,
        f"""
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", {marker!r}],
                         start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        """,
    )
    assert done.code == 0
    assert _gone(marker), "a setsid() daemon outlived its jail"


def test_the_writable_area_is_capped_in_bytes(jail_provider: str) -> None:
    done = jailed(
        jail_provider,
        """
        written = 0
        try:
            for i in range(16):
                with open(f"/tmp/big{i}", "wb") as handle:
                    for _ in range(4):
                        handle.write(b"x" * 1024 * 1024)
                        written += 1
        except OSError as exc:
            print("STOPPED", written, exc.errno)
        """,
        limits=Limits(disk_mb=8),
    )
    assert "STOPPED" in done.tail, done.tail
    assert int(done.tail.split()[1]) <= 8


def test_output_is_read_as_a_bounded_tail(jail_provider: str) -> None:
    done = jailed(
        jail_provider,
        """
        import sys
        for _ in range(64):
            sys.stdout.write("y" * 1024 * 1024)
        print("THE END")
        """,
    )
    assert done.printed_bytes > 64 * 1024 * 1024
    assert len(done.tail) <= process.TAIL_BYTES and done.tail.strip().endswith("THE END")


def test_a_timeout_kills_the_whole_jail(jail_provider: str) -> None:
    marker = f"hang-{uuid.uuid4().hex}"
    started = time.monotonic()
    done = jailed(
        jail_provider,
        f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", {marker!r}],
                         start_new_session=True)
        time.sleep(120)
        """,
        timeout=10,  # time for Python to start the child on a loaded machine
    )
    # a missed timeout would wait out the 120 s sleep
    assert done.code is None and time.monotonic() - started < 90
    assert _gone(marker)


def test_require_names_what_to_install_when_bubblewrap_is_missing(tmp_path: Path) -> None:
    # A PATH without bwrap, in a fresh interpreter: the probe is cached per process.
    script = (
        "from skill_eval.jail import JailUnavailable\n"
        "from skill_eval.jail.providers import require\n"
        "try:\n    require()\nexcept JailUnavailable as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(tmp_path)},
        timeout=300,
    )
    assert done.stdout.strip() == (
        "no jail can run here (the jail needs bubblewrap: install it (apt-get install "
        "bubblewrap); the container provider needs podman (apt-get install podman runc); the "
        "docker provider needs docker (apt-get install docker.io, then dockerd)); or pass "
        "--no-jail to run unconfined"
    )  # each provider's package said once (issue 53: it was said again after the list)
    assert require("none") == "none"
    assert issubclass(JailUnavailable, Exception)


# --- the attacks on the pytest judge ------------------------------------------------------


def make_suite(tmp_path: Path, test: str) -> Path:
    suite = tmp_path / "suite"
    (suite / "fixtures").mkdir(parents=True)
    (suite / "fixtures" / "test_out.py").write_text(textwrap.dedent(test), encoding="utf-8")
    return suite


RUNS_THE_OUTPUT = """
    import os

    def test_output():
        scope = {}
        exec(open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8").read(), scope)
        assert scope["DONE"]
"""


def judge_output(suite: Path, output: str, jail: str = "auto", **extra: object) -> JudgeResult:
    config = {"type": "pytest", "test_file": "fixtures/test_out.py", **extra}
    task = Task(id="t", prompt="p", judge=config, timeout_seconds=60)
    context = JudgeContext(suite_dir=suite, jail=jail)
    return run_judge(build_judge(config), task, Work(output), context)


def test_output_code_cannot_append_to_the_runs_journal(tmp_path: Path, jail_provider: str) -> None:
    journal = tmp_path / "state" / "runs" / "r1" / "attempts.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"honest": true}\n')
    suite = make_suite(tmp_path, RUNS_THE_OUTPUT)
    attack = (
        f"try:\n    open({str(journal)!r}, 'a').write('{{\"forged\": true}}\\n')\n"
        f"except OSError:\n    pass\nDONE = True\n"
    )
    result = judge_output(suite, attack, jail_provider)
    assert result.passed, result.details
    assert journal.read_text() == '{"honest": true}\n'


def test_output_code_cannot_edit_the_suites_fixture_on_disk(
    tmp_path: Path, jail_provider: str
) -> None:
    suite = make_suite(tmp_path, RUNS_THE_OUTPUT)
    fixture = suite / "fixtures" / "test_out.py"
    before = fixture.read_bytes()
    attack = (
        f"for path in [{str(fixture)!r}, 'fixtures/test_out.py']:\n"
        f"    try:\n        open(path, 'w').write('def test_x():\\n    pass\\n')\n"
        f"    except OSError:\n        pass\nDONE = True\n"
    )
    assert judge_output(suite, attack, jail_provider).passed
    assert fixture.read_bytes() == before


def test_output_code_cannot_quote_a_file_from_the_users_home(
    tmp_path: Path, jail_provider: str
) -> None:
    secret = f"aws_secret_{uuid.uuid4().hex}"
    home = Path(os.environ["HOME"])  # the isolation fixture's fake home
    (home / ".aws").mkdir(parents=True, exist_ok=True)
    (home / ".aws" / "credentials").write_text(secret)
    suite = make_suite(tmp_path, RUNS_THE_OUTPUT)
    attack = (
        f"text = ''\ntry:\n    text = open({str(home / '.aws' / 'credentials')!r}).read()\n"
        f"except OSError as exc:\n    text = str(exc)\nassert False, text\n"
    )
    result = judge_output(suite, attack, jail_provider)
    assert not result.passed
    assert secret not in result.details and secret not in str(result.data)


def test_output_code_cannot_fill_the_disk(tmp_path: Path, jail_provider: str) -> None:
    suite = make_suite(tmp_path, RUNS_THE_OUTPUT)
    attack = (
        "import os\nwritten = 0\ntry:\n"
        "    for i in range(16):\n"
        "        with open(f'big{i}', 'wb') as h:\n"
        "            for _ in range(8):\n"
        "                h.write(b'x' * 1024 * 1024); written += 1\n"
        "except OSError:\n    pass\nassert False, f'wrote {written} MiB'\n"
    )
    result = judge_output(suite, attack, jail_provider, disk_mb=16)
    assert not result.passed
    assert int(result.details.rsplit("wrote ", 1)[1].split()[0]) <= 16


def test_an_interpreter_under_tmp_reached_through_a_link_is_still_jailed(
    tmp_path: Path, jail_provider: str
) -> None:
    # skill-eval installed in a venv under /tmp: the jail shows that venv, and says so.
    link = tmp_path / "venv"
    link.symlink_to(Path(sys.prefix).resolve())
    python = link / "bin" / Path(sys.executable).name
    suite = make_suite(tmp_path, RUNS_THE_OUTPUT)
    script = (
        "import json, sys\nfrom pathlib import Path\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from tests.test_jail import judge_output\n"
        "result = judge_output(Path(sys.argv[1]), 'DONE = True', sys.argv[3])\n"
        "print(json.dumps([result.passed, result.data.get('isolation'), "
        "result.details]))\n"
    )
    done = subprocess.run(
        [str(python), "-c", script, str(suite), str(Path(__file__).parent.parent), jail_provider],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(f'[true, "{jail_provider}"'), done.stdout


def test_the_harness_processes_are_not_visible(tmp_path: Path, jail_provider: str) -> None:
    suite = make_suite(tmp_path, RUNS_THE_OUTPUT)
    attack = (
        f"import os\npids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        f"assert str({os.getpid()}) not in pids and len(pids) < 10, pids\nDONE = True\n"
    )
    result = judge_output(suite, attack, jail_provider)
    assert result.passed, result.details
