"""Read one evaluator SKILL.md: YAML frontmatter (parsed by `safeyaml`: plain data only, no
tags, alias bombs and deep nesting refused, size-limited), checked against the shipped JSON
Schema and the rules a schema cannot express; the Markdown body is the rubric.

Every problem names the file and the field, one line each:
`evaluators/x/SKILL.md: metadata.dimensions[1].weight: must be a number greater than 0 ...`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.model import sha256_text
from ..core.safeyaml import YamlError, load_yaml_text
from ..core.validation import schema_problems
from ..errors import Problem, ProblemsError, SkillError

MAX_FILE_BYTES = 256 * 1024
MAX_FRONTMATTER_CHARS = 32 * 1024
# Nodes once aliases are expanded; a 32 KiB frontmatter written out holds far fewer.
MAX_FRONTMATTER_NODES = 20_000
BOM = "\ufeff"
WEIGHT_TOLERANCE = 1e-6
FRONTMATTER_FENCE = "---"


class EvaluatorError(ProblemsError, SkillError):
    """An evaluator skill that cannot be loaded or selected; `problems` lists every problem."""


@dataclass(frozen=True)
class Dimension:
    """One scored dimension of a rubric; weights of an evaluator sum to 1.0."""

    name: str
    weight: float
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight, "description": self.description}


@dataclass(frozen=True)
class EvaluatorSkill:
    """A validated evaluator. `source` is where it was found ("bundled", "user", ...)."""

    name: str
    description: str
    categories: tuple[str, ...]
    dimensions: tuple[Dimension, ...]
    body: str
    path: str
    sha256: str
    source: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, category: str) -> bool:
        wanted = category.strip().casefold()
        return any(c.casefold() == wanted for c in self.categories)

    def dimension(self, name: str) -> Dimension | None:
        """The dimension called `name` (case-insensitive), or None."""
        wanted = name.strip().casefold()
        for dim in self.dimensions:
            if dim.name.casefold() == wanted:
                return dim
        return None


@lru_cache(maxsize=1)
def evaluator_schema() -> dict[str, Any]:
    """The JSON Schema of evaluator frontmatter, shipped as package data."""
    text = resources.files("skill_eval.schemas").joinpath("evaluator_skill.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


class FrontmatterNotClosed(SkillError, ValueError):
    """The text opens a frontmatter block with `---` and never closes it."""


def split_frontmatter(text: str) -> tuple[str, str, int] | None:
    """(frontmatter, body, body's first line number) when `text` opens with a `---` block
    (after an optional UTF-8 byte order mark); None when it does not open with one.
    Raises FrontmatterNotClosed when it opens one and no `---` line closes it."""
    lines = text.removeprefix(BOM).splitlines(keepends=True)
    if not lines or lines[0].strip() != FRONTMATTER_FENCE:
        return None
    for i in range(1, len(lines)):
        if lines[i].strip() == FRONTMATTER_FENCE:
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), i + 2
    raise FrontmatterNotClosed("is not closed (no line `---`)")


def _frontmatter_data(front: str, path: str) -> tuple[Any, list[Problem]]:
    """The frontmatter's data, or the YAML problems with lines counted in the whole file."""
    try:
        # one blank line for the opening `---`, so lines (in messages too) are the file's
        data, _ = load_yaml_text("\n" + front, path, max_nodes=MAX_FRONTMATTER_NODES)
    except YamlError as exc:
        return None, [
            Problem(
                path,
                f"invalid YAML: {p.message.removeprefix('YAML ')}",
                line=p.line,
                field=p.field or "frontmatter",
            )
            for p in exc.problems
        ]
    return data, []


def parse_evaluator(
    text: str, path: str, source: str = ""
) -> tuple[EvaluatorSkill | None, list[Problem]]:
    """Parse and validate one evaluator's text. Returns the skill, or None and every problem."""
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        return None, [Problem(path, f"file is larger than {MAX_FILE_BYTES} bytes")]
    try:
        parts = split_frontmatter(text)
    except FrontmatterNotClosed as exc:
        return None, [Problem(path, str(exc), line=1, field="frontmatter")]
    if parts is None:
        return None, [
            Problem(
                path,
                "must start with a YAML frontmatter block between '---' lines",
                field="frontmatter",
            )
        ]
    front, body, _ = parts
    if len(front) > MAX_FRONTMATTER_CHARS:
        return None, [
            Problem(path, f"is longer than {MAX_FRONTMATTER_CHARS} characters", field="frontmatter")
        ]
    data, yaml_problems = _frontmatter_data(front, path)
    if yaml_problems:
        return None, yaml_problems
    if not isinstance(data, dict):
        return None, [Problem(path, "must be a YAML mapping", field="frontmatter")]
    # a problem with the whole frontmatter (no field) is reported at `frontmatter`
    problems = [
        replace(p, field=p.field or "frontmatter")
        for p in schema_problems(data, evaluator_schema(), path=path)
    ]
    if problems:
        return None, problems
    problems = [Problem(path, msg, field=where) for where, msg in semantic_problems(data, body)]
    if problems:
        return None, problems
    meta = data["metadata"]
    skill = EvaluatorSkill(
        name=data["name"],
        description=data["description"].strip(),
        categories=tuple(meta["categories"]),
        dimensions=tuple(
            Dimension(d["name"], float(d["weight"]), d["description"].strip())
            for d in meta["dimensions"]
        ),
        body=body.strip() + "\n",
        path=path,
        sha256=sha256_text(text),
        source=source,
        extra={
            k: v for k, v in data.items() if k not in ("name", "kind", "description", "metadata")
        },
    )
    return skill, []


def semantic_problems(data: Mapping[str, Any], body: str) -> list[tuple[str, str]]:
    """The rules past the schema, for frontmatter that already matches it."""
    problems: list[tuple[str, str]] = []
    dims = data["metadata"]["dimensions"]
    seen: dict[str, int] = {}
    for i, dim in enumerate(dims):
        key = dim["name"].strip().casefold()
        if key in seen:
            problems.append(
                (
                    f"metadata.dimensions[{i}].name",
                    f"duplicate dimension name {dim['name']!r} "
                    f"(also metadata.dimensions[{seen[key]}])",
                )
            )
        else:
            seen[key] = i
    total = math.fsum(float(d["weight"]) for d in dims)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        weights = " + ".join(f"{d['weight']:g}" for d in dims)
        problems.append(
            (
                "metadata.dimensions",
                f"weights must sum to 1.0 (within {WEIGHT_TOLERANCE:g}); {weights} = {total:.6g}",
            )
        )
    cats: dict[str, int] = {}
    for i, cat in enumerate(data["metadata"]["categories"]):
        key = cat.casefold()
        if key in cats:
            problems.append(
                (
                    f"metadata.categories[{i}]",
                    f"duplicate category {cat!r} (categories match case-insensitively)",
                )
            )
        cats.setdefault(key, i)
    if not body.strip():
        problems.append(("body", "the Markdown rubric below the frontmatter is empty"))
    return problems


def read_evaluator(path: Path, source: str = "") -> tuple[EvaluatorSkill | None, list[Problem]]:
    """Read and parse one SKILL.md file; an unreadable file is a problem, not an exception."""
    shown = str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None, [Problem(shown, f"file is larger than {MAX_FILE_BYTES} bytes")]
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None, [Problem(shown, "is not UTF-8 text")]
    except OSError as exc:
        return None, [Problem(shown, f"cannot read: {exc.strerror or exc}")]
    return parse_evaluator(text, shown, source)


def load_evaluator(path: Path, source: str = "") -> EvaluatorSkill:
    """Load one evaluator SKILL.md or raise EvaluatorError with every problem."""
    skill, problems = read_evaluator(path, source)
    if skill is None:
        raise EvaluatorError(f"invalid evaluator {path}", path=str(path), problems=problems)
    return skill


def evaluator_files(path: Path) -> list[Path]:
    """The SKILL.md files a user means by `path`: the file itself, `path/SKILL.md`, or every
    SKILL.md below a directory that holds one folder per evaluator."""
    if path.is_file():
        return [path]
    if (path / "SKILL.md").is_file():
        return [path / "SKILL.md"]
    if path.is_dir():
        return sorted(p for p in path.rglob("SKILL.md") if p.is_file())
    return []


def validate_evaluator_paths(paths: list[Path]) -> tuple[list[EvaluatorSkill], list[Problem]]:
    """Validate files or directories of evaluators: the valid skills and every problem."""
    valid: list[EvaluatorSkill] = []
    problems: list[Problem] = []
    for path in paths:
        files = evaluator_files(path)
        if not files:
            what = "does not exist" if not path.exists() else "holds no SKILL.md"
            problems.append(Problem(str(path), what))
        for file in files:
            skill, found = read_evaluator(file)
            problems += found
            if skill is not None:
                valid.append(skill)
    return valid, problems
