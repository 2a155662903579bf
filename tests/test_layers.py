"""The packages are layers, and imports only run downwards: an AST scan of every module of
skill_eval, module-level, lazy (inside a function) and TYPE_CHECKING imports alike, fails on
any import of a higher package from a lower one and lists each as `module:line -> target`.

Ranks, lowest first (a package may import its own rank and every lower one):

    errors < core < skills, jail, stats, backends < executors < evaluators < judges < plan
    < inputs < engine < report < improve, interop < review < cli
    < the package root (`skill_eval/__init__.py`, the public API)

`stats` is pure (it imports core alone), so judges may use it: the trigger tasks' judge
(judges/triggers/) declares a role whose figures are statistics over judged attempts.
`backends` sit low: the engine hands a backend the function that runs a job here and a
`Shipment` that says how a job travels (engine/shipped.py); a backend knows nothing of
attempts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.helpers import REPO

RANKS: dict[str, int] = {
    "errors": 0,
    "core": 1,
    "skills": 2,
    "jail": 2,
    "executors": 3,
    "evaluators": 4,
    "judges": 5,
    "stats": 2,
    "plan": 8,
    "inputs": 9,
    "engine": 10,
    "backends": 2,
    "report": 11,
    "improve": 12,
    "interop": 12,
    "review": 13,
    "cli": 14,
    "__init__": 15,
}


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """(dotted module name, whether it is a package's __init__) of a file under `root`'s
    parent."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def imports_of(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, absolute target module) of every import in `source`, wherever it stands. A
    name imported from the package root itself (`from .. import core`, `from pkg import
    __version__`) counts as `pkg.<name>`."""
    top = module.split(".")[0]
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == top:
                for alias in node.names:
                    yield node.lineno, f"{target}.{alias.name}"
            else:
                yield node.lineno, target


def package_of(target: str, top: str) -> str | None:
    """The layer a dotted name belongs to (`__init__` for the root and names in it), or None
    when it is not part of `top`."""
    parts = target.split(".")
    if parts[0] != top:
        return None
    if len(parts) == 1:
        return "__init__"
    return parts[1] if parts[1] in RANKS else "__init__"


def upward_imports(root: Path, ranks: Mapping[str, int]) -> tuple[list[str], set[str], set[str]]:
    """(each upward import as `module:line -> target`, the packages that have no rank, the
    (from, to) package pairs of the upward imports)."""
    found: list[str] = []
    unranked: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        module, is_package = module_name(path, root)
        source_layer = package_of(module, root.name) or "__init__"
        if source_layer not in ranks:
            unranked.add(source_layer)
            continue
        seen: set[tuple[int, str]] = set()
        for line, target in imports_of(path.read_text(encoding="utf-8"), module, is_package):
            layer = package_of(target, root.name)
            if layer is None or (line, layer) in seen:
                continue
            seen.add((line, layer))
            if ranks[layer] > ranks[source_layer]:
                found.append(f"{module}:{line} -> {target}")
                pairs.add((source_layer, layer))
    return found, unranked, {f"{a}->{b}" for a, b in pairs}


def test_every_package_has_a_rank() -> None:
    packages = {
        p.name
        for p in (REPO / "skill_eval").iterdir()
        if p.is_dir() and (p / "__init__.py").exists()
    }
    modules = {p.stem for p in (REPO / "skill_eval").glob("*.py")}
    assert packages | modules <= set(RANKS), (
        f"place these in RANKS: {packages | modules - set(RANKS)}"
    )


def test_no_package_imports_a_higher_one() -> None:
    found, unranked, _ = upward_imports(REPO / "skill_eval", RANKS)
    assert not unranked
    assert found == [], "imports from a lower package to a higher one:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("where", "source", "expected"),
    [
        # module level, relative, from a package's module
        (
            "executors/mock.py",
            "from ..judges import base\n",
            ["pkg.executors.mock:1 -> pkg.judges"],
        ),
        # lazy, inside a function, from a package's __init__
        (
            "executors/__init__.py",
            "def f():\n    from ..plan.arms import x\n",
            ["pkg.executors:2 -> pkg.plan.arms"],
        ),
        # absolute, and a name of the root
        (
            "engine/jobs.py",
            "import pkg.cli\nfrom pkg import __version__\n",
            [
                "pkg.engine.jobs:1 -> pkg.cli",
                "pkg.engine.jobs:2 -> pkg.__version__",
            ],
        ),
        # downwards and sideways within a rank: nothing
        ("engine/jobs.py", "from ..backends import threads\nfrom ..core import model\n", []),
    ],
)
def test_the_scan_finds_every_kind_of_upward_import(
    tmp_path: Path, where: str, source: str, expected: list[str]
) -> None:
    root = tmp_path / "pkg"
    for package in ("executors", "engine", "judges", "plan", "cli", "core", "backends"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / where).write_text(source)
    found, unranked, _ = upward_imports(root, RANKS)
    assert (found, unranked) == (expected, set())


# The modules of a lower package that a higher one may import: its seam. The engine asks
# judges through their framework (the registry and spec, roles, the cache, the grader they
# share, observers, batching) and never a judge module by name; judges ask a model service
# through the grader seam and the executor registry (and what it answers of executors by name,
# executors/catalog.py), never an executor's internals.
SEAMS: dict[tuple[str, str], set[str]] = {
    ("engine", "judges"): {"base", "roles", "judge_cache", "llm", "observers", "batch_judging"},
    ("judges", "executors"): {"base", "catalog", "grader", "batches"},
}


@pytest.mark.parametrize(("source", "target"), sorted(SEAMS))
def test_packages_cross_only_at_their_seams(source: str, target: str) -> None:
    root = REPO / "skill_eval"
    allowed = {f"skill_eval.{target}.{name}" for name in SEAMS[source, target]}
    crossing = []
    for path in sorted((root / source).rglob("*.py")):
        module, is_package = module_name(path, root)
        for line, imported in imports_of(path.read_text(encoding="utf-8"), module, is_package):
            if package_of(imported, "skill_eval") == target and imported not in allowed:
                crossing.append(f"{module}:{line} -> {imported}")
    assert crossing == [], f"{source} reaches past the {target} seam:\n" + "\n".join(crossing)
