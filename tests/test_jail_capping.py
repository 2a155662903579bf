"""A jail's caps go on its processes while they start (jail/capping.py): every process of the
tree ends up in the jail's cgroup and under its rlimits, what it starts afterwards is born
capped, and a tree that cannot be capped is refused before anything of the candidate runs.
Real processes and, where this machine lets the harness make one, a real cgroup."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from skill_eval.jail import Limits, cgroup
from skill_eval.jail.capping import Capping
from skill_eval.jail.ended import JailBroken
from skill_eval.jail.pipes import process_tree

LIMITS = Limits(memory_mb=2048, file_size_mb=64, processes=321)
# A parent that starts a child, then (on a line on stdin) one more: the grandchild started
# after capping must inherit the caps.
TREE = """
import subprocess, sys, time
first = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print("up", flush=True)
sys.stdin.readline()
second = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(second.pid, flush=True)
time.sleep(60)
"""


def _limit(pid: int, name: str) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith(name):
            return line.split()[-3]  # the soft limit's column (units follow)
    raise AssertionError(f"no {name} in /proc/{pid}/limits")


def _started() -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    return proc


def test_every_process_and_what_it_starts_later_is_capped() -> None:
    made = cgroup.Cgroup.make(LIMITS)
    proc = _started()
    try:
        capping = Capping(proc.pid, made, LIMITS)
        time.sleep(0.05)  # the thread caps while the tree starts
        capping.finish()
        tree = process_tree(proc.pid)
        assert len(tree) == 2
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        later = int(proc.stdout.readline())
        for pid in (*tree, later):
            assert _limit(pid, "Max processes") == "321"
            assert _limit(pid, "Max file size") == str(64 * 1024 * 1024)
            assert _limit(pid, "Max address space") == str(2048 * 1024 * 1024)
        if made is not None:
            for folder in made.folders:
                inside = set(map(int, (folder / "cgroup.procs").read_text().split()))
                assert {*tree, later} <= inside
    finally:
        for pid in process_tree(proc.pid)[1:]:
            subprocess.run(["kill", "-9", str(pid)], check=False)
        proc.kill()
        proc.wait()
        if made is not None:
            made.close()


def test_a_tree_that_cannot_be_capped_is_refused(tmp_path: Path) -> None:
    """A cgroup that refuses the processes (here: a folder that is no cgroup at all, whose
    cgroup.procs cannot be written) stops the jail with one line, before `go`."""
    missing = cgroup.Cgroup((tmp_path / "gone",), 1)
    proc = _started()
    try:
        capping = Capping(proc.pid, missing, LIMITS)
        with pytest.raises(JailBroken, match="cannot cap the jail's processes"):
            capping.finish()
    finally:
        for pid in process_tree(proc.pid)[1:]:
            subprocess.run(["kill", "-9", str(pid)], check=False)
        proc.kill()
        proc.wait()
