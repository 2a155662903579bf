"""The eval sets skills carry in the wild, read by one reader (interop/evals_sets.py): one test
per variant, through `skill-eval import` (the suite it writes) and `skill-eval run SKILL_DIR
--mock` (the same suite, run with no --task-suite). Fixtures are written from the formats:
skill-creator's evals.json, the agentskills.io guide's assertions, assertion objects, typed
assertions, string ids and names, files beside evals/, Driftproof's cases, trigger sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import read_json, run_cli, write_skill


def skill(root: Path, evals: Any, name: str = "notes", **extra: Any) -> Path:
    """A skill folder holding evals/evals.json (and any other evals/ file in `extra`)."""
    folder = write_skill(root / name)
    (folder / "evals").mkdir()
    (folder / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    for file, data in extra.items():
        (folder / "evals" / file.replace("__", ".")).write_text(
            data if isinstance(data, str) else json.dumps(data), encoding="utf-8"
        )
    return folder


def imported(folder: Path, tmp_path: Path, *more: str) -> tuple[list[dict[str, Any]], str]:
    """The tasks `skill-eval import` writes for the skill's evals.json, and its stderr."""
    out = tmp_path / "imported" / "task_suite.yaml"
    code, _, err = run_cli("import", str(folder / "evals" / "evals.json"), "-o", str(out), *more)
    assert code == 0, err
    return yaml.safe_load(out.read_text(encoding="utf-8"))["tasks"], err


def run_skill(folder: Path, tmp_path: Path, *more: str) -> tuple[int, dict[str, Any], str]:
    """`skill-eval run SKILL_DIR --mock`: exit code, the artifact, stderr."""
    state = tmp_path / "state"
    code, out, err = run_cli("run", str(folder), "--mock", "--state-root", str(state), *more)
    assert code in (0, 1, 4), err
    return code, read_json(Path(out.strip().splitlines()[0])), err


def results(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["task_id"]: r for r in artifact["candidate_results"]}


SKILL_CREATOR = {
    "skill_name": "notes",
    "evals": [
        {
            "id": 1,
            "prompt": "Write release notes for acme 2.1.0",
            "expected_output": "Notes under the house headings",
            "files": [],
            "expectations": ["The notes open with a title", "There is an Added section"],
        }
    ],
}


def test_skill_creator_evals_json_runs_from_the_skill_folder(tmp_path: Path) -> None:
    folder = skill(tmp_path, SKILL_CREATOR)
    tasks, _ = imported(folder, tmp_path)
    assert tasks[0]["judge"]["expectations"] == SKILL_CREATOR["evals"][0]["expectations"]
    _, artifact, err = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"eval-1"}
    assert artifact["baseline_results"], "a no-skill baseline by default"
    assert results(artifact)["eval-1"]["status"] == "passed"  # the mock grader says PASS


def test_assertions_as_strings_with_names_and_string_ids(tmp_path: Path) -> None:
    """The agentskills.io guide: `assertions`, an optional `name`, ids that are strings."""
    evals = {
        "skill_name": "notes",
        "evals": [
            {"id": "a", "name": "title-first", "prompt": "p1", "assertions": ["Has a title"]},
            {"id": "b", "prompt": "p2", "assertions": ["Has a date"], "category": "x"},
        ],
    }
    folder = skill(tmp_path, evals)
    tasks, err = imported(folder, tmp_path)
    assert [t["id"] for t in tasks] == ["title-first", "b"]
    assert tasks[1]["judge"] == {"type": "expectations", "expectations": ["Has a date"]}
    assert "not carried over: evals[1].category: no place in a task suite" in err
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"title-first", "b"}


def test_assertion_objects_with_id_and_text(tmp_path: Path) -> None:
    evals = {
        "skill_name": "notes",
        "evals": [
            {
                "id": 1,
                "prompt": "p",
                "assertions": [{"id": "a1", "text": "Has a title"}, {"id": "a2", "text": "Short"}],
            }
        ],
    }
    folder = skill(tmp_path, evals)
    tasks, _ = imported(folder, tmp_path)
    assert tasks[0]["judge"]["expectations"] == ["Has a title", "Short"]
    _, artifact, _ = run_skill(folder, tmp_path)
    graded = results(artifact)["eval-1"]["attempts"][0]["judge"]["data"]["expectations"]
    assert [g["text"] for g in graded] == ["Has a title", "Short"]


def test_typed_assertions_become_deterministic_judges(tmp_path: Path) -> None:
    evals = {
        "skill_name": "notes",
        "evals": [
            {
                "id": 1,
                "prompt": "p",
                "assertions": [
                    "Reads well",
                    {"name": "says-mock", "type": "contains", "value": "Mock"},
                    {"name": "no-error", "type": "not_contains", "value": "Traceback"},
                    {"name": "valid", "type": "json_valid"},
                ],
            },
            {"id": 2, "prompt": "q", "assertions": [{"type": "contains", "value": "absent"}]},
        ],
    }
    folder = skill(tmp_path, evals)
    tasks, err = imported(folder, tmp_path)
    assert tasks[0]["judge"] == {
        "type": "all",
        "judges": [
            {"type": "expectations", "expectations": ["Reads well"]},
            {"type": "contains", "expected": ["Mock"], "x-name": "says-mock"},
            {"type": "not-contains", "expected": ["Traceback"], "x-name": "no-error"},
        ],
    }
    assert "evals[0].assertions[3]: check type 'json_valid' has no judge here" in err
    _, artifact, _ = run_skill(folder, tmp_path)
    # the mock's default output says "Mock execution output": the checks really run
    assert results(artifact)["eval-1"]["status"] == "passed"
    assert results(artifact)["eval-2"]["status"] == "failed"


def test_files_relative_to_the_skill_root_or_to_evals(tmp_path: Path) -> None:
    evals = {
        "skill_name": "notes",
        "evals": [
            {"id": 1, "prompt": "p", "files": ["evals/files/a.csv"], "expectations": ["ok"]},
            {"id": 2, "prompt": "q", "files": ["files/b.csv"], "expectations": ["ok"]},
        ],
    }
    folder = skill(tmp_path, evals)
    (folder / "evals" / "files").mkdir()
    (folder / "evals" / "files" / "a.csv").write_text("a\n", encoding="utf-8")
    (folder / "evals" / "files" / "b.csv").write_text("b\n", encoding="utf-8")
    tasks, _ = imported(folder, tmp_path)
    assert [t["files"] for t in tasks] == [["evals/files/a.csv"], ["files/b.csv"]]
    suite_dir = tmp_path / "imported"
    assert (suite_dir / "evals/files/a.csv").read_text() == "a\n"
    assert (suite_dir / "files/b.csv").read_text() == "b\n"
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"eval-1", "eval-2"}


DRIFTPROOF = {
    "skill": "notes",
    "cases": [
        {
            "id": "adr-status",
            "prompt": "Write an ADR for moving to Postgres",
            "claim": "The ADR names its status",
            "rubric": {
                "pass_threshold": 0.5,
                "checks": [
                    {"type": "regex", "pattern": "(?i)mock"},
                    {"type": "contains", "value": "Status:"},
                ],
            },
        },
        {
            "id": "strict",
            "prompt": "q",
            "rubric": {
                "pass_threshold": 2,
                "checks": [
                    {"type": "regex", "pattern": "Mock"},
                    {"type": "contains", "value": "Status:"},
                ],
            },
            "tags": ["x"],
        },
    ],
}


def test_driftproof_cases_claims_and_rubrics(tmp_path: Path) -> None:
    folder = skill(tmp_path, DRIFTPROOF)
    tasks, err = imported(folder, tmp_path)
    first = tasks[0]
    assert first["id"] == "adr-status"
    assert first["judge"] == {
        "type": "all",
        "judges": [
            {"type": "expectations", "expectations": ["The ADR names its status"]},
            {
                "type": "weighted",
                "judges": [
                    {"weight": 1, "judge": {"type": "regex", "pattern": "(?i)mock"}},
                    {"weight": 1, "judge": {"type": "contains", "expected": ["Status:"]}},
                ],
                "pass_threshold": 0.5,
            },
        ],
    }
    assert first["source"]["format"] == "Driftproof eval set"
    assert tasks[1]["judge"]["pass_threshold"] == 1.0  # 2 of 2 checks
    assert "cases[1].tags: no place in a task suite" in err
    _, artifact, _ = run_skill(folder, tmp_path)
    assert results(artifact)["adr-status"]["status"] == "passed"  # 1 of 2 checks is enough
    assert results(artifact)["strict"]["status"] == "failed"  # 2 of 2 needed


def test_a_trigger_set_beside_evals_json_is_read(tmp_path: Path) -> None:
    triggers = [
        {"query": "write release notes", "should_trigger": True},
        {"query": "capital of France?", "should_trigger": False},
    ]
    folder = skill(tmp_path, SKILL_CREATOR, **{"trigger-eval__json": triggers})
    code, out, err = run_cli("run", str(folder), "--mock", "--state-root", str(tmp_path / "state"))
    assert code in (0, 1, 4), err
    artifacts = [read_json(Path(line)) for line in out.split()]
    # the evals against no skill; the trigger set alone (a no-skill baseline cannot trigger)
    assert [sorted(results(a)) for a in artifacts] == [["eval-1"], ["trigger-1", "trigger-2"]]
    assert artifacts[1]["baseline_results"] == []
    assert "trigger set: run with --no-baseline" in err


@pytest.mark.parametrize("name", ["trigger-eval.json", "trigger_eval.json"])
def test_a_trigger_set_alone_runs_with_no_baseline(tmp_path: Path, name: str) -> None:
    folder = write_skill(tmp_path / "notes")
    (folder / "evals").mkdir()
    (folder / "evals" / name).write_text(
        json.dumps([{"query": "write release notes", "should_trigger": True}]), encoding="utf-8"
    )
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"trigger-1"}


@pytest.mark.parametrize(
    "evals, message",
    [
        ({"skill_name": "n", "evals": [{"id": 1}]}, "evals[0].prompt: must be a non-empty string"),
        (
            {"skill_name": "n", "evals": [{"id": 1, "prompt": "p", "assertions": [3]}]},
            "evals[0].assertions[0]: must be a non-empty string or an object",
        ),
        (
            {"skill_name": "n", "evals": [{"id": 1, "prompt": "p", "assertions": [{"id": "x"}]}]},
            "evals[0].assertions[0]: must have a non-empty `text`",
        ),
        (
            {
                "skill": "n",
                "cases": [
                    {
                        "id": 1,
                        "prompt": "p",
                        "rubric": {
                            "pass_threshold": 7,
                            "checks": [{"type": "contains", "value": "a"}],
                        },
                    }
                ],
            },
            "cases[0].rubric.pass_threshold: must be a share between 0 and 1",
        ),
        (
            {
                "skill": "n",
                "cases": [{"id": 1, "prompt": "p", "rubric": {"checks": [{"type": "regex"}]}}],
            },
            "cases[0].rubric.checks[0]: a regex check needs a `value`",
        ),
    ],
)
def test_an_unreadable_eval_set_is_one_line_naming_file_eval_and_field(
    tmp_path: Path, evals: dict[str, Any], message: str
) -> None:
    folder = skill(tmp_path, evals)
    path = folder / "evals" / "evals.json"
    for args in (("import", str(path), "-o", str(tmp_path / "s.yaml")), ("run", str(folder))):
        code, out, err = run_cli(*args, "--mock") if args[0] == "run" else run_cli(*args)
        assert (code, out) == (2, ""), err
        assert err == f"Error: {path}: {message}" + err[len(f"Error: {path}: {message}") :]
        assert err.count("\n") == 1 and message in err, err


def test_a_skill_name_left_out_is_the_folder_name_and_said(tmp_path: Path) -> None:
    folder = skill(tmp_path, {"evals": [{"id": 1, "prompt": "p", "assertions": ["ok"]}]})
    out = tmp_path / "s.yaml"
    code, _, err = run_cli("import", str(folder / "evals" / "evals.json"), "-o", str(out))
    assert code == 0, err
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["skill_id"] == "notes"
    assert "skill_name: not given; named after the skill folder 'notes'" in err


def test_validate_checks_a_skill_folder_and_an_eval_set(tmp_path: Path) -> None:
    folder = skill(tmp_path, DRIFTPROOF)
    code, out, err = run_cli("validate", str(folder))
    assert (code, out) == (0, f"ok: {folder}\n"), err
    assert "cases[1].tags: no place in a task suite" in err  # said, as import says it
    code, out, _ = run_cli("validate", str(folder / "evals" / "evals.json"))
    assert (code, out) == (0, f"ok: {folder / 'evals' / 'evals.json'}\n")
    bare = write_skill(tmp_path / "bare")
    code, out, err = run_cli("validate", str(bare), str(folder))
    assert code == 2 and f"{bare}: no evals" in err and f"ok: {folder}" in out
    broken = skill(tmp_path, {"skill": "n", "cases": [{"id": 1}]}, name="broken")
    code, _, err = run_cli("validate", str(broken))
    assert code == 2 and f"{broken / 'evals' / 'evals.json'}: cases[0].prompt: must be" in err


def test_a_suite_of_our_own_in_evals_and_an_eval_set_given_as_task_suite(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "notes")
    (folder / "evals").mkdir()
    suite = {
        "skill_id": "notes",
        "version": "1.0",
        "tasks": [{"id": "t1", "prompt": "p", "judge": {"type": "contains", "expected": "Mock"}}],
    }
    (folder / "evals" / "task_suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"t1"} and artifact["task_suite"].endswith("task_suite.yaml")
    # an evals.json kept apart from the skill, given as --task-suite
    apart = tmp_path / "elsewhere" / "notes-evals.json"
    apart.parent.mkdir()
    apart.write_text(json.dumps(DRIFTPROOF), encoding="utf-8")
    code, out, err = run_cli(
        "run", "--task-suite", str(apart), "--skill-path", str(folder), "--mock",
        "--state-root", str(tmp_path / "state2"),
    )  # fmt: skip
    assert code in (0, 1, 4), err
    assert set(results(read_json(Path(out.strip())))) == {"adr-status", "strict"}
    assert "notes-evals.json: not carried over: cases[1].tags" in err


def test_an_eval_set_is_read_with_a_cap_and_never_through_a_link(tmp_path: Path) -> None:
    """A skill folder is the candidate's: its evals.json may not point the harness at a file
    outside it (a link to a secret) nor make it read without bound."""
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"evals": [{"id": 1, "prompt": "TOKEN-123"}]}), "utf-8")
    linked = skill(tmp_path, {"evals": []}, name="linked")
    (linked / "evals" / "evals.json").unlink()
    (linked / "evals" / "evals.json").symlink_to(secret)
    code, out, err = run_cli("run", str(linked), "--mock", "--state-root", str(tmp_path / "s"))
    assert code == 2 and "TOKEN-123" not in out + err
    assert "evals.json" in err.strip().splitlines()[-1]
    huge = skill(tmp_path, {"evals": []}, name="huge")
    with (huge / "evals" / "evals.json").open("w", encoding="utf-8") as handle:
        handle.write('{"evals": [], "pad": "')
        handle.write("x" * (17 * 1024 * 1024))  # over core.bounded's 16 MiB a file
        handle.write('"}')
    code, _out, err = run_cli("run", str(huge), "--mock", "--state-root", str(tmp_path / "t"))
    assert code == 2 and "over the 16 MiB" in err.strip().splitlines()[-1], err
