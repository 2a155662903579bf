"""No import cycles in skill_eval, lazy ones included: an AST scan of every module's imports
that run (module level and inside functions; an `if TYPE_CHECKING:` block only names types
and runs nothing, so it is left out) finds every set of modules that import each other in a
loop. A cycle hidden behind a lazy import still couples the modules both ways: move the
shared piece down instead (docs/architecture.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.test_layers import module_name


def _type_only(tree: ast.Module) -> set[int]:
    """The ids of every node under an `if TYPE_CHECKING:` block."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden |= {id(n) for n in ast.walk(node)}
    return hidden


def runtime_imports(source: str, module: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """The modules of `known` that `source` imports when it runs: `from pkg import name`
    counts as `pkg.name` when that is a module, else as `pkg`."""
    tree = ast.parse(source)
    hidden = _type_only(tree)
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    yield f"{target}.{alias.name}"
                elif target in known:
                    yield target


def import_cycles(root: Path) -> list[list[str]]:
    """Every set of two or more modules under `root` that import each other in a loop
    (Tarjan's strongly connected components), each sorted."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = {name for name, _ in files}
    edges = {
        name: set(runtime_imports(path.read_text(encoding="utf-8"), name, is_package, known))
        for (name, is_package), path in files.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node] - {node}:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                cycles.append(sorted(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_skill_eval_has_no_import_cycle() -> None:
    cycles = import_cycles(REPO / "skill_eval")
    assert cycles == [], "modules that import each other:\n" + "\n".join(map(str, cycles))


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # a lazy import (inside a function) closes a loop: found
        (
            {"a.py": "from . import b\n", "b.py": "def f():\n    from .a import x\n"},
            [["pkg.a", "pkg.b"]],
        ),
        # a loop through three modules, one of them a package's __init__
        (
            {
                "__init__.py": "def g():\n    from .c import y\n",
                "b.py": "from . import g\n",
                "c.py": "from .b import z\n",
            },
            [["pkg", "pkg.b", "pkg.c"]],
        ),
        # a TYPE_CHECKING import only names types: no loop
        (
            {
                "a.py": "from .b import B\n",
                "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .a import A\n",
            },
            [],
        ),
        # imports one way only
        ({"a.py": "from .b import x\n", "b.py": "import os\n"}, []),
    ],
)
def test_the_scan_finds_lazy_cycles_and_no_others(
    tmp_path: Path, files: dict[str, str], expected: list[list[str]]
) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, source in files.items():
        (root / name).write_text(source)
    assert import_cycles(root) == expected
