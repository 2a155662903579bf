"""Real agents in the docker provider's jail (#54), against the loopback fakes: the agent
demo and the trigger demo reach the verdicts they reach under bubblewrap (the mock demo's,
tests/agent_scripts.py); a Claude Code attempt passes its task while a Bash command in it
finds no network interface but loopback, no key in its environment or its files, and no
place to write but the workspace, HOME and /tmp."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.executors.claude.binary import bundled_cli
from skill_eval.jail.docker import PROVIDER as DOCKER
from tests.agent_runs import run_agent
from tests.agent_scripts import AGENT_EXPECTED, TRIGGER_EXPECTED, agent_rules, trigger_rules
from tests.test_agent_attacks import attack, bash, write
from tests.test_agent_executors import AGENT_ARGS, TRIGGER_ARGS, statuses

pytestmark = [
    pytest.mark.skipif(DOCKER.problem() is not None, reason=f"docker: {DOCKER.problem()}"),
    pytest.mark.skipif(bundled_cli() is None, reason="claude-agent-sdk not installed"),
    pytest.mark.slow,  # the real CLI, 10 to 16 attempts a run
]
DOCKER_JAIL = ["--jail", "docker"]


def test_the_agent_demo_reaches_the_same_verdicts_in_docker(tmp_path: Path) -> None:
    run = run_agent(tmp_path, "claude", [*AGENT_ARGS, *DOCKER_JAIL], agent_rules("claude"))
    assert run.code == 0, run.err
    assert statuses(run) == AGENT_EXPECTED, run.records()
    assert run.data()["evaluation"]["verdict"] == "pass"
    used = run.by_arm_task()[("candidate", "uses-the-skill")]
    assert used["meta"]["isolation"]["jail"] == "docker"
    assert [c["name"] for c in used["transcript"]] == ["Skill", "Read", "Write"]
    kept = run.kept("candidate", "uses-the-skill")
    files = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    assert files == ["inputs/q3/costs.csv", "report.md"]


def test_the_trigger_demo_reaches_the_same_rates_in_docker(tmp_path: Path) -> None:
    # (the fake answers an invoked skill after 240 s: an attempt that waited would show it)
    run = run_agent(
        tmp_path,
        "claude",
        [*TRIGGER_ARGS, *DOCKER_JAIL],
        trigger_rules("claude", answer_latency=240),
    )
    assert run.code == 0, run.err
    triggers = run.data()["triggers"]["arms"]
    for arm, expected in TRIGGER_EXPECTED.items():
        got = triggers[arm]
        assert (got["tpr"]["rate"], got["fpr"]["rate"], got["errors"]) == (
            expected["tpr"],
            expected["fpr"],
            0,
        )
    assert run.data()["evaluation"]["verdict"] == "pass"
    hit = run.by_arm_task()[("candidate", "notes-to-pdf")]
    assert hit["meta"]["stopped"] == "skill invoked" and hit["duration_ms"] < 240_000


# What a Bash command of the agent's looks for: every network interface, the harness's key in
# its environment and in every file it can read outside the system folders, and where it can
# write. Its answers go to probe.json in the workspace (copied back), and report.md is the
# task's work.
PROBE = r"""
import json, os, subprocess
KEY = "sk-" + "test"  # (not as one string: this file is in the workspace too)
found = []
SKIP = ("task", "fd", "fdinfo", "map_files", "ns", "net")
for top in ("/workspace", "/home", "/tmp", "/run", "/etc", "/proc/self"):
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not (folder == "/proc/self" and d in SKIP)]
        for name in files:
            try:
                with open(os.path.join(folder, name), "rb") as handle:
                    if KEY.encode() in handle.read(1 << 20):
                        found.append(os.path.join(folder, name))
            except OSError:
                pass
def writes(path):
    try:
        with open(os.path.join(path, "written-by-the-agent"), "w") as out:
            out.write("x")
        return True
    except OSError:
        return False
places = ["/", "/etc", "/usr", "/usr/local", "/var", "/opt", "/root", "/srv", "/dev",
          "/dev/mqueue", "/run", "/run/skill-eval", "/run/skill-eval-link", "/home",
          "/workspace", os.environ["HOME"], "/tmp"]
json.dump({
    "interfaces": sorted(os.listdir("/sys/class/net")),
    "routes": open("/proc/net/route").read().splitlines()[1:],
    "key_in_env": [k for k, v in os.environ.items() if KEY in v],
    "key_in_files": found,
    "writable": sorted(p for p in places if writes(p)),
    "home": os.environ["HOME"],
}, open("/workspace/probe.json", "w"))
open("/workspace/report.md", "w").write("# report\n")
print("probed")
"""


def test_a_claude_code_attempt_passes_and_its_bash_finds_no_network_key_or_place_to_write(
    tmp_path: Path,
) -> None:
    steps: list[Any] = [
        write("{cwd}/probe.py", PROBE),
        bash("python3 probe.py"),
        {"text": "Done."},
    ]
    run = attack(tmp_path, steps, args=tuple(DOCKER_JAIL))
    candidate = run.records()["candidate"]
    assert candidate["status"] == "passed", candidate
    assert candidate["meta"]["isolation"]["jail"] == "docker"
    probe = json.loads((run.kept("candidate") / "probe.json").read_text())
    assert probe["interfaces"] == ["lo"] and probe["routes"] == []
    assert probe["key_in_env"] == [] and probe["key_in_files"] == [], probe
    assert probe["writable"] == sorted(["/workspace", probe["home"], "/tmp"]), probe["writable"]
