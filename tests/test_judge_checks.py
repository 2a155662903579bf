"""Judges checked before they judge (issue 31): every deterministic judge runs on its task's
`reference`, which it must pass, and on an empty output, which it must fail; `validate` and
`run` (before any model call) make the checks."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.errors import SuiteError
from skill_eval.inputs.judge_checks import check_judges
from skill_eval.inputs.reference import MAX_REFERENCE_CHARS
from skill_eval.inputs.suite import load_suite
from skill_eval.judges.base import is_deterministic
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import REPO, read_json, run_cli, write_outputs, write_skill, write_suite


def task(task_id: str, judge: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "prompt": f"Write {task_id}", "judge": judge, **extra}


CONTAINS = {"type": "contains", "expected": ["## Added"]}
GOOD = task("good", CONTAINS, reference="# acme\n## Added\n- x\n")
BAD_REF = task("bad-ref", CONTAINS, reference="# acme\n## Fixed\n- x\n")
LENIENT = task("lenient", {"type": "not-contains", "expected": ["TODO"]})


# --- validate ---------------------------------------------------------------------------------


def test_a_judge_that_fails_its_reference_is_refused_at_its_line(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", [GOOD, BAD_REF])
    code, out, err = run_cli("validate", str(suite))
    assert code == 2 and out == ""
    judge_line = [i for i, s in enumerate(suite.read_text().splitlines(), 1) if "judge:" in s][1]
    assert err.splitlines() == [
        f'{suite}:{judge_line}: tasks[1] (id "bad-ref").judge: fails the task\'s reference: '
        "missing: '## Added'"
    ]


def test_a_judge_that_passes_on_an_empty_output_is_a_warning_or_with_strict_an_error(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path / "s", [GOOD, LENIENT])
    code, out, err = run_cli("validate", str(suite))
    assert code == 0 and out == f"ok: {suite}\n"
    assert err.startswith(f"warning: {suite}:")
    assert 'tasks[1] (id "lenient").judge: passes on an empty output (no text)' in err
    assert "none of the 1 forbidden strings appear" in err and len(err.splitlines()) == 1
    code, out, strict_err = run_cli("validate", "--strict", str(suite))
    assert code == 2 and out == ""
    assert strict_err == err.removeprefix("warning: ")


def test_a_clean_suite_with_references_validates_without_a_word(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", [GOOD, task("plain", CONTAINS)])
    assert run_cli("validate", "--strict", str(suite)) == (0, f"ok: {suite}\n", "")


@pytest.mark.parametrize("name", ["demo", "demo-agent", "demo-triggers"])
def test_the_bundled_demo_suites_validate_clean(name: str) -> None:
    path = REPO / "task_suites" / name
    assert run_cli("validate", "--strict", str(path)) == (
        0,
        f"ok: {path / 'task_suite.yaml'}\n",
        "",
    )


def test_every_demo_task_with_a_judge_has_a_reference() -> None:
    for name in ("demo", "demo-agent"):
        suite = load_suite(REPO / "task_suites" / name)
        assert all(t.reference is not None for t in suite.tasks), name


# --- agent tasks: the reference's files in a scratch workspace -------------------------------


def broken_agent_copy(tmp_path: Path) -> Path:
    """The agent demo with the sales report's revenue wrong in its shared reference."""
    source = REPO / "task_suites" / "demo-agent"
    target = tmp_path / "demo-agent"
    for path in source.rglob("*"):
        if path.is_file():
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    suite = target / "task_suite.yaml"
    text = suite.read_text()
    row = "          | revenue | 500.00 |\n"
    assert text.count(row) == 1
    suite.write_text(text.replace(row, row.replace("500", "250")))
    return suite


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp dir of its own, so that what the checks leave behind can be seen."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield root
    tempfile.tempdir = None


def test_an_agent_tasks_reference_files_are_judged_by_its_file_judges(
    tmp_path: Path, temp_root: Path
) -> None:
    suite = broken_agent_copy(tmp_path)
    before = sorted(p.relative_to(suite.parent) for p in suite.parent.rglob("*"))
    code, _, err = run_cli("validate", str(suite))
    assert code == 2
    lines = err.splitlines()
    # the regex on report.md, the pytest on the final workspace, the equals on report.md
    assert [line.split(": ")[1] for line in lines] == [
        'tasks[0] (id "sales-report").judge',
        'tasks[1] (id "sales-report-tested").judge',
        'tasks[4] (id "input-untouched").judge',
    ]
    assert "[2] regex FAIL (0.00): report.md: pattern" in lines[0]
    assert "1 of 2 test(s) failed or errored" in lines[1]
    assert "report.md: differs at character" in lines[2]
    # the scratch workspaces are gone, and nothing was written beside the suite
    assert sorted(p.relative_to(suite.parent) for p in suite.parent.rglob("*")) == before
    assert [p.name for p in temp_root.iterdir()] == []


def test_an_agent_tasks_scratch_workspaces_hold_its_inputs(tmp_path: Path) -> None:
    """The reference's workspace holds the task's input files and the reference's own; the
    empty one is an attempt that did nothing, so a judge that only forbids files passes it."""
    (tmp_path / "s" / "inputs").mkdir(parents=True)
    (tmp_path / "s" / "inputs" / "data.csv").write_text("a,b\n")
    both = {"type": "file-exists", "paths": ["inputs/data.csv", "out/report.md"]}
    suite = write_suite(
        tmp_path / "s",
        [
            task(
                "inputs-and-report",
                both,
                files=["inputs/data.csv"],
                reference={"files": {"out/report.md": "# r"}},
            ),
            task(
                "no-stray-files",
                {"type": "file-exists", "paths": ["*.tmp"], "absent": True},
                files=["inputs/data.csv"],
            ),
        ],
    )
    code, _, err = run_cli("validate", str(suite))
    assert code == 0
    judge_line = [i for i, s in enumerate(suite.read_text().splitlines(), 1) if "judge:" in s][1]
    assert err.splitlines() == [
        f'warning: {suite}:{judge_line}: tasks[1] (id "no-stray-files").judge: passes on an '
        "empty output (no text, no file written, no tool call): none of the 1 paths exists; "
        "it cannot tell an answer from none"
    ]


# --- code judges run their real code ---------------------------------------------------------

JUDGE_MODULE = """
def needs_total(output, task):
    return "Total:" in output

def crashes(output, task):
    return output.split()[0] == "Total:"
"""


@pytest.fixture
def judge_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    folder = tmp_path / "judges_pkg"
    folder.mkdir()
    (folder / "ref_check_judges.py").write_text(JUDGE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return "ref_check_judges"


def test_python_judges_run_on_the_reference_and_the_empty_output(
    tmp_path: Path, judge_module: str
) -> None:
    suite = write_suite(
        tmp_path / "s",
        [
            task(
                "ok",
                {"type": "python", "callable": f"{judge_module}:needs_total"},
                reference="Total: 3",
            ),
            task(
                "wrong-ref",
                {"type": "python", "callable": f"{judge_module}:needs_total"},
                reference="Sum: 3",
            ),
            task(
                "raises-on-empty",
                {"type": "python", "callable": f"{judge_module}:crashes"},
                reference="Total: 3",
            ),
            task("no-module", {"type": "python", "callable": "no_such_mod_31:f"}),
        ],
    )
    checks = check_judges(load_suite(suite), str(suite))
    assert [(p.task_id, p.field, p.message) for p in checks.errors] == [
        ("wrong-ref", "judge", "fails the task's reference: python judge returned False"),
        (
            "no-module",
            "judge.callable",
            "module 'no_such_mod_31' not found (install it, or put its folder on PYTHONPATH)",
        ),
    ]
    assert [(p.task_id, p.message.split(":")[0]) for p in checks.warnings] == [
        ("raises-on-empty", "cannot judge an empty output (python judge 'ref_check_judges")
    ]
    assert "IndexError" in checks.warnings[0].message
    assert "an empty answer would be an error" in checks.warnings[0].message


PYTEST_FILE = """
import os

def test_has_total():
    assert "Total:" in open(os.environ["AI_OUTPUT_FILE"]).read()
"""
LAX_PYTEST_FILE = """
import os

def test_reads_it():
    assert open(os.environ["AI_OUTPUT_FILE"]).read() is not None
"""


def test_pytest_judges_run_in_the_jail_on_both(tmp_path: Path) -> None:
    fixtures = tmp_path / "s" / "fixtures"
    fixtures.mkdir(parents=True)
    (fixtures / "test_total.py").write_text(PYTEST_FILE)
    (fixtures / "test_lax.py").write_text(LAX_PYTEST_FILE)
    suite = write_suite(
        tmp_path / "s",
        [
            task(
                "good",
                {"type": "pytest", "test_file": "fixtures/test_total.py"},
                reference="Total: 3",
            ),
            task(
                "bad", {"type": "pytest", "test_file": "fixtures/test_total.py"}, reference="Sum: 3"
            ),
            task(
                "lax", {"type": "pytest", "test_file": "fixtures/test_lax.py"}, reference="Total: 3"
            ),
        ],
    )
    checks = check_judges(load_suite(suite), str(suite))
    assert [(p.task_id, p.message[:40]) for p in checks.errors] == [
        ("bad", "fails the task's reference: 1 of 1 test(")
    ]
    assert [(p.task_id, p.message[:30]) for p in checks.warnings] == [
        ("lax", "passes on an empty output (no ")
    ]
    assert {t.task.id: t.empty.passed for t in checks.tasks if t.empty} == {
        "good": False,
        "bad": False,
        "lax": True,
    }


# --- run: the same checks, before any model call ---------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(default="## Added, as asked") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        yield server


def run_anthropic(tmp_path: Path, suite: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--executor",
        "anthropic",
        "--state-root",
        str(tmp_path / "state"),
        "--max-retries",
        "0",
        "-q",
        *extra,
    )


def test_run_refuses_a_judge_that_fails_its_reference_before_any_model_call(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    rubric = task("graded", {"type": "llm-rubric", "rubric": "Has an Added section."})
    suite = write_suite(tmp_path / "s", [rubric, GOOD, BAD_REF])
    code, out, err = run_anthropic(tmp_path, suite)
    assert code == 2 and out == ""
    assert err.startswith(f"Error: {suite}:") and "Traceback" not in err
    assert 'tasks[2] (id "bad-ref").judge: fails the task\'s reference' in err
    assert fake.count == 0  # neither an attempt nor a judgement was asked of the model
    assert not (tmp_path / "state" / "runs").exists()


def test_run_warns_of_a_judge_that_passes_on_an_empty_output_and_runs(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    suite = write_suite(tmp_path / "s", [GOOD, LENIENT])
    code, out, err = run_anthropic(tmp_path, suite, "--no-baseline")
    assert out.strip(), err
    first = err.splitlines()[0]
    assert first.startswith(f"warning: {suite}:")
    assert '(id "lenient").judge: passes on an empty output' in first
    assert fake.count == 2  # the run went on: one attempt per task
    assert read_json(out.strip())["warnings"] == [first.removeprefix("warning: ")]


def test_mock_runs_check_too(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "s", [BAD_REF])
    outputs = write_outputs(tmp_path / "o.yaml", {"bad-ref": "## Added"})
    code, out, err = run_cli(
        "run",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--task-suite",
        str(suite),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--state-root",
        str(tmp_path / "state"),
        "-q",
    )
    assert code == 2 and "fails the task's reference" in err


# --- the reference field ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "where", "message"),
    [
        (
            {"reference": {"text": "x", "files": {"a.md": "y"}}},
            "reference.files",
            "only an agent task (files: or allowed_tools:) has a workspace to write files in",
        ),
        (
            {"allowed_tools": ["Write"], "reference": {"files": {"../out.md": "y"}}},
            "reference.files['../out.md']",
            "must be a path relative to the workspace, no '..'",
        ),
        (
            {"allowed_tools": ["Write"], "reference": {"files": {"/etc/x": "y"}}},
            "reference.files['/etc/x']",
            "must be a path relative to the workspace, no '..'",
        ),
        (
            {"reference": ""},
            "reference",
            "is empty: a reference is a known-good output, and a judge must fail an empty one",
        ),
        (
            {"reference": {"text": "x", "triggered": True}},
            "reference.triggered",
            "unknown key 'triggered'; allowed: text, files, tools",
        ),
        (
            {"reference": ["x"]},
            "reference",
            "must be the known-good output: text, or a mapping with text, files and tools",
        ),
        (
            {"reference": "x" * (MAX_REFERENCE_CHARS + 1)},
            "reference",
            f"holds {MAX_REFERENCE_CHARS + 1} characters of text and files; a reference "
            f"holds at most {MAX_REFERENCE_CHARS}",
        ),
    ],
)
def test_a_bad_reference_is_a_located_problem(
    tmp_path: Path, extra: dict[str, Any], where: str, message: str
) -> None:
    suite = write_suite(tmp_path / "s", [task("t1", CONTAINS, **extra)])
    with pytest.raises(SuiteError) as caught:
        load_suite(suite)
    assert [(p.task_id, p.field, p.message) for p in caught.value.problems] == [
        ("t1", where, message)
    ]


def test_a_trigger_task_takes_no_reference(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "s",
        [{"id": "q", "query": "make a pdf", "should_trigger": True, "reference": "x"}],
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(suite)
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("reference", "a trigger task takes no reference: its judge is implied")
    ]


# --- what counts as deterministic -------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (CONTAINS, True),
        ({"type": "regex", "pattern": "x"}, True),
        ({"type": "pytest", "test_file": "fixtures/t.py"}, True),
        ({"type": "skill-used"}, True),
        ({"type": "llm-rubric", "rubric": "r"}, False),
        ({"type": "expectations", "expectations": ["x"]}, False),
        ({"type": "rubric"}, False),
        ({"type": "all", "judges": [CONTAINS, {"type": "any", "judges": [CONTAINS]}]}, True),
        ({"type": "all", "judges": [CONTAINS, {"type": "llm-rubric", "rubric": "r"}]}, False),
        ({"type": "weighted", "judges": [{"weight": 1, "judge": CONTAINS}]}, True),
        ({"type": "composite", "pytest": {"test_file": "fixtures/t.py"}, "lint": True}, True),
        ({"type": "composite", "lint": True, "rubric": {"evaluator": "x"}}, False),
    ],
)
def test_deterministic_is_declared_by_each_judge_spec(
    config: dict[str, Any], expected: bool
) -> None:
    assert is_deterministic(config) is expected


def test_a_plugin_judge_that_says_nothing_counts_as_model_graded(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from skill_eval.core.model import JudgeResult
    from skill_eval.judges.base import REGISTRY, JudgeSpec

    calls: list[str] = []

    class Counting:
        def judge(self, task: Any, work: Any, ctx: Any) -> JudgeResult:
            calls.append(work.text)
            return JudgeResult(True, 1.0)

    REGISTRY.reset()
    request.addfinalizer(REGISTRY.reset)  # no other test sees it
    REGISTRY.register(
        JudgeSpec(type="x-counting-31", schema={"type": "object"}, build=lambda c: Counting())
    )
    suite = write_suite(tmp_path / "s", [task("t", {"type": "x-counting-31"}, reference="r")])
    checks = check_judges(load_suite(suite), str(suite))
    assert (checks.tasks, checks.errors, checks.warnings) == ([], [], [])
    assert calls == []  # left to `validate --judges`: it may cost calls
    REGISTRY.register(
        JudgeSpec(
            type="x-counting-31",
            schema={"type": "object"},
            build=lambda c: Counting(),
            deterministic=True,
        )
    )
    checks = check_judges(load_suite(suite), str(suite))
    assert calls == ["", "r"] and [w.task_id for w in checks.warnings] == ["t"]
