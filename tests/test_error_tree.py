"""One documented error tree (httpx `_exceptions.py` style): every exception class the package
defines is a SkillEvalError, drawn in skill_eval/errors.py's docstring under its real parent
and with its real module, and the docstring draws nothing that does not exist."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import skill_eval.errors
from skill_eval.errors import SkillEvalError
from tests.helpers import REPO

PACKAGE = REPO / "skill_eval"
ERRORS_DOC = REPO / "references" / "errors.md"


@dataclass(frozen=True)
class Drawn:
    name: str
    parent: str | None
    module: str  # dotted, under skill_eval


def drawn_tree() -> dict[str, Drawn]:
    """The classes errors.py's docstring draws: `├── Name  (module) what it means`."""
    doc = skill_eval.errors.__doc__ or ""
    found: dict[str, Drawn] = {}
    stack: list[tuple[int, str]] = []  # (column, name) of the open ancestors
    for line in doc.splitlines():
        match = re.match(r"^(\s*)(?:[│ ]*(?:├──|└──) )?([A-Z]\w+)(?:\s+\((\w[\w.]*)\))?", line)
        if not match or not ("──" in line or line.strip().startswith("SkillEvalError ")):
            continue
        column = line.index(match.group(2))
        while stack and stack[-1][0] >= column:
            stack.pop()
        parent = stack[-1][1] if stack else None
        module = f"skill_eval.{match.group(3)}" if match.group(3) else "skill_eval.errors"
        found[match.group(2)] = Drawn(match.group(2), parent, module)
        stack.append((column, match.group(2)))
    return found


def _base_names(node: ast.ClassDef) -> list[str]:
    return [ast.unparse(b) for b in node.bases]


def defined_exceptions() -> dict[str, str]:
    """Every exception class defined in the package's source: name -> dotted module. Found
    from the AST (bases that are builtin exceptions, the package's own exception classes or
    an imported library's), so a class in a module nothing imports is found too."""
    classes: list[tuple[str, str, list[str]]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes.append((node.name, module, _base_names(node)))
    exceptions: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, module, bases in classes:
            if name not in exceptions and any(_is_exception(b, exceptions) for b in bases):
                exceptions[name] = module
                changed = True
    return exceptions


def _is_exception(base: str, known: dict[str, str]) -> bool:
    last = base.rsplit(".", 1)[-1]
    if last in known:
        return True
    value = getattr(builtins, last, None) if "." not in base else _library_attr(base)
    return isinstance(value, type) and issubclass(value, BaseException)


def _library_attr(dotted: str) -> object:
    module, _, attr = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr, None)
    except ImportError:
        return None


def _all_subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


def test_every_exception_class_is_in_the_tree_and_drawn_where_it_is() -> None:
    drawn = drawn_tree()
    defined = defined_exceptions()
    assert "SkillEvalError" in defined and len(defined) > 20
    for name, module in sorted(defined.items()):
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, SkillEvalError), f"{module}.{name} is outside the error tree"
        assert name in drawn, f"{module}.{name} is not drawn in errors.py's docstring"
        assert drawn[name].module == module, f"{name} is drawn in {drawn[name].module}"
        parent = drawn[name].parent
        if parent is not None:
            parent_cls = getattr(importlib.import_module(drawn[parent].module), parent)
            assert parent_cls in cls.__bases__, f"{name} is drawn under {parent}"
    assert set(drawn) == set(defined), "the docstring draws a class the package lacks"


def test_every_subclass_at_run_time_is_drawn() -> None:
    for module in set(defined_exceptions().values()):
        importlib.import_module(module)
    ours = {c for c in _all_subclasses(SkillEvalError) if c.__module__.startswith("skill_eval")}
    assert {c.__name__ for c in ours} == set(drawn_tree()) - {"SkillEvalError"}


def test_the_tree_sees_a_class_added_anywhere(tmp_path: Path) -> None:
    """The AST scan is what catches a class nobody imports: check it finds one."""
    source = "class Stray(KeyError):\n    pass\n\nclass Strayer(Stray):\n    pass\n"
    tree = ast.parse(source)
    names = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    known: dict[str, str] = {}
    for node in names:
        if any(_is_exception(b, known) for b in _base_names(node)):
            known[node.name] = "m"
    assert set(known) == {"Stray", "Strayer"}
    assert not _is_exception("click.Command", {})
    assert _is_exception("click.ClickException", {})


@pytest.mark.parametrize("name", sorted(drawn_tree()))
def test_every_error_is_explained_in_the_reference(name: str) -> None:
    assert f"`{name}`" in ERRORS_DOC.read_text(encoding="utf-8")


def documented_exits() -> dict[str, str]:
    """The last column of references/errors.md's table of errors: name -> exit cell."""
    rows = re.findall(r"^\| `(\w+)` \| `skill_eval[\w.]*` \|.*\| ([^|]+) \|$", ERRORS_DOC.read_text(
        encoding="utf-8"), re.MULTILINE)  # fmt: skip
    return {name: cell.strip() for name, cell in rows}


def _error_class(name: str) -> type[SkillEvalError]:
    cls = getattr(importlib.import_module(drawn_tree()[name].module), name)
    assert issubclass(cls, SkillEvalError)
    return cls


@pytest.mark.parametrize("name", sorted(drawn_tree()))
def test_every_error_exits_with_the_code_the_reference_gives(name: str) -> None:
    """The exit code is the class's (`exit_code`), and the reference's table says it: a
    number, `3 (as RunStopped)` for one that reaches the command line inside another, or `–`
    for one caught where it is raised."""
    cell = documented_exits()[name]
    code = _error_class(name).exit_code
    assert code in (2, 3, 5, 130)
    if cell == "–":
        return
    number, _, via = cell.partition(" (as ")
    carrier = _error_class(via.rstrip(")").strip("`")) if via else _error_class(name)
    assert carrier.exit_code == int(number), f"{name}: exit {carrier.exit_code}, reference {cell}"


def test_the_exit_codes_of_the_tree() -> None:
    """Bad input exits 2 unless a class says otherwise; harness faults 3; a run's cap 5; an
    interrupt 130."""
    faults = {"ExecutorError", "RunStopped", "JailUnavailable", "JailBroken", "TextModelError"}
    faults |= {"JailedCallError"}
    faults |= {"ReviewError", "RunAborted"}
    codes = {name: _error_class(name).exit_code for name in drawn_tree()}
    assert {n for n, c in codes.items() if c == 3} == faults
    assert {n for n, c in codes.items() if c == 130} == {"RunInterrupted"}
    assert {n for n, c in codes.items() if c == 5} == {"BudgetExhausted"}
    assert set(codes.values()) == {2, 3, 5, 130}
