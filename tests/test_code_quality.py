"""The code stays lint-clean: `ruff check` (a declared dependency) over the whole project."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "skill_eval",
                           "scripts", "tests"], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
