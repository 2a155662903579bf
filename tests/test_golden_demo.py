"""The README's demo run gives the artifact it gave before the attempt seams were reshaped.

`data/golden/demo-artifact.json` was written by the README quickstart command on the commit
before `Work`, runner-owned workspaces and `Attempt.meta` (ea6d9f2). A fresh run must equal it
apart from the fields that name a version, a time, the run id or a path on this machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, read_json, run_cli

GOLDEN = Path(__file__).parent / "data" / "golden" / "demo-artifact.json"
SUITE = "task_suites/demo/task_suite.yaml"
# Keys whose values are a version, a moment, a duration, the run id or a machine's path.
VOLATILE = {"run_id", "created_at", "started_at", "finished_at", "duration_ms",
            "harness_version", "truth_anchor", "run_dir", "state_root"}


def normalized(value: Any, roots: dict[str, str]) -> Any:
    """`value` with volatile keys blanked and machine paths replaced by placeholders."""
    if isinstance(value, dict):
        return {k: "<volatile>" if k in VOLATILE else normalized(v, roots)
                for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v, roots) for v in value]
    if isinstance(value, str):
        for root, name in roots.items():
            value = value.replace(root, name)
    return value


def test_demo_artifact_matches_the_recorded_one(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the README command, with its relative paths, from the repo root
    code, out, err = run_cli("run", "--standalone", "--task-suite", SUITE,
                             "--skill-path", "fixtures/demo-skill-improved", "--mock",
                             "--mock-outputs", "task_suites/demo/mock_outputs.yaml",
                             "--state-root", str(tmp_path / "state"), "-q")
    assert code == 0, err
    fresh = read_json(out.strip())
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    golden_repo = golden["task_suite"].removesuffix("/" + SUITE)
    want = normalized(golden, {golden_repo: "<repo>"})
    got = normalized(fresh, {str(REPO): "<repo>"})
    assert got == want
    assert json.dumps(got) == json.dumps(want)  # every key in the same order too
    # the comparison is not vacuous: the recorded run had attempts with outputs and verdicts
    assert golden["evaluation"]["verdict"] == "pass"
    assert [a["output"] for r in fresh["candidate_results"] for a in r["attempts"]] == \
        [a["output"] for r in golden["candidate_results"] for a in r["attempts"]]
