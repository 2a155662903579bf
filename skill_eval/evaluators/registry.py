"""Where evaluator skills come from, which one wins a name, and which one a task gets.

Sources, highest precedence first: each `--evaluators-dir DIR` (in the order given), the user
folder `$XDG_DATA_HOME/skill-eval/evaluators/`, the project's `.agents/evaluators/` (the
project directory is the current one unless given), and the evaluators bundled in the
package. Every folder holds one sub-folder per evaluator with its SKILL.md. A higher source
overrides a lower one of the same name and wins category matches.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from ..errors import Problem
from .loader import EvaluatorError, EvaluatorSkill, parse_evaluator, read_evaluator

SourceKind = Literal["evaluators-dir", "user", "project", "bundled"]
SelectedBy = Literal["explicit", "judge-category", "task-category", "fallback"]
FALLBACK = "general"
PROJECT_SUBDIR = Path(".agents") / "evaluators"
MISSING_DIR = "evaluators dir does not exist or is not a directory"


@dataclass(frozen=True)
class Source:
    """One place evaluators are loaded from; lower `rank` wins."""

    kind: SourceKind
    path: Path | None  # None for the bundled evaluators
    rank: int
    required: bool = False  # an explicit --evaluators-dir must exist

    @property
    def label(self) -> str:
        return self.kind if self.path is None else f"{self.kind} ({self.path})"


@dataclass(frozen=True)
class Selection:
    """The evaluator a judgement uses, and why: recorded in the evaluation."""

    evaluator: EvaluatorSkill
    by: SelectedBy
    reason: str
    category: str | None = None
    candidates: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "reason": self.reason,
            "category": self.category,
            "candidates": list(self.candidates),
        }


def user_evaluators_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/skill-eval/evaluators`; XDG_DATA_HOME unset, empty or relative means
    `~/.local/share` (as the XDG spec says)."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or ""
    if not base or not os.path.isabs(base):
        home = env.get("HOME") or str(Path.home())
        base = os.path.join(home, ".local", "share")
    return Path(base) / "skill-eval" / "evaluators"


def evaluator_sources(
    evaluators_dirs: Sequence[str | Path] = (),
    project_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Source]:
    """The sources in precedence order. `project_dir` defaults to the current directory."""
    sources = [
        Source("evaluators-dir", Path(d).expanduser().resolve(), i, required=True)
        for i, d in enumerate(evaluators_dirs)
    ]
    root = Path(project_dir) if project_dir is not None else Path.cwd()
    sources.append(Source("user", user_evaluators_dir(env), len(sources)))
    sources.append(Source("project", (root / PROJECT_SUBDIR).resolve(), len(sources)))
    sources.append(Source("bundled", None, len(sources)))
    return sources


@lru_cache(maxsize=1)
def bundled_evaluators() -> tuple[EvaluatorSkill, ...]:
    """The evaluators shipped in the package (read once; they never change)."""
    root = resources.files("skill_eval.evaluators").joinpath("bundled")
    found: list[EvaluatorSkill] = []
    for folder in sorted(root.iterdir(), key=lambda t: t.name):
        skill_md = folder.joinpath("SKILL.md")
        if not skill_md.is_file():
            continue
        shown = f"<bundled>/{folder.name}/SKILL.md"
        skill, problems = parse_evaluator(skill_md.read_text(encoding="utf-8"), shown, "bundled")
        if skill is None:  # a packaging bug: the tests validate every bundled file
            raise EvaluatorError(
                f"bundled evaluator {folder.name} is invalid", path=shown, problems=problems
            )
        found.append(skill)
    return tuple(found)


def _scan(source: Source) -> tuple[list[EvaluatorSkill], list[Problem]]:
    if source.path is None:
        return list(bundled_evaluators()), []
    if not source.path.is_dir():
        return [], [Problem(str(source.path), MISSING_DIR)] if source.required else []
    problems: list[Problem] = []
    if (source.path / "SKILL.md").is_file():
        problems.append(
            Problem(
                str(source.path / "SKILL.md"),
                "an evaluators dir holds one folder per evaluator; move this "
                "file into a sub-folder named after the evaluator",
            )
        )
    skills: list[EvaluatorSkill] = []
    seen: dict[str, str] = {}
    for folder in sorted(p for p in source.path.iterdir() if p.is_dir()):
        file = folder / "SKILL.md"
        if not file.is_file():
            continue
        skill, found = read_evaluator(file, source.kind)
        problems += found
        if skill is None:
            continue
        if skill.name in seen:
            problems.append(
                Problem(
                    str(file),
                    f"duplicate evaluator name {skill.name!r} in "
                    f"one source (also {seen[skill.name]})",
                    field="name",
                )
            )
            continue
        seen[skill.name] = str(file)
        skills.append(skill)
    return skills, problems


@dataclass
class EvaluatorRegistry:
    """Every evaluator found, by source; `problems` lists files that failed to load."""

    sources: list[Source]
    by_source: list[list[EvaluatorSkill]]
    problems: list[Problem] = field(default_factory=list)

    def effective(self) -> list[tuple[EvaluatorSkill, Source]]:
        """One evaluator per name (the highest-precedence one), sorted by name."""
        chosen: dict[str, tuple[EvaluatorSkill, Source]] = {}
        for source, skills in zip(self.sources, self.by_source, strict=True):
            for skill in skills:
                chosen.setdefault(skill.name, (skill, source))
        return [chosen[name] for name in sorted(chosen)]

    def shadowed(self) -> list[tuple[EvaluatorSkill, Source]]:
        """Evaluators hidden by a higher-precedence one of the same name."""
        winners = {id(skill) for skill, _ in self.effective()}
        return [
            (skill, source)
            for source, skills in zip(self.sources, self.by_source, strict=True)
            for skill in skills
            if id(skill) not in winners
        ]

    def names(self) -> list[str]:
        return [skill.name for skill, _ in self.effective()]

    def get(self, name: str) -> EvaluatorSkill:
        """The evaluator called `name`, or EvaluatorError listing the available ones."""
        for skill, _ in self.effective():
            if skill.name == name:
                return skill
        raise EvaluatorError(f"unknown evaluator {name!r}; available: {', '.join(self.names())}")

    def source_of(self, skill: EvaluatorSkill) -> Source:
        for source, skills in zip(self.sources, self.by_source, strict=True):
            if any(s is skill for s in skills):
                return source
        raise KeyError(skill.name)

    def select(
        self,
        evaluator: str | None = None,
        judge_category: str | None = None,
        task_category: str | None = None,
    ) -> Selection:
        """Explicit name, else the judge's category (which replaces the task's), else the
        task's category, else `general`. Ties: higher-precedence source, then name."""
        if evaluator:
            skill = self.get(evaluator)
            return Selection(
                skill,
                "explicit",
                f"evaluator {evaluator!r} named by the judge (from {self.source_of(skill).kind})",
            )
        by: SelectedBy = "judge-category" if judge_category else "task-category"
        category = judge_category or task_category
        if category:
            matches = [
                (source.rank, skill.name, skill, source)
                for skill, source in self.effective()
                if skill.matches(category)
            ]
            matches.sort(key=lambda m: (m[0], m[1]))
            if matches:
                _, name, skill, source = matches[0]
                names = tuple(f"{m[1]} ({m[3].kind})" for m in matches)
                reason = f"{by.replace('-', ' ')} {category!r} matches {name!r} ({source.kind})"
                if len(matches) > 1:
                    reason += (
                        f"; chosen over {', '.join(names[1:])} by source precedence, then name"
                    )
                return Selection(skill, by, reason, category, names)
        skill = self.get(FALLBACK)
        reason = (
            f"no evaluator matches category {category!r}; fell back to {FALLBACK!r}"
            if category
            else f"no evaluator or category given; fell back to {FALLBACK!r}"
        )
        return Selection(skill, "fallback", reason + f" ({self.source_of(skill).kind})", category)

    def raise_for_missing_dirs(self) -> None:
        """EvaluatorError, one line per explicit --evaluators-dir that is not a directory:
        listing or showing evaluators refuses such a folder as a run does."""
        missing = [
            Problem(str(source.path), MISSING_DIR)
            for source in self.sources
            if source.required and source.path is not None and not source.path.is_dir()
        ]
        if missing:
            raise EvaluatorError("missing evaluators dir", problems=missing)

    def raise_for_problems(self) -> None:
        if self.problems:
            raise EvaluatorError("invalid evaluator skills", problems=list(self.problems))


def load_registry(
    evaluators_dirs: Sequence[str | Path] = (),
    project_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> EvaluatorRegistry:
    """Scan every source. Files that fail to load are skipped and listed in `problems`."""
    sources = evaluator_sources(evaluators_dirs, project_dir, env)
    by_source: list[list[EvaluatorSkill]] = []
    problems: list[Problem] = []
    for source in sources:
        skills, found = _scan(source)
        by_source.append(skills)
        problems += found
    return EvaluatorRegistry(sources, by_source, problems)


class RegistryCache:
    """Registries memoised by their source settings, shared by the judges of one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[tuple[Any, ...], EvaluatorRegistry] = {}

    def get(
        self,
        evaluators_dirs: Sequence[str | Path],
        project_dir: str | Path | None,
        env: Mapping[str, str] | None = None,
    ) -> EvaluatorRegistry:
        user = user_evaluators_dir(env)
        key = (tuple(str(d) for d in evaluators_dirs), str(project_dir or Path.cwd()), str(user))
        with self._lock:
            if key not in self._cache:
                self._cache[key] = load_registry(evaluators_dirs, project_dir, env)
            return self._cache[key]

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()
