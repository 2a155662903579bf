"""Jail providers (#40): a plugin's provider from an entry point runs a real judgement; `auto`
passes over a bubblewrap that may not create user namespaces (a fake `bwrap` that fails as
AppArmor makes it fail) and says so; with no provider at all one line names what to install,
exit 3."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skill_eval.jail import providers
from skill_eval.jail.container import PROVIDER as CONTAINER
from tests.helpers import write_outputs, write_skill
from tests.test_judges_e2e import make_suite, run

FAKE_BWRAP = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
CASES = {
    "report": ({"type": "pytest", "test_file": "fixtures/test_report.py"}, '{"status": "ok"}', "no")
}


def _no_jail_here() -> str | None:
    try:
        providers.resolve("auto")
    except providers.JailUnavailable as exc:
        return str(exc)
    return None


def test_a_plugins_provider_from_an_entry_point_runs_the_judgement(
    tmp_path: Path, logged_provider: Path
) -> None:
    data = run(tmp_path, CASES, "--jail", "logged")
    assert data["manifest"]["isolation"] == {"jail": "logged", "isolated": True}
    candidate, baseline = data["candidate_results"][0], data["baseline_results"][0]
    assert (candidate["passed"], baseline["passed"]) == (True, False), data
    assert "test_status_ok" in baseline["details"]
    launches = logged_provider.read_text().splitlines()
    # one jailed pytest judgement per arm, and the check on an empty output before the run:
    # every judge's code runs in the run's jail
    assert len(launches) == 3, launches


def _fake_bwrap(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(FAKE_BWRAP, encoding="utf-8")
    (bin_dir / "bwrap").chmod(0o755)
    return bin_dir


@pytest.mark.skipif(CONTAINER.problem() is not None, reason=str(CONTAINER.problem()))
def test_auto_passes_over_a_bubblewrap_denied_user_namespaces_and_says_so(tmp_path: Path) -> None:
    bin_dir = _fake_bwrap(tmp_path)
    script = (
        "from skill_eval.jail.providers import resolve, chosen\n"
        "print(resolve('auto').name)\nprint(chosen('auto'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        timeout=300,
    )
    name, said = done.stdout.strip().splitlines()
    assert name == "container", done.stderr
    assert said.startswith("jail: auto chose the container provider (bubblewrap: ")
    assert "setting up uid map: Permission denied" in said
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in said
    assert "AppArmor profile for bwrap" in said


def test_with_no_provider_one_line_names_what_to_install_exit_3(tmp_path: Path) -> None:
    bin_dir = _fake_bwrap(tmp_path)  # and no podman, no docker on this PATH
    suite = make_suite(tmp_path, CASES)
    outputs = write_outputs(
        tmp_path / "outputs.yaml", {"candidate": {"report": "x"}, "baseline": {"report": "y"}}
    )
    skill = write_skill(tmp_path / "skill")
    done = subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", "run", "--standalone"]
        + ["--task-suite", str(suite), "--skill-path", str(skill)]
        + ["--state-root", str(tmp_path / "state"), "--executor", "mock"]
        + ["--mock-outputs", str(outputs), "-q"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(bin_dir)},
        timeout=300,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 3, done.stderr
    errors = [line for line in lines if line.startswith("Error: ")]
    assert errors == [lines[-1]] and "Traceback" not in done.stderr, lines  # one line
    # the first task whose judge runs code, and why no jail runs here
    assert lines[-1].startswith(f"Error: {suite}")
    assert ".judge: its pytest judge runs code, only in a jail: no jail can run here (" in lines[-1]
    assert "apparmor_restrict_unprivileged_userns=0" in lines[-1]
    assert "the container provider needs podman (apt-get install podman runc)" in lines[-1]
    assert lines[-1].endswith("or pass --no-jail to run unconfined")
