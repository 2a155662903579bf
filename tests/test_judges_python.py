"""`type: python` judges and third-party judges registered through the entry-point group."""

from __future__ import annotations

import itertools
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from skill_eval.core.model import JudgeResult, Task
from skill_eval.core.work import Work
from skill_eval.errors import SuiteError
from skill_eval.inputs.suite import load_suite
from skill_eval.judges import JudgeContext, base, build_judge, run_judge, validate_judge_config
from skill_eval.judges.python_judge import preflight_python_judges

_names = itertools.count()

JUDGE_MODULE = """
from skill_eval.core.model import JudgeResult

def score(output, task):
    return len(output) / 10

def shout(output, task):
    return output.isupper()

def rich(output, task):
    return JudgeResult(passed="ok" in output, score=0.5, details=f"task {task.id}")

def as_dict(output, task):
    return {"score": 0.9, "details": "from a dict"}

def too_big(output, task):
    return 7

def nonsense(output, task):
    return "yes"

def boom(output, task):
    raise RuntimeError("judge bug")

not_callable = 3

def infinite(output, task):
    return float(output)

def infinite_result(output, task):
    return JudgeResult(passed=True, score=float(output))

def infinite_dict(output, task):
    return {"score": output}

class Holder:
    def judge(self, output, task):
        return 1.0

holder = Holder()
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh importable module (unique name: sys.modules must not serve an old one)."""
    name = f"user_judges_{next(_names)}"
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / f"{name}.py").write_text(JUDGE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    return name


def judge(config: dict[str, Any], output: str) -> JudgeResult:
    assert validate_judge_config(config, Path("/nonexistent")) == []
    return run_judge(
        build_judge(config),
        Task(id="t1", prompt="p", judge=config),
        Work(output),
        JudgeContext(suite_dir=Path("/nonexistent")),
    )


@pytest.mark.parametrize(
    "function, extra, output, passed, score",
    [
        ("score", {}, "0123456789", True, 1.0),
        ("score", {}, "01234", False, 0.5),
        ("score", {"pass_threshold": 0.5}, "01234", True, 0.5),
        ("shout", {}, "LOUD", True, 1.0),
        ("shout", {}, "quiet", False, 0.0),
        ("rich", {}, "ok", True, 0.5),
        ("as_dict", {"pass_threshold": 0.8}, "", True, 0.9),
        ("too_big", {}, "", True, 1.0),
    ],
)
def test_python_judge_results(
    module: str, function: str, extra: dict[str, Any], output: str, passed: bool, score: float
) -> None:
    result = judge({"type": "python", "callable": f"{module}:{function}", **extra}, output)
    assert (result.passed, result.score, result.error) == (passed, score, None)


def test_python_judge_receives_the_task(module: str) -> None:
    assert judge({"type": "python", "callable": f"{module}:rich"}, "ok").details == "task t1"


def test_out_of_range_score_is_clamped_and_noted(module: str) -> None:
    assert (
        "outside [0, 1], clamped"
        in judge({"type": "python", "callable": f"{module}:too_big"}, "").details
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_such_module_xyz:f", "ModuleNotFoundError"),
        ("{module}:missing", "AttributeError"),
        ("{module}:not_callable", "not a callable"),
        ("{module}:boom", "raised RuntimeError: judge bug"),
        ("{module}:nonsense", "returned str"),
    ],
)
def test_python_judge_problems_are_judge_errors(module: str, spec: str, message: str) -> None:
    result = judge({"type": "python", "callable": spec.format(module=module)}, "x")
    assert result.error is not None and message in result.error
    assert result.passed is False
    assert result.error_kind == "permanent"  # each fails the same way on a retry


def test_a_raising_python_judge_keeps_its_traceback(module: str) -> None:
    result = judge({"type": "python", "callable": f"{module}:boom"}, "x")
    assert result.error is not None and "\n" not in result.error
    assert "Traceback" in result.details and "RuntimeError: judge bug" in result.details


@pytest.mark.parametrize("function", ["infinite", "infinite_result", "infinite_dict"])
@pytest.mark.parametrize("output", ["inf", "-inf", "nan", "1e999"])
def test_a_non_finite_score_is_a_judge_error(module: str, function: str, output: str) -> None:
    result = judge({"type": "python", "callable": f"{module}:{function}"}, output)
    assert result.error is not None and "non-finite score" in result.error, result
    assert (result.passed, result.score) == (False, 0.0)


# --- preflight: every callable imported at run start, never at validate time ---------------


def python_task(task_id: str, spec: str) -> Task:
    return Task(id=task_id, prompt="p", judge={"type": "python", "callable": spec})


def test_preflight_reports_one_line_per_problem(module: str, tmp_path: Path) -> None:
    mods = tmp_path / "mods"
    (mods / "raises_on_import.py").write_text(
        "raise RuntimeError('top-level bug')\n", encoding="utf-8"
    )
    (mods / "needs_dep.py").write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    (mods / "exits_on_import.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    nested = {
        "type": "all",
        "judges": [
            {"type": "contains", "expected": ["x"]},
            {
                "type": "weighted",
                "judges": [
                    {"weight": 1, "judge": {"type": "python", "callable": f"{module}:missing"}}
                ],
            },
        ],
    }
    tasks = [
        python_task("ok", f"{module}:score"),
        python_task("method", f"{module}:holder.judge"),
        python_task("nomod", "no_such_module_xyz.sub:f"),
        python_task("noattr", f"{module}:nope"),
        python_task("noattr2", f"{module}:Holder.nope"),
        python_task("notcallable", f"{module}:not_callable"),
        python_task("raises", "raises_on_import:f"),
        python_task("dep", "needs_dep:f"),
        python_task("exits", "exits_on_import:f"),
        Task(id="nested", prompt="p", judge=nested),
        Task(id="other", prompt="p", judge={"type": "contains", "expected": ["x"]}),
    ]
    assert preflight_python_judges(tasks) == [
        "task 'nomod': judge.callable: module 'no_such_module_xyz.sub' not found (install it, "
        "or put its folder on PYTHONPATH)",
        f"task 'noattr': judge.callable: '{module}' has no attribute 'nope'",
        f"task 'noattr2': judge.callable: '{module}:Holder' has no attribute 'nope'",
        f"task 'notcallable': judge.callable: '{module}:not_callable' is a int, not a callable",
        "task 'raises': judge.callable: importing module 'raises_on_import' failed: "
        "RuntimeError: top-level bug",
        "task 'dep': judge.callable: importing module 'needs_dep' failed: "
        "ModuleNotFoundError: No module named 'no_such_dependency_xyz'",
        "task 'exits': judge.callable: importing module 'exits_on_import' failed: SystemExit: 3",
        f"task 'nested': judge.judges[1].judges[0].judge.callable: '{module}' has no "
        "attribute 'missing'",
    ]


def test_loading_never_imports_in_the_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load_suite checks the shape only; the preflight imports the module in the jail (its
    folder read-only, its writes on the jail's own /tmp): its top-level code leaves no mark
    on this machine and never runs in the harness."""
    marker = tmp_path / "imported"
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "side_effect_mod.py").write_text(
        f"open({str(marker)!r}, 'w').write('yes')\ndef judge(output, task):\n    return 1.0\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(mods))
    suite = tmp_path / "task_suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "skill_id": "s",
                "version": "1.0",
                "tasks": [
                    {
                        "id": "a",
                        "prompt": "p",
                        "judge": {"type": "python", "callable": "side_effect_mod:judge"},
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    loaded = load_suite(suite)
    assert not marker.exists()
    assert preflight_python_judges(loaded.tasks) == []  # it loads, and wrote in the jail's /tmp
    assert not marker.exists()
    assert "side_effect_mod" not in sys.modules


@pytest.mark.parametrize("spec", ["module", "module:", ":f", "a b:f", "pkg.mod:f()", "a/b:f"])
def test_callable_shape_is_checked_at_load_time(spec: str) -> None:
    problems = validate_judge_config({"type": "python", "callable": spec}, Path("/x"))
    assert problems == [("judge.callable", "must look like 'package.module:function'")]


PLUGIN = """
from skill_eval.errors import SuiteError
from skill_eval.judges import JudgeSpec
from skill_eval.core.model import JudgeResult

class Shout:
    def __init__(self, config):
        self.word = config["word"]

    def judge(self, task, work, ctx):
        ok = self.word.upper() in work.text
        return JudgeResult(passed=ok, score=float(ok), details="shouted" if ok else "quiet")

SPEC = JudgeSpec(
    type="shout",
    schema={"type": "object", "required": ["type", "word"],
            "properties": {"type": {"const": "shout"}, "word": {"type": "string"}},
            "additionalProperties": False},
    build=Shout,
)
"""


def test_third_party_judge_from_an_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    base.judge_types()  # built-ins loaded before the plugin is installed
    site = tmp_path / "site"
    dist = site / "shout_judge-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "shout_judge.py").write_text(PLUGIN, encoding="utf-8")
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: shout-judge\nVersion: 0.1\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(
        "[skill_eval.judges]\nshout = shout_judge:SPEC\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    # As in a new process: plugins load on first use.
    base.REGISTRY.reset()
    request.addfinalizer(base.REGISTRY.reset)  # no other test sees `shout`

    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    tasks = [{"id": "loud", "prompt": "Say it loudly", "judge": {"type": "shout", "word": "hello"}}]
    (suite_dir / "task_suite.yaml").write_text(
        yaml.safe_dump({"skill_id": "s", "version": "1.0", "tasks": tasks}), encoding="utf-8"
    )
    suite = load_suite(suite_dir / "task_suite.yaml")
    assert "shout" in base.judge_types() and "contains" in base.judge_types()

    task = suite.tasks[0]
    ctx = JudgeContext(suite_dir=suite_dir)
    result = run_judge(build_judge(task.judge), task, Work("HELLO THERE"), ctx)
    assert (result.passed, result.details) == (True, "shouted")

    bad = textwrap.dedent("""\
        skill_id: s
        version: "1.0"
        tasks:
          - id: loud
            prompt: Say it
            judge: {type: shout, wrd: hello}
        """)
    (suite_dir / "task_suite.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(suite_dir / "task_suite.yaml")
    assert "judge.wrd: unknown key 'wrd' (did you mean 'word'?)" in str(caught.value)


FILE_JUDGE = """
def judge(output, task, work=None):
    found = work.files.files[0]
    return {"passed": found.read_text().strip() == "hello file", "details": str(found.root)}
"""


@pytest.mark.parametrize("jail", ["auto", "none"])
def test_a_python_judge_reads_the_attempt_s_files_in_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jail: str
) -> None:
    """The function runs in its own process: the workspace's files reach it as a read-only
    copy (in the jail at /pyjudge/workspace), never the workspace itself."""
    import hashlib

    from skill_eval.core.work import FileSnapshot, Snapshot

    mods = tmp_path / "mods"
    mods.mkdir()
    name = f"file_judge_{next(_names)}"
    (mods / f"{name}.py").write_text(FILE_JUDGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(mods))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    data = b"hello file\n"
    (workspace / "out.txt").write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    files = Snapshot((FileSnapshot("out.txt", len(data), digest, root=workspace),), workspace)
    config = {"type": "python", "callable": f"{name}:judge"}
    result = run_judge(
        build_judge(config),
        Task(id="t", prompt="p", judge=config),
        Work("x", files=files),
        JudgeContext(suite_dir=tmp_path, jail=jail),
    )
    assert result.passed, result
    assert result.details != str(workspace)  # a copy, not the workspace
    assert result.details == "/pyjudge/workspace" or jail == "none"
