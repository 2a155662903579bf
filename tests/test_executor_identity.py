"""An executor's identity stays inside `skill_eval/executors/` (issue 38): no code elsewhere
compares a value with an executor's name or keeps a list of them. What differs between
executors is declared on its ExecutorSpec / ExecutorBase, and every list is derived from the
registry: a new executor (a plugin here) shows up in each one without touching another file."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from skill_eval.core.model import ExecutionRequest, ExecutionResult
from skill_eval.core.work import ToolCall
from skill_eval.errors import UsageError
from skill_eval.executors import base
from skill_eval.executors.base import (
    DEFAULT_EXECUTOR,
    OFFLINE_EXECUTOR,
    ExecutorBase,
    ExecutorConfig,
    ExecutorSpec,
    config_schema,
    executor_names,
    get_executor_spec,
    register_executor,
)
from skill_eval.executors.catalog import (
    executors_with_option,
    is_offline,
    serves_skill_files,
    skill_invocations,
    skill_roots,
)
from skill_eval.plan.executor_options import SHORTHANDS
from skill_eval.plan.run_plan import RunPlan
from tests.helpers import REPO, run_cli

PACKAGE = REPO / "skill_eval"

# Where an executor's name may stand as a string outside executors/, by (file, the top-level
# statement holding it): each is the `--mock` flag's own name, which is also the mock's.
FLAG_NAMES: dict[tuple[str, str], int] = {
    ("plan/flags.py", "RESOLVED"): 1,
    ("plan/flags.py", "plan_from_flags"): 1,  # flags.pop("mock")
    ("plan/stored.py", "LEGACY_RESOLVED"): 1,
    ("plan/stored.py", "plan_from_options"): 2,  # the bool check, stored.get("mock")
    ("cli/flag_table.py", "WHAT"): 1,  # the --mock flag, declared once
    ("plan/checks.py", "MOCK_FLAG"): 1,  # --mock by its Python name, read by every command
}
# The agent CLIs the jail runs: jail/ keeps the mechanism and names none of them (each
# executor declares its wire format, jail/wire.py, and hands it to the forward).
AGENTS = re.compile(r"claude|codex|opencode", re.IGNORECASE)
# Being reworked by the coordinator's improve/review executor options (issue 38), which removes
# the names there: drop these entries with that change.
PENDING: tuple[str, ...] = ()


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (a module's, class's, function's first string)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _owner(statement: ast.stmt) -> str:
    """A top-level statement's name: the function's, class's, or assigned constant's."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return statement.name
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    if isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    return names[0] if names else f"line {statement.lineno}"


def name_literals(source: str, names: set[str]) -> Iterator[tuple[int, str, str]]:
    """(line, owner, literal) of every string constant in `source` equal to one of `names`,
    docstrings aside: a comparison, a default, a list, a dict key alike."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for statement in tree.body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in names
                and id(node) not in docstrings
            ):
                yield node.lineno, _owner(statement), node.value


def test_no_executor_name_outside_executors() -> None:
    names = set(executor_names())
    found: list[str] = []
    counts: dict[tuple[str, str], int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("executors/") or rel.startswith(PENDING):
            continue
        for line, owner, literal in name_literals(path.read_text(encoding="utf-8"), names):
            if (rel, owner) in FLAG_NAMES:
                counts[rel, owner] = counts.get((rel, owner), 0) + 1
            else:
                found.append(f"skill_eval/{rel}:{line} ({owner}): {literal!r}")
    assert found == [], "executor names outside executors/ (declare a capability):\n" + "\n".join(
        found
    )
    # a flag's name stays where it is, and nothing else joins it there
    assert counts == FLAG_NAMES


def agent_names(source: str) -> Iterator[tuple[int, str]]:
    """(line, word) of each mention of an agent CLI in `source`: in code, strings, comments
    and docstrings alike."""
    for number, line in enumerate(source.splitlines(), 1):
        for found in AGENTS.finditer(line):
            yield number, found.group(0)


def test_no_module_of_the_jail_names_an_agent() -> None:
    """jail/ is the mechanism (the forward, the providers, the holder, the filters); what an
    agent CLI speaks or needs is declared by its executor."""
    found = [
        f"skill_eval/{path.relative_to(PACKAGE).as_posix()}:{line}: {word}"
        for path in sorted((PACKAGE / "jail").rglob("*.py"))
        for line, word in agent_names(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "jail/ names an agent CLI:\n" + "\n".join(found)


def test_the_agent_scan_sees_code_strings_and_comments() -> None:
    source = (
        'import x\nROUTES = {"/v1/messages"}  # Claude Code\nDialect = "codex"\n"""OpenCode."""\n'
    )
    assert list(agent_names(source)) == [(2, "Claude"), (3, "codex"), (4, "OpenCode")]


def test_the_scan_sees_comparisons_defaults_and_lists() -> None:
    source = (
        '"""Docstring naming mock."""\n'
        "def f(x, e='claude-cli'):\n"
        "    '''mock here is prose'''\n"
        "    return x == 'mock' or x in ('anthropic', 'openai')\n"
        "KEYS = {'codex': 1}\n"
    )
    found = list(name_literals(source, set(executor_names())))
    assert found == [
        (2, "f", "claude-cli"),
        (4, "f", "mock"),
        (4, "f", "anthropic"),
        (4, "f", "openai"),
        (5, "KEYS", "codex"),
    ]


def test_the_named_defaults_are_registered() -> None:
    assert DEFAULT_EXECUTOR in executor_names() and not is_offline(DEFAULT_EXECUTOR)
    offline = get_executor_spec(OFFLINE_EXECUTOR)
    assert offline.offline and offline.grader is not None  # it judges when nothing else can
    assert (
        RunPlan.from_flags(task_suite="s.yaml", standalone=True, skill_path="skill").executor.name
        == DEFAULT_EXECUTOR
    )
    mocked = RunPlan.from_flags(task_suite="s.yaml", standalone=True, skill_path="skill", mock=True)
    assert (mocked.executor.name, mocked.judging.executor) == (OFFLINE_EXECUTOR, OFFLINE_EXECUTOR)


def test_each_executor_declares_its_skills_folder_among_its_roots() -> None:
    for name in executor_names():
        spec = get_executor_spec(name)
        folder = getattr(spec.build, "skills_dir", None)  # the class's declared folder
        if folder is not None:
            assert folder in spec.skill_roots, name
        for root in spec.skill_roots:
            assert tuple(root.rsplit("/", 1)) in skill_roots(), (name, root)


def test_every_shorthand_names_the_executors_that_have_its_option() -> None:
    out = " ".join(run_cli("run", "--help")[1].split())
    for short in SHORTHANDS:
        owners = executors_with_option(short.option)
        assert owners, f"{short.flag}: no registered executor has {short.option!r}"
        assert f"{short.option}=" in out and f"({', '.join(owners)}" in out, short.flag


class _Echo(ExecutorBase):
    """A plugin agent: its skills folder is its own."""

    name = "echo"
    skills_dir = ".echo/skills"

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        return ExecutionResult(output=request.user_prompt)


@pytest.fixture
def plugin() -> Iterator[str]:
    """A plugin executor registered the way an entry point would be, with a batch API, a
    skills folder and the skill files of its folder served; forgotten afterwards."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class EchoConfig(ExecutorConfig):
        batch: bool = False

    register_executor(
        ExecutorSpec(
            name="echo",
            config_cls=EchoConfig,
            schema=config_schema(EchoConfig, {"batch": {"type": "boolean"}}),
            build=_Echo,
            serves_skill_files=True,
            skill_roots=(_Echo.skills_dir,),
        )
    )
    yield "echo"
    base.REGISTRY.reset()


def test_a_new_executor_joins_every_derived_list(plugin: str, tmp_path: Path) -> None:
    assert plugin in executors_with_option("batch") and serves_skill_files(plugin)
    assert (".echo", "skills") in skill_roots()
    read = ToolCall("Read", {"file_path": "/w/.echo/skills/pdf/SKILL.md"}, True, "")
    assert skill_invocations([read], "pdf") == (read,)
    # --batch is decided by the option it declares, not by its name
    plan = RunPlan.from_flags(
        task_suite="s.yaml", standalone=True, skill_path="skill", executor=plugin, batch=True
    )
    assert plan.executor.options["batch"] is True
    with pytest.raises(UsageError, match=r"--batch .* needs --executor anthropic or echo"):
        RunPlan.from_flags(
            task_suite="s.yaml", standalone=True, skill_path="skill", mock=True, batch=True
        )
    help_text = " ".join(run_cli("run", "--help")[1].split())
    assert "batch=true (anthropic, echo)" in help_text
