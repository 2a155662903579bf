"""A PASS that means something: runs in which nothing was measured never pass (issue 20).

Each case goes through the CLI on the mock executor: a broken suite (0 of N against 0 of N),
a void comparison (a plan that changes nothing, byte-identical skills), typos in the mock
outputs, and the per-arm error count. (A fixture that does not compile stops the run before
it starts: tests/test_run_checks.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from skill_eval.engine import artifact
from skill_eval.stats.verdict import NOTHING_PASSED
from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_RANKING,
    DEMO_SUITE,
    contains_task,
    read_json,
    run_cli,
    run_script,
    write_outputs,
    write_ranking,
    write_skill,
    write_suite,
)


def _standalone(
    tmp_path: Path, suite: Path, *extra: str, skill: Path | None = None
) -> tuple[int, dict, str]:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill or write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
        "--policy",
        "delta",
        *extra,
    )
    data = read_json(out.strip()) if out.strip() else {}
    return code, data, err


def _two_tasks(tmp_path: Path) -> Path:
    return write_suite(
        tmp_path / "suite", [contains_task("t1", "alpha"), contains_task("t2", "beta")]
    )


# --------------------------------------------------------------------------------------------
# Nothing passed in either arm


def test_mock_without_outputs_fails_because_nothing_passed(tmp_path: Path) -> None:
    # Every attempt gets the mock's placeholder text: 0/2 against 0/2, delta 0 >= 0.
    code, data, err = _standalone(tmp_path, _two_tasks(tmp_path))
    artifact.validate(data)
    ev = data["evaluation"]
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"], ev["delta"]) == (0, 0, 0)
    assert code == 1 and ev["verdict"] == "fail"
    assert ev["reason"].startswith(NOTHING_PASSED)
    assert "candidate t1: missing: 'alpha'" in ev["reason"]  # the first judge message
    assert "FAIL" in err


def test_without_a_baseline_nothing_passed_says_so_too(tmp_path: Path) -> None:
    code, data, _ = _standalone(
        tmp_path, _two_tasks(tmp_path), "--no-baseline", "--min-pass-rate", "0"
    )
    assert code == 1 and data["evaluation"]["reason"].startswith(NOTHING_PASSED)


# --------------------------------------------------------------------------------------------
# Void comparisons


def _skill_dir(tmp_path: Path) -> Path:
    skill = write_skill(tmp_path / "skill", "## Format\n\nBe brief.")
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text("Guide.\n")
    return skill


def test_a_plan_that_changes_nothing_is_an_error_naming_the_candidate(tmp_path: Path) -> None:
    skill = _skill_dir(tmp_path)
    ranking = write_ranking(
        tmp_path / "ranking.json",
        [
            {
                "id": "c1",
                "score": 5,
                "execution_plan": {
                    "action": "replace_markdown_section",
                    "section_heading": "## Nope",
                    "content_lines": ["x"],
                },
            }
        ],
        target=str(skill),
    )
    args = [
        "--input",
        str(ranking),
        "--candidate-id",
        "c1",
        "--task-suite",
        str(_two_tasks(tmp_path)),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
    ]
    code, out, err = run_cli("run", *args)
    assert code == 3, err
    data = read_json(out.strip())
    artifact.validate(data)
    ev = data["evaluation"]
    assert ev["verdict"] == "error"
    assert "'c1'" in ev["reason"] and "'## Nope' not found" in ev["reason"]
    assert "comparison is void" in ev["reason"]
    assert not (tmp_path / "state" / "runs").exists() or not any(
        (tmp_path / "state" / "runs").iterdir()
    )  # nothing ran
    # scripts/evaluate.py keeps its contract: an artifact was written, so exit 0
    result = run_script(*args)
    assert result.returncode == 0, result.stderr
    assert read_json(result.stdout.strip())["evaluation"]["verdict"] == "error"


def test_byte_identical_skills_are_an_error(tmp_path: Path) -> None:
    skill = _skill_dir(tmp_path)
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in skill.rglob("*"):
        if path.is_file():
            (copy / path.relative_to(skill)).parent.mkdir(parents=True, exist_ok=True)
            (copy / path.relative_to(skill)).write_bytes(path.read_bytes())
    code, data, err = _standalone(
        tmp_path, _two_tasks(tmp_path), "--baseline-skill", str(copy), skill=skill
    )
    assert code == 3 and data["evaluation"]["verdict"] == "error", err
    assert "byte-identical" in data["evaluation"]["reason"]
    assert "comparison is void" in data["evaluation"]["reason"]


def test_skills_that_differ_only_in_a_reference_file_are_compared(tmp_path: Path) -> None:
    skill = _skill_dir(tmp_path)
    other = write_skill(tmp_path / "other", "## Format\n\nBe brief.")
    (other / "references").mkdir()
    (other / "references" / "guide.md").write_text("A different guide.\n")
    outputs = write_outputs(tmp_path / "o.yaml", {"t1": "alpha", "t2": "beta"})
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(_two_tasks(tmp_path)),
        "--skill-path",
        str(skill),
        "--baseline-skill",
        str(other),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
        "--policy",
        "delta",
        "--mock-outputs",
        str(outputs),
    )
    assert code == 0, err
    assert read_json(out.strip())["evaluation"]["verdict"] == "pass"


def test_an_inline_candidate_identical_to_the_original_is_an_error(tmp_path: Path) -> None:
    skill = _skill_dir(tmp_path)
    ranking = write_ranking(
        tmp_path / "ranking.json",
        [{"id": "same", "score": 5, "skill_content": (skill / "SKILL.md").read_text()}],
        target=str(skill),
    )
    code, out, err = run_cli(
        "run",
        "--input",
        str(ranking),
        "--candidate-id",
        "same",
        "--task-suite",
        str(_two_tasks(tmp_path)),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
    )
    assert code == 3, err
    assert "'same'" in read_json(out.strip())["evaluation"]["reason"]


# --------------------------------------------------------------------------------------------
# Typos and silent skips


def test_a_misspelt_task_id_in_mock_outputs_is_an_error_with_a_hint(tmp_path: Path) -> None:
    outputs = write_outputs(tmp_path / "o.yaml", {"candidate": {"t1": "alpha", "tt2": "beta"}})
    code, data, err = _standalone(tmp_path, _two_tasks(tmp_path), "--mock-outputs", str(outputs))
    assert code == 2 and data == {}
    assert f"{outputs}: candidate.tt2: no task 'tt2' in the suite; did you mean 't2'?" in err
    assert "Traceback" not in err
    # validate --mock-outputs finds it without running anything
    code, out, err = run_cli("validate", str(_two_tasks(tmp_path)), "--mock-outputs", str(outputs))
    assert code == 2 and "did you mean 't2'?" in err


def test_validate_mock_outputs_accepts_a_good_file(tmp_path: Path) -> None:
    code, out, err = run_cli("validate", str(DEMO_SUITE), "--mock-outputs", str(DEMO_OUTPUTS))
    assert code == 0 and out.strip() == f"ok: {DEMO_SUITE}", err


def test_validate_compiles_python_judge_modules(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "badjudge.py").write_text("def judge(output, task)\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mod"))
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t1", "prompt": "p", "judge": {"type": "python", "callable": "badjudge:judge"}}],
    )
    code, out, err = run_cli("validate", str(suite))
    assert code == 2 and f"{tmp_path / 'mod' / 'badjudge.py'}:1: SyntaxError" in err


def test_a_candidate_without_a_score_says_the_threshold_was_not_applied(tmp_path: Path) -> None:
    ranking = json.loads(DEMO_RANKING.read_text())
    del ranking["scored_candidates"][0]["score"]
    ranking["target"]["path"] = str(DEMO_RANKING.parent / ranking["target"]["path"])
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps(ranking))
    code, out, err = run_cli(
        "run",
        "--input",
        str(path),
        "--candidate-id",
        "cand-sections",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(DEMO_OUTPUTS),
        "-q",
        "--eval-threshold",
        "2",
    )
    message = (
        "candidate 'cand-sections' has no score in the ranking, so --eval-threshold 2 "
        "was not applied"
    )
    assert message in read_json(out.strip())["warnings"]
    assert f"warning: {message}" in err


# --------------------------------------------------------------------------------------------
# Errors counted per arm


def test_tasks_in_error_in_both_arms_are_counted_as_such(tmp_path: Path) -> None:
    judge = {"type": "python", "callable": "tests.judge_helpers:alpha_or_boom"}
    tasks = [{"id": f"t{i}", "prompt": "p", "judge": judge} for i in range(10)]
    outputs = write_outputs(
        tmp_path / "o.yaml",
        {
            "candidate": {**{f"t{i}": "alpha" for i in range(8)}, "t8": "BOOM", "t9": "BOOM"},
            "baseline": {**{f"t{i}": "alpha" for i in range(7)}, "t7": "BOOM", "t8": "BOOM"},
        },
    )
    suite = write_suite(tmp_path / "suite", tasks)
    code, data, err = _standalone(
        tmp_path,
        suite,
        "--mock-outputs",
        str(outputs),
        "--max-retries",
        "0",
        "--max-error-rate",
        "0.5",
    )
    note = (
        "3 task(s) ended in error and are left out of both pass rates: 1 in the candidate "
        "only (t9); 1 in the baseline only (t7); 1 in both arms (t8)"
    )
    assert note in data["warnings"], data["warnings"]


def test_a_pytest_fixture_reads_its_data_file_as_the_docs_show(tmp_path: Path) -> None:
    # references/task-format.md: beside the test file, or fixtures/... from the working dir
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True)
    (suite_dir / "fixtures" / "expected.json").write_text('{"headings": ["## Added"]}')
    (suite_dir / "fixtures" / "test_notes.py").write_text(
        "import json, os\nfrom pathlib import Path\n\n"
        "EXPECTED = json.loads((Path(__file__).parent / 'expected.json').read_text())\n\n"
        "def test_headings():\n"
        "    output = Path(os.environ['AI_OUTPUT_FILE']).read_text()\n"
        "    assert json.load(open('fixtures/expected.json')) == EXPECTED\n"
        "    for heading in EXPECTED['headings']:\n"
        "        assert heading in output\n"
    )
    suite = write_suite(
        suite_dir,
        [
            {
                "id": "t1",
                "prompt": "p",
                "judge": {"type": "pytest", "test_file": "fixtures/test_notes.py"},
            }
        ],
    )
    outputs = write_outputs(tmp_path / "o.yaml", {"candidate": {"t1": "## Added\n- x"}})
    code, data, err = _standalone(tmp_path, suite, "--mock-outputs", str(outputs))
    assert data["candidate_results"][0]["passed"], data["candidate_results"][0]["details"]
    assert code == 0, err
