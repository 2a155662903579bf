"""What runs offline on a machine with no jail (no bubblewrap, Podman or Docker; issue 53), as
the README and references/interop.md say: every README command a newcomer runs first, taken
from the README itself, run by the real CLI under a PATH holding everything this machine's PATH
holds but `bwrap`, `podman` and `docker`. The demo, your own suite's dry run, the trigger demo and a
skill's own evals under `--mock` run (the manifest says no jail was needed); the agent demo,
whose one task is judged by `pytest`, stops before any attempt in one line naming that task;
`--no-jail` runs it and says so once. Where a jail runs, which one `auto` chose is said once,
as the run starts."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from skill_eval.jail.container import PROVIDER as CONTAINER
from tests.helpers import REPO, jail_missing, journal_records, path_without, read_json, write_skill
from tests.test_jail_providers import FAKE_BWRAP

JAILS = ("bwrap", "podman", "docker")
README = REPO / "README.md"


@pytest.fixture(scope="module")
def no_jail_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return path_without(JAILS, tmp_path_factory.mktemp("path") / "bin")


def skill_eval(
    argv: list[str], path: str, cwd: Path, state: Path | None = None
) -> subprocess.CompletedProcess:
    """`skill-eval ARGV` as a user runs it, in `cwd`, with `path` as PATH (and `state` as its
    state root, for `run`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILL_EVAL_", "ANTHROPIC_"))}
    env["PATH"] = path
    where = ["--state-root", str(state)] if state is not None else []
    return subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", *argv, *where],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README has no '{title}' section"
    return match.group(1)


def prose(text: str) -> str:
    return " ".join(text.split())


def commands(text: str) -> list[list[str]]:
    """Each command of the text's bash blocks as argv, without the leading `skill-eval`."""
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    found = []
    for line in lines:
        argv = shlex.split(line.split("&&")[-1])  # `pip install -e . && skill-eval run ...`
        if argv and argv[0] == "skill-eval":
            found.append(argv[1:])
    return found


def isolation(done: subprocess.CompletedProcess) -> dict:
    assert done.stdout.strip(), done.stderr
    return read_json(done.stdout.strip().splitlines()[-1])["manifest"]["isolation"]


NEEDED_NONE = {"jail": "none", "isolated": False, "needed": False}


def test_the_readme_says_which_runs_need_a_jail() -> None:
    platforms = prose(section("Run it for real"))
    assert (
        "The `anthropic`, `openai` and `mock` executors need no jail, nor do judges other than "
        "`pytest` and `python`: the demo above, your own suite's dry run, the trigger demo and "
        "`run my-skill --mock` run where none can." in platforms
    )
    assert (
        "The bundled agent demo dry-runs offline where a jail runs: one task's judge is a "
        "`pytest`, and code a judge runs is jailed under `--mock` too (without a jail the run "
        "stops naming that task; `--no-jail` runs it unconfined)"
    ) in prose(section("Agent tasks"))
    interop = prose((REPO / "references" / "interop.md").read_text(encoding="utf-8"))
    assert (
        "What runs offline on a machine with no jail (no bubblewrap, Podman or Docker): `run "
        "SKILL_DIR --mock` (an eval set's checks, input `files` included, make no judge that "
        "runs code), `validate` and `gate`."
    ) in interop


@pytest.mark.slow  # real runs of the README's commands in subprocesses
def test_the_demo_own_suite_and_trigger_demo_run_with_no_jail_on_path(
    tmp_path: Path, no_jail_path: str
) -> None:
    [demo] = commands(section("Quickstart"))
    done = skill_eval(demo, no_jail_path, REPO, tmp_path / "state")
    assert done.returncode == 0, done.stderr  # PASS, as the README says
    assert isolation(done) == NEEDED_NONE
    assert "jail" not in done.stderr and "Traceback" not in done.stderr

    own = section("Your own suite")
    for block in re.findall(r"^```yaml\n(.*?)^```", own, re.M | re.S):
        target = tmp_path / block.splitlines()[0][2:].strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block, encoding="utf-8")
    write_skill(tmp_path / "my-skill", "Start with `fix:` or `feat:`; credit issues as `#N`.")
    validate, run = commands(own)
    done = skill_eval(validate, no_jail_path, tmp_path)
    assert done.returncode == 0, done.stderr
    done = skill_eval(run, no_jail_path, tmp_path, tmp_path / "state")
    assert done.returncode == 4, done.stderr  # not enough evidence, as the README says
    assert isolation(done) == NEEDED_NONE

    triggers = (REPO / "references" / "triggers.md").read_text(encoding="utf-8")
    [trigger_demo] = [c for c in commands(triggers) if "task_suites/demo-triggers" in c]
    assert "task_suites/demo-triggers/` dry-runs offline" in prose(section("Trigger suites"))
    done = skill_eval(trigger_demo, no_jail_path, REPO, tmp_path / "state")
    assert done.returncode == 0, done.stderr
    assert isolation(done) == NEEDED_NONE


@pytest.mark.slow  # real runs of the README's commands in subprocesses
def test_a_skills_own_evals_with_input_files_run_under_mock_with_no_jail(
    tmp_path: Path, no_jail_path: str
) -> None:
    skill = write_skill(tmp_path / "my-skill", "Answer with Mock.")
    (skill / "evals" / "files").mkdir(parents=True)
    (skill / "evals" / "files" / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    evals = {
        "skill_name": "my-skill",
        "evals": [
            {
                "id": 1,
                "prompt": "Sum data.csv",
                "files": ["evals/files/data.csv"],
                "assertions": [{"type": "contains", "value": "Mock"}],
            }
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    done = skill_eval(["run", "my-skill", "--mock"], no_jail_path, tmp_path, tmp_path / "state")
    assert done.returncode in (0, 4), done.stderr  # a verdict, not exit 3 after every attempt
    assert isolation(done) == NEEDED_NONE
    done = skill_eval(["gate", "my-skill"], no_jail_path, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow  # real runs of the README's commands in subprocesses
def test_the_agent_demo_stops_in_one_line_and_runs_once_told_no_jail(
    tmp_path: Path, no_jail_path: str
) -> None:
    [agent_demo] = commands(section("Agent tasks"))
    state = tmp_path / "state"
    done = skill_eval(agent_demo, no_jail_path, REPO, state)
    assert done.returncode == 3 and done.stdout == "", done.stderr
    [line] = done.stderr.strip().splitlines()  # no warning saying it first
    assert line.startswith(
        "Error: task_suites/demo-agent/task_suite.yaml:45: tasks[1] (id "
        '"sales-report-tested").judge: its pytest judge runs code, only in a jail: no jail can '
        "run here ("
    ), line
    assert line.endswith("or pass --no-jail to run unconfined") and "Traceback" not in line
    for package in ("apt-get install bubblewrap", "podman runc", "docker.io"):
        assert line.count(package) == 1, line  # each provider's fix said once
    assert not (state / "runs").exists()  # before any attempt

    done = skill_eval(["validate", "task_suites/demo-agent"], no_jail_path, REPO)
    assert done.returncode == 0, done.stderr  # a warning: the check could not run here
    [warning] = done.stderr.strip().splitlines()
    assert warning.endswith(
        "not checked on its reference and an empty output: no jail can run here (the jail "
        "needs bubblewrap: install it (apt-get install bubblewrap); the container provider "
        "needs podman (apt-get install podman runc); the docker provider needs docker "
        "(apt-get install docker.io, then dockerd))"
    )  # no advice to pass --no-jail, which validate does not take

    done = skill_eval([*agent_demo, "--no-jail"], no_jail_path, REPO, state)
    assert done.returncode == 0, done.stderr  # the pytest judge reads the workspace unjailed
    lines = done.stderr.splitlines()
    assert lines[0].startswith("WARNING: no jail (--no-jail)")
    assert sum(line.startswith("WARNING: no jail") for line in lines) == 1  # said once
    assert "pass --no-jail" not in done.stderr  # no advice to do what it did
    assert isolation(done)["jail"] == "none" and isolation(done)["isolated"] is False
    [journal] = state.glob("runs/*/attempts.jsonl")
    statuses = {(a["arm"], a["task_id"]): a["status"] for a in journal_records(journal)}
    assert statuses[("candidate", "sales-report-tested")] == "passed"  # pytest on the copy


@pytest.mark.slow
@pytest.mark.skipif(CONTAINER.problem() is not None, reason=str(CONTAINER.problem()))
def test_auto_says_the_provider_it_chose_once_as_the_run_starts(tmp_path: Path) -> None:
    """A bubblewrap that AppArmor stops (a stand-in `bwrap`) and Podman: auto chooses the
    container provider and says so once, before the plan, not again in the summary."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(FAKE_BWRAP, encoding="utf-8")
    (bin_dir / "bwrap").chmod(0o755)
    [agent_demo] = commands(section("Agent tasks"))
    path = f"{bin_dir}:{os.environ['PATH']}"
    done = skill_eval(agent_demo, path, REPO, tmp_path / "state")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("jail: ")]
    assert len(said) == 1, done.stderr
    assert said[0].startswith("jail: auto chose the container provider (bubblewrap: ")
    assert done.stderr.index(said[0]) < done.stderr.index("plan: attempts to run")
    assert isolation(done)["jail"] == "container" and isolation(done)["chosen"] == said[0]


@pytest.mark.slow
@pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))
def test_auto_says_bubblewrap_once_and_a_named_provider_nothing(tmp_path: Path) -> None:
    [agent_demo] = commands(section("Agent tasks"))
    done = skill_eval(agent_demo, os.environ["PATH"], REPO, tmp_path / "state")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("jail: ")]
    assert said == ["jail: auto chose the bubblewrap provider (the first that can run here)"]
    assert done.stderr.index(said[0]) < done.stderr.index("plan: attempts to run")
    done = skill_eval([*agent_demo, "--jail", "bubblewrap"], os.environ["PATH"], REPO, tmp_path)
    assert done.returncode == 0 and "jail: " not in done.stderr, done.stderr  # the user's word
    [demo] = commands(section("Quickstart"))  # nothing jailed: nothing said
    done = skill_eval(demo, os.environ["PATH"], REPO, tmp_path / "state")
    assert done.returncode == 0 and "jail" not in done.stderr, done.stderr
