"""Issue 38, "exit codes in one place": an error's exit code belongs to its class, and the
command line catches once, at the top (cli/common.py `errors_exit`); no command module maps an
error to an exit code. SKILL_EVAL_DEBUG=1 adds the traceback, as references/errors.md says."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skill_eval.errors import SkillEvalError
from tests.helpers import REPO, contains_task, run_cli, write_skill, write_suite
from tests.test_error_tree import _all_subclasses, defined_exceptions

CLI = REPO / "skill_eval" / "cli"
TOP = "common.py"  # where errors_exit lives: the one module allowed to turn errors into exits
EXITING = {"exit", "_exit", "fail", "fail_with", "Exit", "SystemExit", "Abort"}


def tree_names() -> set[str]:
    """Every class of the error tree, by name (the package's modules imported first)."""
    import importlib

    for module in set(defined_exceptions().values()):
        importlib.import_module(module)
    return {"SkillEvalError"} | {c.__name__ for c in _all_subclasses(SkillEvalError)}


def _caught(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    nodes = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {ast.unparse(n).rsplit(".", 1)[-1] for n in nodes}


def _exits(node: ast.AST) -> bool:
    """Whether code under `node` ends the process or hands click an exit code."""
    for sub in ast.walk(node):
        target = sub.func if isinstance(sub, ast.Call) else None
        if isinstance(sub, ast.Raise) and sub.exc is not None:
            target = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
        if target is not None and ast.unparse(target).rsplit(".", 1)[-1] in EXITING:
            return True
    return False


def mapping_problems(source: str, where: str, names: set[str]) -> list[str]:
    """The places in one command module that map an error to an exit code: a handler of the
    whole tree, or a handler of a tree class or OSError that exits."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        caught = _caught(node)
        line = f"{where}:{node.lineno}: except {', '.join(sorted(caught))}"
        if "SkillEvalError" in caught:
            problems.append(f"{line}: catches every error; the top does that")
        elif caught & (names | {"OSError", "BaseException"}) and _exits(node):
            problems.append(f"{line}: turns an error into an exit; raise it instead")
    return problems


def test_no_command_module_maps_errors_to_exit_codes() -> None:
    names = tree_names()
    modules = sorted(p for p in CLI.glob("*.py") if p.name != TOP)
    assert len([p for p in modules if p.name.endswith("_cmd.py")]) >= 15
    problems = [
        problem
        for path in modules
        for problem in mapping_problems(path.read_text(encoding="utf-8"), path.name, names)
    ]
    assert problems == []
    printed = [p.name for p in modules if '"Error: ' in p.read_text(encoding="utf-8")]
    assert printed == [], "only the top prints `Error: ...`"


def test_the_scan_finds_a_mapping() -> None:
    """The scan can fail: the shapes the commands had before issue 38 are each found."""
    names = tree_names()
    before = """
try:
    run()
except SkillEvalError as exc:
    fail(str(exc), exit_code(exc))
except ReviewError as exc:
    fail(str(exc), EXIT_ERROR)
except OSError as exc:
    sys.exit(3)
except CacheError:
    raise SystemExit(2)
except SuiteError as exc:
    problems += exc.problems
except CacheError as exc:
    raise CacheError(f"{exc} (hint)") from None
"""
    found = mapping_problems(before, "m.py", names)
    assert [p.split(": ")[1] for p in found] == [
        "except SkillEvalError",
        "except ReviewError",
        "except OSError",
        "except CacheError",
    ]


def _run(tmp_path: Path, debug: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILL_EVAL_")}
    if debug:
        env["SKILL_EVAL_DEBUG"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    skill = write_skill(tmp_path / "skill", "Answer with DONE.")
    return subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", "run", "--task-suite", "missing.yaml"]
        + ["--standalone", "--skill-path", str(skill), "--mock", "--state-root", "state"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


def test_debug_prints_the_traceback_and_keeps_the_exit_code(tmp_path: Path) -> None:
    plain = _run(tmp_path, debug=False)
    assert plain.returncode == 2 and plain.stdout == ""
    [line] = plain.stderr.splitlines()
    assert line.startswith("Error: ") and "missing.yaml" in line, plain.stderr
    debug = _run(tmp_path, debug=True)
    assert debug.returncode == 2 and debug.stdout == ""
    lines = debug.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):", debug.stderr
    assert any(x.startswith("skill_eval.errors.SuiteError: ") for x in lines), debug.stderr
    assert lines[-1] == line  # the same one line, last


def test_an_error_exits_with_its_class_code_whatever_the_command(tmp_path: Path) -> None:
    """The same class, the same code: rejudge and compare mapped every error to 2 before."""
    suite = write_suite(tmp_path / "s", [contains_task("t", "DONE")])
    for args in (
        ("rejudge", str(tmp_path / "nope")),
        ("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")),
        ("report", str(tmp_path / "a.json")),
        ("validate", str(suite), "--mock"),  # a flag that goes with --judges
    ):
        code, out, err = run_cli(*args)
        assert code == 2 and out == "" and err.startswith("Error: "), (args, err)
        assert "Traceback" not in err


@pytest.mark.parametrize("command", ["export", "report"])
def test_an_output_that_cannot_be_written_is_bad_input(tmp_path: Path, command: str) -> None:
    """An OSError while writing what the user named is translated where it is raised: exit 2,
    one line naming the file (an OSError nobody translated would exit 3)."""
    suite = write_suite(tmp_path / "s", [contains_task("t", "DONE")])
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    if command == "export":
        args = ("export", str(suite), "-o", str(blocker / "evals.json"))
    else:
        demo = tmp_path / "artifact.json"
        code, out, err = run_cli(
            "run", "--task-suite", str(suite), "--mock", "--no-baseline", "--standalone",
            "--skill-path", str(write_skill(tmp_path / "k", "x")),
            "--state-root", str(tmp_path / "state"), "--output", str(demo),
        )  # fmt: skip
        assert demo.is_file(), err
        args = ("report", str(demo), "-o", str(blocker / "r.txt"))
    code, out, err = run_cli(*args)
    assert code == 2 and out == "", err
    [line] = err.splitlines()
    assert line.startswith("Error: ") and str(blocker) in line and "cannot write" in line


def test_an_oserror_nobody_translated_is_one_line_and_exit_3(tmp_path: Path) -> None:
    """A state root below a file: the OSError of making it reaches the top (before issue 38:
    a traceback and exit 1). Should `run` learn to name this itself, pick another."""
    suite = write_suite(tmp_path / "s", [contains_task("t", "DONE")])
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    code, out, err = run_cli(
        "run", "--task-suite", str(suite), "--mock", "--no-baseline", "--standalone",
        "--skill-path", str(write_skill(tmp_path / "k", "x")),
        "--state-root", str(blocker / "state"),
    )  # fmt: skip
    assert code == 3 and out == "", err
    assert err.splitlines() == [f"Error: {blocker / 'state'}: Not a directory"]
