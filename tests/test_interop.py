"""skill-creator interop through the real CLI: `import` of evals.json (+ input files, + a
trigger eval set) into a suite that validates and runs under --mock, `export` back, the
round trips, and every refusal as a one-line error."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import DEMO_SKILL, REPO, read_json, run_cli, write_skill, write_suite

EVALS: dict[str, Any] = {
    "skill_name": "csv-report",
    "evals": [
        {
            "id": 1,
            "prompt": "Write release notes for acme 2.1.0.\nChanges: CSV export.",
            "expected_output": "Notes under the house headings",
            "files": [],
            "expectations": ["The notes open with '# acme 2.1.0'", "There is an Added section"],
        },
        {
            "id": 2,
            "prompt": "Summarise evals/files/sales.csv into report.md",
            "expected_output": "",
            "files": ["evals/files/sales.csv", "evals/files/more"],
            "expectations": ["report.md exists", "The report gives the total revenue"],
        },
    ],
}
TRIGGERS = [
    {"query": "turn this CSV into a report", "should_trigger": True},
    {"query": "what's the capital of France?", "should_trigger": False},
]


def skill_with_evals(root: Path, evals: dict[str, Any] | None = None) -> Path:
    """A skill folder in skill-creator's layout: SKILL.md, evals/evals.json, evals/files/."""
    skill = write_skill(root / "csv-report")
    files = skill / "evals" / "files"
    (files / "more").mkdir(parents=True)
    (files / "sales.csv").write_text("item,revenue\nA,200\nB,300\n", encoding="utf-8")
    (files / "more" / "costs.csv").write_text("item,cost\nA,10\n", encoding="utf-8")
    (files / "more" / "notes.txt").write_bytes(b"\x00binary\xff")
    (skill / "evals" / "evals.json").write_text(json.dumps(evals or EVALS), encoding="utf-8")
    return skill


def write_triggers(path: Path, data: Any = None) -> Path:
    path.write_text(json.dumps(TRIGGERS if data is None else data), encoding="utf-8")
    return path


def import_ok(*args: str) -> tuple[str, str]:
    code, out, err = run_cli("import", *args)
    assert code == 0, err
    return out, err


def test_import_gives_a_suite_that_validates_and_runs_in_mock_mode(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    suite_dir = tmp_path / "suite"
    out, err = import_ok(str(skill / "evals" / "evals.json"), "-o", f"{suite_dir}/")
    suite_file = suite_dir / "task_suite.yaml"
    assert out.strip() == str(suite_file)
    assert "2 task(s), 0 trigger task(s), 3 input file(s) copied" in err
    data = yaml.safe_load(suite_file.read_text(encoding="utf-8"))
    assert data["skill_id"] == "csv-report"
    first, second = data["tasks"]
    assert (first["id"], first["prompt"]) == ("eval-1", EVALS["evals"][0]["prompt"])
    assert first["judge"] == {
        "type": "expectations",
        "expectations": EVALS["evals"][0]["expectations"],
        "expected_output": "Notes under the house headings",
    }
    assert "files" not in first and second["files"] == EVALS["evals"][1]["files"]
    # as skill-creator tells its executor, the agent is told where its input files are
    assert (
        second["prompt"] == EVALS["evals"][1]["prompt"] + "\n\nInput files (in your "
        "working directory): evals/files/sales.csv, evals/files/more"
    )
    for rel in (
        "evals/files/sales.csv",
        "evals/files/more/costs.csv",
        "evals/files/more/notes.txt",
    ):
        assert (suite_dir / rel).read_bytes() == (skill / rel).read_bytes()
    assert run_cli("validate", str(suite_file))[0] == 0

    state = tmp_path / "state"
    code, _, err = run_cli(
        "run",
        "--task-suite",
        str(suite_file),
        "--standalone",
        "--skill-path",
        str(skill),
        "--mock",
        "--state-root",
        str(state),
    )
    assert code in (0, 1, 4), err
    artifact = read_json(next((state / "evaluations").glob("*.json")))
    results = {r["task_id"]: r for r in artifact["candidate_results"]}
    assert set(results) == {"eval-1", "eval-2"}
    graded = results["eval-2"]["attempts"][0]["judge"]["data"]["expectations"]
    assert [g["text"] for g in graded] == EVALS["evals"][1]["expectations"]
    assert all(r["status"] == "passed" for r in results.values())  # mock grader: PASS


def test_import_says_what_it_could_not_carry_over(tmp_path: Path) -> None:
    evals = json.loads(json.dumps(EVALS))
    evals["version"] = 3
    evals["evals"][0]["weight"] = 2
    evals["evals"][1]["expectations"] = []
    evals["evals"][1]["expected_output"] = "A report.md with totals"
    evals["evals"].append({"id": 7, "prompt": "Nothing to check here"})
    skill = skill_with_evals(tmp_path, evals)
    _, err = import_ok(str(skill / "evals" / "evals.json"), "-o", str(tmp_path / "s.yaml"))
    assert "not carried over: version: no place in a task suite" in err
    assert "not carried over: evals[0].weight: no place in a task suite" in err
    assert "evals[1]: no checks; graded as one statement made from expected_output" in err
    assert "evals[2]: no checks, no expected_output, no description: nothing to judge" in err
    tasks = yaml.safe_load((tmp_path / "s.yaml").read_text(encoding="utf-8"))["tasks"]
    assert [t["id"] for t in tasks] == ["eval-1", "eval-2"]
    assert "A report.md with totals" in tasks[1]["judge"]["expectations"][0]


def test_trigger_tasks_are_written_in_the_agreed_format(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    triggers = write_triggers(
        tmp_path / "trigger_eval.json",
        [*TRIGGERS, {"query": "make a report", "should_trigger": True, "note": "x"}],
    )
    code, _, err = run_cli(
        "import",
        str(skill / "evals" / "evals.json"),
        "--trigger-set",
        str(triggers),
        "-o",
        str(tmp_path / "suite" / "task_suite.yaml"),
    )
    assert "3 trigger task(s)" in err and "trigger set [2].note" in err
    tasks = yaml.safe_load((tmp_path / "suite" / "task_suite.yaml").read_text())["tasks"]
    assert tasks[2:] == [
        {"id": "trigger-1", "query": TRIGGERS[0]["query"], "should_trigger": True},
        {"id": "trigger-2", "query": TRIGGERS[1]["query"], "should_trigger": False},
        {"id": "trigger-3", "query": "make a report", "should_trigger": True},
    ]
    assert code == 0, err


def test_a_suite_with_trigger_tasks_validates_runs_and_round_trips(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    triggers = write_triggers(tmp_path / "trigger_eval.json")
    suite_file = tmp_path / "suite" / "task_suite.yaml"
    import_ok(
        str(skill / "evals" / "evals.json"), "--trigger-set", str(triggers), "-o", str(suite_file)
    )
    assert run_cli("validate", str(suite_file))[0] == 0
    state = tmp_path / "state"
    code, _, err = run_cli(
        "run",
        "--task-suite",
        str(suite_file),
        "--standalone",
        "--skill-path",
        str(skill),
        "--baseline-skill",
        str(DEMO_SKILL),
        "--mock",
        "--state-root",
        str(state),
    )
    assert code in (0, 1, 3, 4) and list((state / "evaluations").glob("*.json")), err
    bench = tmp_path / "benchmark.json"
    artifact = next((state / "evaluations").glob("*.json"))
    assert run_cli("export-benchmark", str(artifact), "-o", str(bench))[0] == 0
    assert {r["eval_name"] for r in read_json(bench)["runs"]} == {"eval-1", "eval-2"}
    back = tmp_path / "back"
    code, _, err = run_cli(
        "export",
        str(suite_file),
        "-o",
        str(back / "evals" / "evals.json"),
        "--trigger-set",
        str(back / "trigger_eval.json"),
    )
    assert code == 0, err
    assert read_json(back / "trigger_eval.json") == TRIGGERS
    assert read_json(back / "evals" / "evals.json") == EVALS


def test_export_then_import_round_trips(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    suite_file = tmp_path / "suite" / "task_suite.yaml"
    import_ok(str(skill / "evals" / "evals.json"), "-o", str(suite_file))
    out_root = tmp_path / "exported"
    code, out, err = run_cli(
        "export", str(suite_file), "-o", str(out_root / "evals" / "evals.json")
    )
    assert code == 0 and "not carried over" not in err, err
    assert read_json(out.strip()) == EVALS  # ids, prompts, files, expectations
    for rel in ("evals/files/sales.csv", "evals/files/more/notes.txt"):
        assert (out_root / rel).read_bytes() == (skill / rel).read_bytes()
    again = tmp_path / "again" / "task_suite.yaml"
    import_ok(str(out_root / "evals" / "evals.json"), "-o", str(again))
    assert (
        yaml.safe_load(again.read_text())["tasks"]
        == yaml.safe_load(suite_file.read_text())["tasks"]
    )


def test_a_hand_written_suite_keeps_its_ids_through_evals_json(tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "task_suite.yaml"
    suite.parent.mkdir()
    suite.write_text(
        yaml.safe_dump(
            {
                "skill_id": "demo",
                "version": "1.0",
                "tasks": [
                    {
                        "id": "eval-4",
                        "prompt": "p4",
                        "judge": {"type": "expectations", "expectations": ["a"]},
                    },
                    {
                        "id": "sales",
                        "prompt": "p",
                        "judge": {
                            "type": "all",
                            "judges": [
                                {"type": "expectations", "expectations": ["b", "c"]},
                                {"type": "contains", "expected": ["x"]},
                            ],
                        },
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out" / "evals.json"
    code, _, err = run_cli("export", str(suite), "-o", str(out))
    assert code == 0
    assert (
        "tasks[1] (sales).judge.judges[1]: judge type 'contains' has no evals.json "
        "equivalent" in err
    )
    evals = read_json(out)["evals"]
    assert [(e["id"], e.get("eval_name"), e["expectations"]) for e in evals] == [
        (4, None, ["a"]),
        (5, "sales", ["b", "c"]),
    ]
    back = tmp_path / "back.yaml"
    import_ok(str(out), "-o", str(back))
    assert [t["id"] for t in yaml.safe_load(back.read_text())["tasks"]] == ["eval-4", "sales"]


def test_export_lists_judges_without_an_equivalent(tmp_path: Path) -> None:
    suite = REPO / "task_suites" / "demo-agent" / "task_suite.yaml"
    code, out, err = run_cli("export", str(suite), "-o", str(tmp_path / "evals" / "evals.json"))
    assert code == 0, err
    assert "judge type 'pytest' has no evals.json equivalent" in err
    evals = read_json(out.strip())["evals"]
    assert evals[0]["files"] == ["inputs/sales.csv"] and evals[0]["expectations"] == []
    assert (tmp_path / "inputs" / "sales.csv").is_file()


def test_existing_outputs_are_refused_unless_forced(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    evals = str(skill / "evals" / "evals.json")
    target = tmp_path / "s.yaml"
    target.write_text("mine", encoding="utf-8")
    code, out, err = run_cli("import", evals, "-o", str(target))
    assert (code, out) == (
        2,
        "",
    ) and err == f"Error: {target}: already exists (use --force to overwrite)\n"
    assert target.read_text() == "mine"
    import_ok(evals, "-o", str(target), "--force")
    assert target.read_text() != "mine"
    code, _, err = run_cli("export", str(target), "-o", evals)
    assert code == 2 and "already exists (use --force" in err
    for command in ("import", "export", "export-benchmark"):
        assert "--force" in run_cli(command, "--help")[1]


def _broken(tmp_path: Path, change: dict[str, Any]) -> Path:
    evals = json.loads(json.dumps(EVALS))
    evals["evals"][1].update(change)
    return skill_with_evals(tmp_path, evals) / "evals" / "evals.json"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"files": ["/etc/passwd"]}, "evals[1].files[0]: must be a relative path, not absolute"),
        ({"files": ["evals/../../outside.txt"]}, "evals[1].files[0]: must not contain '..'"),
        (
            {"files": ["evals/files/nope.csv"]},
            "evals[1].files[0]: not found: 'evals/files/nope.csv'",
        ),
        (
            {"files": ["evals/files/link.txt"]},
            "evals[1].files[0]: 'evals/files/link.txt' leads out",
        ),
        (
            {"files": ["evals/files/more"], "x": 1},
            "evals[1].files[0]: 'evals/files/more/link.txt' is a symlink that leads out",
        ),
        ({"prompt": ""}, "evals[1].prompt: must be a non-empty string"),
        ({"id": 1}, "evals[1].id: duplicate id 1: evals[0] has it too"),
        ({"id": True}, "evals[1].id: must be an integer"),
        ({"expectations": "one"}, "evals[1].expectations: must be a list of non-empty strings"),
        ({"files": [3]}, "evals[1].files: must be a list of non-empty strings"),
    ],
)
def test_bad_input_is_a_one_line_error_naming_file_and_field(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    evals = _broken(tmp_path, change)
    files = evals.parent / "files"
    os.symlink(outside, files / "link.txt")
    if "x" in change:
        os.symlink(outside, files / "more" / "link.txt")
    code, out, err = run_cli("import", str(evals), "-o", str(tmp_path / "suite" / "s.yaml"))
    assert (code, out) == (2, ""), err
    assert err.startswith(f"Error: {evals}: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "suite").exists()  # nothing written


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"evals": []}', "evals: must be a non-empty list of evals"),  # named after its folder
        ('{"skill_name": "x", "evals": []}', "evals: must be a non-empty list of evals"),
        ('{"skill_name": "x\\ud800", "evals": []}', "not valid Unicode"),
    ],
)
def test_bad_evals_files(tmp_path: Path, content: str, message: str) -> None:
    evals = tmp_path / "evals.json"
    evals.write_text(content, encoding="utf-8")
    code, _, err = run_cli("import", str(evals), "-o", str(tmp_path / "s.yaml"))
    assert code == 2 and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "data, message",
    [
        ({"query": "q"}, "top level: must be a non-empty list"),
        ([{"query": "q", "should_trigger": "yes"}], "[0].should_trigger: must be true or false"),
        ([{"should_trigger": True}], "[0].query: must be a non-empty string"),
    ],
)
def test_bad_trigger_sets(tmp_path: Path, data: Any, message: str) -> None:
    skill = skill_with_evals(tmp_path)
    triggers = write_triggers(tmp_path / "t.json", data)
    code, _, err = run_cli(
        "import",
        str(skill / "evals" / "evals.json"),
        "--trigger-set",
        str(triggers),
        "-o",
        str(tmp_path / "s.yaml"),
    )
    assert code == 2 and f"Error: {triggers}: {message}" in err and "Traceback" not in err


def test_an_invalid_suite_is_not_exported(tmp_path: Path) -> None:
    bad = tmp_path / "task_suite.yaml"
    bad.write_text("skill_id: x\nversion: '1.0'\ntasks: []\n", encoding="utf-8")
    code, _, err = run_cli("export", str(bad), "-o", str(tmp_path / "evals.json"))
    assert code == 2 and "tasks" in err and not (tmp_path / "evals.json").exists()


def test_no_file_is_written_through_a_symlink_out_of_the_suite_folder(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    os.symlink(outside, suite_dir / "evals")
    code, _, err = run_cli("import", str(skill / "evals" / "evals.json"), "-o", str(suite_dir))
    assert (
        code == 2
        and "evals[1].files[0]: 'evals/files/sales.csv' would be written "
        f"outside {suite_dir.resolve()}"
        in err
    ), err
    assert list(outside.iterdir()) == [] and not (suite_dir / "task_suite.yaml").exists()


def test_a_suite_inside_the_skill_folder_reuses_its_files(tmp_path: Path) -> None:
    skill = skill_with_evals(tmp_path)
    out, err = import_ok(str(skill / "evals" / "evals.json"), "-o", str(skill))
    assert out.strip() == str(skill / "task_suite.yaml") and "0 input file(s) copied" in err
    assert run_cli("validate", str(skill))[0] == 0


def test_windows_style_file_paths_become_suite_paths(tmp_path: Path) -> None:
    evals = json.loads(json.dumps(EVALS))
    evals["evals"][1]["files"] = ["evals\\files\\sales.csv"]
    skill = skill_with_evals(tmp_path, evals)
    suite_dir = tmp_path / "suite"
    import_ok(str(skill / "evals" / "evals.json"), "-o", f"{suite_dir}/")
    task = yaml.safe_load((suite_dir / "task_suite.yaml").read_text(encoding="utf-8"))["tasks"][1]
    assert task["files"] == ["evals/files/sales.csv"]
    assert task["prompt"].endswith("(in your working directory): evals/files/sales.csv")
    assert (suite_dir / "evals" / "files" / "sales.csv").is_file()


def test_a_reference_becomes_expected_output_only_where_the_judge_gives_none(
    tmp_path: Path,
) -> None:
    """evals.json's expected_output describes success for the grader; a known-good output
    does that too, so export uses a text reference there. Import never makes a reference
    from it: a description of success is not an output every judge must pass."""
    suite = write_suite(
        tmp_path / "s",
        [
            {
                "id": "eval-1",
                "prompt": "p",
                "judge": {"type": "contains", "expected": ["x"]},
                "reference": "x marks it",
            },
            {
                "id": "eval-2",
                "prompt": "p",
                "judge": {"type": "expectations", "expectations": ["a"], "expected_output": "w"},
                "reference": "a",
            },
        ],
    )
    out_path = tmp_path / "skill" / "evals" / "evals.json"
    code, out, err = run_cli("export", str(suite), "-o", str(out_path))
    assert code == 0, err
    evals = read_json(out.strip())["evals"]
    assert [e["expected_output"] for e in evals] == ["x marks it", "w"]
    assert (
        "tasks[1] (eval-2).reference: no place in evals.json (expected_output is the judge's)"
        in err
    )
    back = tmp_path / "back" / "task_suite.yaml"
    import_ok(str(out_path), "-o", str(back))
    assert all("reference" not in t for t in yaml.safe_load(back.read_text())["tasks"])
    agent = REPO / "task_suites" / "demo-agent" / "task_suite.yaml"
    code, out, err = run_cli("export", str(agent), "-o", str(tmp_path / "a" / "evals.json"))
    assert read_json(out.strip())["evals"][0]["expected_output"] == "Wrote report.md"
    assert (
        "tasks[0] (sales-report).reference: its files and tool calls have no place in "
        "evals.json; its text became expected_output"
    ) in err
