"""The eval sets skills carry in the wild, read by one reader (inputs/evalsets/): one test per
shape, through `skill-eval import` (the suite it writes) and `skill-eval run SKILL_DIR --mock`
(the same suite, read in memory). Fixtures are written the way the public files are (their
keys, value types and nesting, from the corpus survey), never copied from them: skill-creator's
evals.json, `must_have` / `must_not_have` regex lists, `checks` statements, typed checks under
`type` or `kind`, Driftproof's published suites, trigger sets in their several shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import read_json, run_cli, write_outputs, write_skill


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


def results(artifact: dict[str, Any], arm: str = "candidate") -> dict[str, dict[str, Any]]:
    return {r["task_id"]: r for r in artifact[f"{arm}_results"]}


def judge_types(config: dict[str, Any]) -> list[str]:
    """Every judge type in a config, nested ones in order."""
    nested = config.get("judges") or []
    inner = [e.get("judge", e) for e in nested]
    return [config["type"], *(t for j in inner for t in judge_types(j))]


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
    assert tasks[0]["judge"] == {
        "type": "expectations",
        "expectations": SKILL_CREATOR["evals"][0]["expectations"],
        "expected_output": "Notes under the house headings",
    }
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"eval-1"}
    assert artifact["baseline_results"], "a no-skill baseline by default"
    assert results(artifact)["eval-1"]["status"] == "passed"  # the mock grader says PASS


# -- regular expression lists: must_have / must_not_have ------------------------------------------

REGEX_EVALS = {
    "skill_name": "notes",
    "evals": [
        {
            "id": 0,
            "prompt": "Convert `evals/cases/cnt.vhd` to SystemVerilog beside it.",
            "expected_output": "A .sv file with a typed WIDTH parameter and always_ff.",
            "files": ["evals/cases/cnt.vhd"],
            "must_have": ["module\\s+cnt\\b", "always_ff", "Validation Results"],
            "must_not_have": ["\\binitial\\b", "\\[[ \\t]*\\][ \\t]*;"],
            "manual_review_expected": True,
        }
    ],
}


def test_must_have_and_must_not_have_become_regex_and_not_regex_judges(tmp_path: Path) -> None:
    """Each pattern is a judge; on an agent task it reads the reply and the files written
    (scope: work), so `module cnt` in the .sv file counts; a forbidden pattern fails."""
    folder = skill(tmp_path, REGEX_EVALS)
    (folder / "evals" / "cases").mkdir()
    (folder / "evals" / "cases" / "cnt.vhd").write_text("entity cnt is\nend;\n", "utf-8")
    tasks, err = imported(folder, tmp_path)
    judge = tasks[0]["judge"]
    assert judge["type"] == "all" and judge_types(judge)[1:] == ["regex"] * 3 + ["not-regex"] * 2
    assert [j["pattern"] for j in judge["judges"]] == [
        *REGEX_EVALS["evals"][0]["must_have"],
        *REGEX_EVALS["evals"][0]["must_not_have"],
    ]
    assert all(j["scope"] == "work" for j in judge["judges"])
    assert (
        tasks[0]["description"] == f"Expected output: {REGEX_EVALS['evals'][0]['expected_output']}"
    )
    assert "evals[0].manual_review_expected: no place in a task suite" in err
    good = {
        "text": "Validation Results: ok",
        "files": {"evals/cases/cnt.sv": "module cnt (\n);\nalways_ff @(posedge clk) q <= d;\n"},
    }
    bad = {
        "text": "Validation Results: ok",
        "files": {"evals/cases/cnt.sv": "module cnt;\ninitial begin end\nalways_ff;\n"},
    }
    outputs = write_outputs(
        tmp_path / "outputs.yaml", {"candidate": {"eval-0": good}, "baseline": {"eval-0": bad}}
    )
    _, artifact, _ = run_skill(folder, tmp_path, "--mock-outputs", str(outputs))
    assert results(artifact)["eval-0"]["status"] == "passed"
    failed = results(artifact, "baseline")["eval-0"]
    assert failed["status"] == "failed" and "forbidden pattern" in json.dumps(failed)


# -- `checks` as plain statements, and typed checks under `type` or `kind` -------------------------


def test_checks_written_as_statements_are_graded_by_a_model(tmp_path: Path) -> None:
    evals = {
        "skill_name": "notes",
        "evals": [
            {
                "id": "headings",
                "prompt": "Write release notes for acme 2.1.0",
                "checks": ["Opens with a level-one title", "Lists changes under Added"],
            }
        ],
    }
    folder = skill(tmp_path, evals)
    tasks, _ = imported(folder, tmp_path)
    assert tasks[0]["judge"] == {
        "type": "expectations",
        "expectations": ["Opens with a level-one title", "Lists changes under Added"],
    }
    _, artifact, _ = run_skill(folder, tmp_path)
    graded = results(artifact)["headings"]["attempts"][0]["judge"]["data"]["expectations"]
    assert [g["text"] for g in graded] == evals["evals"][0]["checks"]


def test_typed_checks_under_type_or_kind_and_check_blocks(tmp_path: Path) -> None:
    """Typed checks as public sets write them: `{name, type, value}`, `{kind, pattern, flags:
    "im"}` (JavaScript's flags), `{type: contains_any, values}`, a statement with a `check`
    of operators; one that runs a command is listed, its statement kept."""
    evals = {
        "skill_name": "notes",
        "evals": [
            {
                "id": 1,
                "prompt": "Greet the user",
                "assertions": [
                    {"name": "greets", "type": "contains", "value": "Mock"},
                    {"name": "no-name", "type": "not_contains", "value": "Hello,"},
                    {
                        "name": "subject",
                        "kind": "regex",
                        "pattern": "^mock EXECUTION",
                        "flags": "im",
                    },
                    {"name": "any-word", "type": "contains_any", "values": ["zzz", "output"]},
                    {"text": "Says nothing was called", "check": {"matches_any": ["(?i)no model"]}},
                    {"text": "Plays the video", "check": "ffprobe out.mp4 | grep h264"},
                    {"name": "oracle", "type": "script", "command": ["python3", "x.py"]},
                ],
            },
            {"id": 2, "prompt": "q", "assertions": [{"type": "contains", "value": "absent"}]},
        ],
    }
    folder = skill(tmp_path, evals)
    tasks, err = imported(folder, tmp_path)
    judge = tasks[0]["judge"]
    assert judge_types(judge) == [
        "all", "expectations", "contains", "not-contains", "regex", "any", "contains",
        "contains", "regex",
    ]  # fmt: skip
    assert judge["judges"][0]["expectations"] == ["Plays the video"]
    assert judge["judges"][3]["flags"] == ["ignorecase", "multiline"]
    assert judge["judges"][1]["x-name"] == "greets"
    assert "evals[0].assertions[5].check: a shell command; no judge here runs" in err
    assert "evals[0].assertions[6]: runs a command; no judge here runs" in err
    _, artifact, _ = run_skill(folder, tmp_path)
    # the mock's default output says "Mock execution output: no model was called."
    assert results(artifact)["eval-1"]["status"] == "passed"
    assert results(artifact)["eval-2"]["status"] == "failed"


# -- Driftproof's published suites ---------------------------------------------------------------

DRIFTPROOF = {
    "skill": "notes",
    "version": "1.0",
    "format": "agentskills.io/evals",
    "cases": [
        {
            "id": "conventional-subject",
            "claim": "Write the commit message as Conventional Commits.",
            "prompt": "Write the commit message for a rate limiter on login.",
            "rubric": "Grade ONLY the shape: type(scope): summary. SCORING ANCHOR: 0.80 ...",
            "pass_threshold": 0.7,
            "grounding": "SKILL.md § Workflow step 6",
            "checks": [
                {
                    "name": "subject",
                    "kind": "regex",
                    "pattern": "^(feat|fix)(\\(\\w+\\))?: .+",
                    "flags": "im",
                },
                {"name": "mentions-mock", "kind": "contains", "value": "mock"},
            ],
        },
        {
            "id": "split-commits",
            "claim": "Split by logical boundary.",
            "prompt": "Stage and split these changes.",
            "rubric": "Two commits, one per concern.",
            "pass_threshold": 0.9,
            "grounding": "SKILL.md § Workflow step 2",
        },
    ],
}


def test_driftproof_published_suite_rubric_checks_claim_grounding(tmp_path: Path) -> None:
    """The rubric string is model-graded at the case's pass_threshold; the checks are judges
    recorded beside it (observers: Driftproof never folds them into the outcome); the claim
    is the task's description, the grounding stays in its source."""
    folder = skill(tmp_path, DRIFTPROOF)
    tasks, err = imported(folder, tmp_path)
    first = tasks[0]
    assert first["judge"] == {
        "type": "llm-rubric",
        "rubric": DRIFTPROOF["cases"][0]["rubric"],
        "pass_threshold": 0.7,
    }
    assert first["observers"] == [
        {"name": "subject", "type": "regex", "pattern": "^(feat|fix)(\\(\\w+\\))?: .+",
         "flags": ["ignorecase", "multiline"]},
        {"name": "mentions-mock", "type": "contains", "expected": ["mock"]},
    ]  # fmt: skip
    assert first["description"] == "Write the commit message as Conventional Commits."
    assert first["source"] == {
        "format": "Driftproof eval set",
        "eval_id": "conventional-subject",
        "grounding": "SKILL.md § Workflow step 6",
    }
    assert tasks[1]["judge"]["pass_threshold"] == 0.9
    assert "not carried over" not in err  # every key has its place
    _, artifact, _ = run_skill(folder, tmp_path)
    # the mock grader scores 0.8: over 0.7, under 0.9
    assert results(artifact)["conventional-subject"]["status"] == "passed"
    assert results(artifact)["split-commits"]["status"] == "failed"
    observed = artifact["observers"]["candidate"]
    assert observed["mentions-mock"]["mean"] == 1.0 and observed["subject"]["mean"] == 0.0


# -- trigger sets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, data",
    [
        ("trigger-eval.json", [{"query": "write release notes", "should_trigger": True}]),
        ("trigger_evals.json", {"skill_name": "notes", "queries": [
            {"id": "rn", "query": "write release notes", "should_trigger": True, "area": "x"}]}),
        ("trigger-queries.json", {"skill_name": "notes", "should_trigger": ["write release notes"],
                                  "should_not_trigger": []}),
        ("trigger-cases.json", {"schema_version": 1, "skill": "notes", "cases": [
            {"id": "rn", "kind": "direct", "prompt": "write release notes",
             "should_trigger": True}]}),
        ("trigger-evals.json", {"skill_name": "notes", "cases": [
            {"id": "rn", "query": "write release notes", "expected": "should_trigger"}]}),
    ],
)  # fmt: skip
def test_trigger_sets_in_their_shapes_run_alone(tmp_path: Path, name: str, data: Any) -> None:
    folder = write_skill(tmp_path / "notes")
    (folder / "evals").mkdir()
    (folder / "evals" / name).write_text(json.dumps(data), encoding="utf-8")
    _, artifact, _ = run_skill(folder, tmp_path)
    (task,) = results(artifact)
    assert task in ("trigger-1", "rn") and artifact["baseline_results"] == []
    assert artifact["triggers"]["queries"] == 1


def test_a_trigger_set_beside_evals_json_is_read(tmp_path: Path) -> None:
    triggers = [
        {"query": "write release notes", "should_trigger": True},
        {"query": "capital of France?", "should_trigger": False, "note": "off topic"},
    ]
    folder = skill(tmp_path, SKILL_CREATOR, **{"trigger-eval__json": triggers})
    code, out, err = run_cli("run", str(folder), "--mock", "--state-root", str(tmp_path / "state"))
    assert code in (0, 1, 4), err
    artifacts = [read_json(Path(line)) for line in out.split()]
    # the evals against no skill; the trigger set alone (a no-skill baseline cannot trigger)
    assert [sorted(results(a)) for a in artifacts] == [["eval-1"], ["trigger-1", "trigger-2"]]
    assert artifacts[1]["baseline_results"] == []
    assert "trigger set: run with --no-baseline" in err
    assert "trigger set [1].note: no place in a trigger task" in err


def test_a_prompt_in_a_file_and_a_description_to_judge_by(tmp_path: Path) -> None:
    """`prompt_file` beside the eval set, and an eval whose only word on success is its
    `description`: graded as one statement made from it, and said so."""
    evals = {
        "skill": "notes",
        "evals": [
            {"id": "cleanup", "prompt_file": "cleanup.txt",
             "description": "Refuses the cleanup and explains the recovery path."},
        ],
    }  # fmt: skip
    folder = skill(tmp_path, evals, **{"cleanup__txt": "Clean up the merged worktree.\n"})
    tasks, err = imported(folder, tmp_path)
    assert tasks[0]["prompt"] == "Clean up the merged worktree.\n"
    assert tasks[0]["judge"]["expectations"] == [
        "The result meets this description of success: Refuses the cleanup and explains the "
        "recovery path."
    ]
    assert "evals[0]: no checks; graded as one statement made from its description" in err
    (folder / "evals" / "cleanup.txt").unlink()
    (folder / "evals" / "cleanup.txt").symlink_to(tmp_path / "secret.txt")
    code, _, err = run_cli("run", str(folder), "--mock", "--state-root", str(tmp_path / "s"))
    assert code == 2 and "evals[0].prompt_file: must name a file beside evals.json" in err, err


# -- every eval file accounted for ---------------------------------------------------------------


def test_every_eval_file_in_evals_is_run_or_listed_with_why(tmp_path: Path) -> None:
    local = {
        "skill_name": "notes",
        "evals": [{"id": 101, "prompt": "scan", "expectations": ["ok"]}],
    }
    other_triggers = [{"query": "q", "should_trigger": False}]
    folder = skill(
        tmp_path, SKILL_CREATOR,
        **{"local-evals__json": local,
           "trigger-eval__json": [{"query": "notes", "should_trigger": True}],
           "trigger-queries__json": other_triggers, "rubric__schema__json": {"type": "object"}},
    )  # fmt: skip
    (folder / "evals" / "README.md").write_text("how to run", encoding="utf-8")
    code, _, err = run_cli("run", str(folder), "--mock", "--state-root", str(tmp_path / "s"))
    assert code in (0, 1, 4), err
    said = [line for line in err.splitlines() if ": not read: " in line]
    assert said == [
        "notes: evals/local-evals.json: not read: an eval set (1 evals) beside evals.json, the "
        f"one read; run it with --task-suite {folder / 'evals' / 'local-evals.json'}",
        "notes: evals/rubric.schema.json: not read: not an eval set skill-eval reads (top "
        "level: must be an object with skill_name and evals)",
        "notes: evals/trigger-queries.json: not read: a trigger set (1 queries) beside "
        "trigger-eval.json, the one read; run it with --task-suite "
        f"{folder / 'evals' / 'trigger-queries.json'}",
    ]
    code, _, err = run_cli("validate", str(folder))
    assert code == 0 and "evals/local-evals.json: not read" in err, err


def test_several_eval_sets_and_no_evals_json_are_each_listed_with_why(tmp_path: Path) -> None:
    """A skill keeping several eval sets in evals/ and no evals.json (as public skills do: one
    file a topic) has nothing run; `run` and the gate say of each file why and how to run it,
    instead of a bare "no evals"."""
    topic = [{"query": "Plan a ticket app", "expected_behavior": "a view and a tool"}]
    folder = skill(tmp_path, [], architecture__json=topic, ui__json=topic)
    (folder / "evals" / "evals.json").unlink()
    code, _, err = run_cli("run", str(folder), "--mock", "--state-root", str(tmp_path / "s"))
    assert code == 2 and "nothing to run" in err, err
    for name in ("architecture.json", "ui.json"):
        assert (
            f"notes: evals/{name}: not read: an eval set (1 evals); with several here and no "
            f"evals.json, none is read; run it with --task-suite {folder / 'evals' / name}"
        ) in err, err
    code, out, err = run_cli("gate", str(folder))  # no ref: listed, not failed, not "sound"
    assert code == 0 and "No changed skill has evals: nothing was checked." in out + err
    assert "evals/architecture.json: not read: an eval set (1 evals)" in out + err


def test_with_no_evals_json_the_one_eval_set_there_is_read(tmp_path: Path) -> None:
    """A file named like a trigger set that holds evals (no should_trigger) is read as
    evals: content decides, not the name."""
    folder = write_skill(tmp_path / "notes")
    (folder / "evals").mkdir()
    evals = [{"id": "deep", "query": "Should we migrate?", "expected_output": "A decision"}]
    (folder / "evals" / "trigger-queries.json").write_text(json.dumps(evals), encoding="utf-8")
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"deep"}


# -- the baseline never gets the skill by a side door ----------------------------------------------


def test_an_eval_giving_the_skills_own_files_is_flagged_in_validate_summary_and_artifact(
    tmp_path: Path,
) -> None:
    evals = {
        "skill_name": "notes",
        "evals": [
            {"id": 1, "prompt": "Review this skill", "files": ["SKILL.md", "references/style.md"],
             "expectations": ["Names the triggers"]},
            {"id": 2, "prompt": "Convert it", "files": ["evals/files/in.csv"],
             "expectations": ["ok"]},
        ],
    }  # fmt: skip
    folder = skill(tmp_path, evals)
    (folder / "references").mkdir()
    (folder / "references" / "style.md").write_text("house style", encoding="utf-8")
    (folder / "evals" / "files").mkdir()
    (folder / "evals" / "files" / "in.csv").write_text("a\n1\n", encoding="utf-8")
    warning = (
        "task 'eval-1': its input files include the skill's own (SKILL.md, references/style.md): "
        "the baseline reads them too, so the comparison measures less than the skill"
    )
    code, out, err = run_cli("validate", str(folder))
    assert code == 0 and f"warning: {folder}: {warning}" in err, err
    code, out, err = run_cli("validate", "--strict", str(folder))
    assert code == 2, err  # a warning is an error with --strict
    _, artifact, err = run_skill(folder, tmp_path)
    assert warning in artifact["warnings"]
    source = artifact["manifest"]["task_suite"]["source"]
    assert source["skill_files_as_inputs"] == {"eval-1": ["SKILL.md", "references/style.md"]}
    summary = err[err.index("delivery") :]
    assert f"warning             {warning}" in summary


def test_a_skill_name_that_is_not_the_folders_is_a_warning(tmp_path: Path) -> None:
    folder = skill(tmp_path, {**SKILL_CREATOR, "skill_name": "release-notes"})
    _, artifact, _ = run_skill(folder, tmp_path)
    assert any(
        "evals.json names skill 'release-notes', not its skill folder 'notes'" in w
        for w in artifact["warnings"]
    )
    named = skill(tmp_path, {**SKILL_CREATOR, "skill_name": "notes-skill"}, name="notes2")
    (named / "SKILL.md").write_text("---\nname: notes-skill\ndescription: d\n---\nx\n", "utf-8")
    _, artifact, _ = run_skill(named, tmp_path / "b")
    assert not [w for w in artifact["warnings"] if "names skill" in w]  # its SKILL.md's name


# -- limits explained where they bite ------------------------------------------------------------


def test_a_prompt_over_the_limit_names_the_eval_the_field_its_size_and_the_limit(
    tmp_path: Path,
) -> None:
    big = "x" * (5 * 1024 * 1024)
    evals = {"skill_name": "notes", "evals": [SKILL_CREATOR["evals"][0], {"id": 2, "prompt": big}]}
    folder = skill(tmp_path, evals)
    path = folder / "evals" / "evals.json"
    expected = (
        f"Error: {path}: evals[1].prompt: 5,242,880 bytes, over the 1 MiB one field of an eval "
        "may hold (what a whole suite file holds)\n"
    )
    for args in (
        ("run", str(folder), "--mock", "--state-root", str(tmp_path / "s")),
        ("run", "--task-suite", str(path), "--skill-path", str(folder), "--mock"),
        ("import", str(path), "-o", str(tmp_path / "out.yaml")),
        ("validate", str(folder)),
    ):
        code, out, err = run_cli(*args)
        assert code == 2 and err.endswith(expected.removeprefix("Error: ")), (args, err)
        assert "see above" not in err


# -- one way to build a run: the library reads what the flags read ---------------------------------


def test_the_library_runs_an_eval_set_and_a_dry_run_writes_no_suite(tmp_path: Path) -> None:
    from skill_eval import run_evaluation
    from skill_eval.plan.run_plan import RunPlan

    folder = skill(tmp_path, REGEX_EVALS | {"evals": [SKILL_CREATOR["evals"][0]]})
    evals = folder / "evals" / "evals.json"
    state = tmp_path / "dry"
    code, out, err = run_cli(
        "run", "--task-suite", str(evals), "--skill-path", str(folder), "--mock",
        "--dry-run", "--state-root", str(state),
    )  # fmt: skip
    assert code == 0 and "plan: attempts to run" in out, err
    assert not state.exists() or list(state.iterdir()) == []  # nothing under the state root
    outcome = run_evaluation(
        RunPlan.from_flags(
            task_suite=str(evals), standalone=True, skill_path=str(folder), mock=True,
            state_root=str(tmp_path / "state"), progress=False,
        )
    )  # fmt: skip
    assert outcome.artifact["task_suite"] == str(evals)
    assert set(results(outcome.artifact)) == {"eval-1"}
    assert not (tmp_path / "state" / "suites").exists()
    record = yaml.safe_load((outcome.run_dir / "task_suite.yaml").read_text(encoding="utf-8"))
    assert [t["id"] for t in record["tasks"]] == ["eval-1"]  # what the run ran, kept with it


# -- files ---------------------------------------------------------------------------------------


def test_files_relative_to_the_skill_root_to_evals_or_to_the_repository(tmp_path: Path) -> None:
    evals = {
        "skill_name": "code-review",
        "evals": [
            {"id": 1, "prompt": "p", "files": ["evals/files/a.csv"], "expectations": ["ok"]},
            {"id": 2, "prompt": "q", "files": ["files/b.csv"], "expectations": ["ok"]},
            {"id": 3, "prompt": "r", "files": ["skills/code-review/evals/files/a.csv"],
             "expectations": ["ok"]},
        ],
    }  # fmt: skip
    folder = skill(tmp_path / "skills", evals, name="code-review")
    (folder / "evals" / "files").mkdir()
    (folder / "evals" / "files" / "a.csv").write_text("a\n", encoding="utf-8")
    (folder / "evals" / "files" / "b.csv").write_text("b\n", encoding="utf-8")
    tasks, err = imported(folder, tmp_path)
    assert [t["files"] for t in tasks] == [
        ["evals/files/a.csv"],
        ["evals/files/b.csv"],
        ["evals/files/a.csv"],
    ]
    assert "evals[1].files[0]: 'files/b.csv' is not in the skill root; taken from evals/" in err
    assert (
        "evals[2].files[0]: 'skills/code-review/evals/files/a.csv' is not in the skill root; "
        "named from the repository's root" in err
    )
    assert (tmp_path / "imported" / "evals/files/b.csv").read_text() == "b\n"
    _, artifact, _ = run_skill(folder, tmp_path)
    assert set(results(artifact)) == {"eval-1", "eval-2", "eval-3"}


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "evals, message",
    [
        ({"skill_name": "n", "evals": [{"id": 1}]}, "evals[0].prompt: must be a non-empty string"),
        (
            {"skill_name": "n", "evals": [{"id": 1, "prompt": "p", "assertions": [3]}]},
            "evals[0].assertions[0]: must be a non-empty string or an object",
        ),
        (
            {"skill_name": "n", "evals": [{"id": 1, "prompt": "p", "must_have": ["(unclosed"]}]},
            "evals[0].must_have[0]: invalid regular expression '(unclosed'",
        ),
        (
            {"skill": "n",
             "cases": [{"id": 1, "prompt": "p", "rubric": "r", "pass_threshold": 70}]},
            "cases[0].pass_threshold: must be a number from 0 to 1",
        ),
        (
            {"skill": "n", "cases": [{"id": 1, "prompt": "p", "rubric": "r",
                                      "checks": [{"kind": "regex"}]}]},
            "cases[0].checks[0]: a regex check needs a `value`",
        ),
    ],
)  # fmt: skip
def test_an_unreadable_eval_set_is_one_line_naming_file_eval_and_field(
    tmp_path: Path, evals: dict[str, Any], message: str
) -> None:
    folder = skill(tmp_path, evals)
    path = folder / "evals" / "evals.json"
    for args in (("import", str(path), "-o", str(tmp_path / "s.yaml")), ("run", str(folder))):
        code, out, err = run_cli(*args, "--mock") if args[0] == "run" else run_cli(*args)
        assert (code, out) == (2, ""), err
        assert err.startswith(f"Error: {path}: {message}"), err
        assert err.count("\n") == 1, err


def test_a_skill_name_left_out_is_the_folder_name_and_said(tmp_path: Path) -> None:
    folder = skill(tmp_path, {"evals": [{"id": 1, "prompt": "p", "assertions": ["ok"]}]})
    out = tmp_path / "s.yaml"
    code, _, err = run_cli("import", str(folder / "evals" / "evals.json"), "-o", str(out))
    assert code == 0, err
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["skill_id"] == "notes"
    assert "skill_name: not given; named after the folder 'notes'" in err


def test_validate_checks_a_skill_folder_and_an_eval_set(tmp_path: Path) -> None:
    folder = skill(tmp_path, {**DRIFTPROOF, "owner": "me"})
    code, out, err = run_cli("validate", str(folder))
    assert (code, out) == (0, f"ok: {folder}\n"), err
    assert "owner: no place in a task suite" in err  # said, as import says it
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
    apart.write_text(json.dumps({**DRIFTPROOF, "tags": ["x"]}), encoding="utf-8")
    code, out, err = run_cli(
        "run", "--task-suite", str(apart), "--skill-path", str(folder), "--mock",
        "--state-root", str(tmp_path / "state2"),
    )  # fmt: skip
    assert code in (0, 1, 4), err
    assert set(results(read_json(Path(out.strip())))) == {"conventional-subject", "split-commits"}
    assert "notes-evals.json: not carried over: tags: no place in a task suite" in err


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
    huge = skill(tmp_path, {"evals": []}, name="huge")
    with (huge / "evals" / "evals.json").open("w", encoding="utf-8") as handle:
        handle.write('{"evals": [], "pad": "')
        handle.write("x" * (17 * 1024 * 1024))  # over core.bounded's 16 MiB a file
        handle.write('"}')
    code, _out, err = run_cli("run", str(huge), "--mock", "--state-root", str(tmp_path / "t"))
    assert code == 2 and "over the 16 MiB" in err.strip().splitlines()[-1], err


def test_input_files_reach_the_agent_from_the_skill_folder_never_through_a_link_out(
    tmp_path: Path,
) -> None:
    """An eval's input files go from the skill folder (the candidate's) into the attempt's
    workspace: a link inside a folder given as input is left out, one given as an input file
    is refused naming the eval and the field; nothing outside the folder is read."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN-456", encoding="utf-8")
    evals = {
        "skill_name": "notes",
        "evals": [{"id": 1, "prompt": "Sum the CSV", "files": ["evals/files"], "must_have": ["x"]}],
    }
    folder = skill(tmp_path, evals)
    (folder / "evals" / "files").mkdir()
    (folder / "evals" / "files" / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (folder / "evals" / "files" / "link.txt").symlink_to(secret)
    _, artifact, _ = run_skill(folder, tmp_path, "--keep-workspaces", "all")
    run_dir = Path(artifact["manifest"]["run_dir"])
    workspace = run_dir / "workspaces" / "candidate" / "eval-1" / "0"
    assert (workspace / "evals" / "files" / "data.csv").read_text() == "a,b\n1,2\n"
    assert not (workspace / "evals" / "files" / "link.txt").exists()
    assert "TOKEN-456" not in json.dumps(artifact)
    direct = {**evals, "evals": [{**evals["evals"][0], "files": ["evals/files/link.txt"]}]}
    linked = skill(tmp_path, direct, name="linked")
    (linked / "evals" / "files").mkdir()
    (linked / "evals" / "files" / "link.txt").symlink_to(secret)
    code, out, err = run_cli("run", str(linked), "--mock", "--state-root", str(tmp_path / "t"))
    assert code == 2 and "TOKEN-456" not in out + err
    assert err.startswith(
        f"Error: {linked / 'evals' / 'evals.json'}: evals[0].files[0]: 'evals/files/link.txt' "
        f"leads out of {linked.resolve()} through a symlink"
    ), err
