"""The README's demo run gives the artifact it gave before the attempt seams were reshaped.

`data/golden/demo-artifact.json` was written by the README quickstart command on the commit
before `Work`, runner-owned workspaces and `Attempt.meta` (ea6d9f2). A fresh run must equal it
apart from the fields that name a version, a time, the run id or a path on this machine, and
the changes made on purpose since, each listed in INTENDED with its reason. The recording ran
under the then-default `delta` policy, so the fresh run names it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, read_json, run_cli

GOLDEN = Path(__file__).parent / "data" / "golden" / "demo-artifact.json"
SUITE = "task_suites/demo/task_suite.yaml"
# Keys whose values are a version, a moment, a duration, the run id or a machine's path.
VOLATILE = {
    "run_id",
    "created_at",
    "started_at",
    "finished_at",
    "duration_ms",
    "harness_version",
    "truth_anchor",
    "run_dir",
    "state_root",
}
# Changes made on purpose after the recording: (path, reason). The path's value is left out of
# both sides (a key added since is dropped from the fresh run).
INTENDED = (
    (("evaluation", "policy", "reasoning"), "the summary says in points which policy decided"),
    (
        ("manifest", "arms", "candidate", "skill_sha256"),
        "the demo skills' frontmatter now follows the Agent Skills format (name = folder)",
    ),
    (("manifest", "arms", "candidate", "skill_tree_sha256"), "a skill is identified by all of it"),
    (("manifest", "arms", "candidate", "skill_name"), "a skill is identified by all of it"),
    (("manifest", "arms", "candidate", "skill_directory"), "a skill is identified by all of it"),
    (("manifest", "arms", "baseline", "skill_tree_sha256"), "a skill is identified by all of it"),
    (("manifest", "arms", "baseline", "skill_name"), "a skill is identified by all of it"),
    (("manifest", "arms", "baseline", "skill_directory"), "a skill is identified by all of it"),
    (("manifest", "config_file"), "the project config file used, if any"),
    (("manifest", "isolation"), "the jail the candidate's code ran in, or the warning (#28)"),
    (
        ("manifest", "task_suite", "sha256"),
        "the demo suite's tasks carry known-good references for the judge checks (issue 31)",
    ),
    (("task_results",), "the original evaluator's standalone fields (issue 25)"),
    (("evaluation", "mocked"), "a verdict from the mock executor says so (issue 47)"),
    *(
        (("evaluation", key), "not enough evidence told from shown worse (issue 30)")
        for key in ("insufficient", "detectable_margin", "tasks_needed")
    ),
    *(
        (("comparison", key), "pass/fail tasks get the exact interval (issue 30)")
        for key in ("interval", "method")
    ),
    *(
        (("evaluation", key), "the original evaluator's standalone fields (issue 25)")
        for key in ("total_tasks", "passed", "failed", "pass_rate")
    ),
    *(
        (
            (arm, "*", "attempts", "*", key),
            "every output is identified by its size and sha256; long ones are kept whole in "
            "<run>/blobs and the artifact holds their preview (issue 16)",
        )
        for arm in ("candidate_results", "baseline_results")
        for key in ("output_size", "output_sha256")
    ),
)


def _drop(node: Any, path: tuple[str, ...]) -> None:
    """Remove `path` below `node`; "*" stands for every item of a list."""
    key, rest = path[0], path[1:]
    children = (
        node
        if key == "*" and isinstance(node, list)
        else [node.get(key)]
        if isinstance(node, dict) and rest
        else []
    )
    if not rest:
        if isinstance(node, dict):
            node.pop(key, None)
        return
    for child in children:
        if child is not None:
            _drop(child, rest)


def without_intended(value: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(value))
    for path, _reason in INTENDED:
        _drop(out, path)
    return out


def normalized(value: Any, roots: dict[str, str]) -> Any:
    """`value` with volatile keys blanked and machine paths replaced by placeholders."""
    if isinstance(value, dict):
        return {
            k: "<volatile>" if k in VOLATILE else normalized(v, roots) for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalized(v, roots) for v in value]
    if isinstance(value, str):
        for root, name in roots.items():
            value = value.replace(root, name)
    return value


def test_demo_artifact_matches_the_recorded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)  # the README command, with its relative paths, from the repo root
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        SUITE,
        "--skill-path",
        "fixtures/demo-skill-improved",
        "--mock",
        "--mock-outputs",
        "task_suites/demo/mock_outputs.yaml",
        "--state-root",
        str(tmp_path / "state"),
        "--policy",
        "delta",
        "-q",
    )
    assert code == 0, err
    fresh = read_json(out.strip())
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    golden_repo = golden["task_suite"].removesuffix("/" + SUITE)
    want = without_intended(normalized(golden, {golden_repo: "<repo>"}))
    got = without_intended(normalized(fresh, {str(REPO): "<repo>"}))
    assert got == want
    assert json.dumps(got) == json.dumps(want)  # every key in the same order too
    # the comparison is not vacuous: the recorded run had attempts with outputs and verdicts
    assert golden["evaluation"]["verdict"] == "pass"
    assert [a["output"] for r in fresh["candidate_results"] for a in r["attempts"]] == [
        a["output"] for r in golden["candidate_results"] for a in r["attempts"]
    ]
    # the demo's outputs are short: each stays inline in full (its own preview), no blob
    for result in fresh["candidate_results"] + fresh["baseline_results"]:
        for a in result["attempts"]:
            assert a["output_sha256"] == hashlib.sha256(a["output"].encode()).hexdigest()
            assert a["output_size"] == len(a["output"].encode()) and "output_blob" not in a
