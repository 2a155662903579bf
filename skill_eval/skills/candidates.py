"""Candidates of a ranking artifact: full inline text, or an execution plan (plans.py) applied
to a fresh copy of the original skill directory; the original is never touched.

A candidate is built in its own folder under the run's work directory: a copy of the original
(the whole directory when target.path names one, SKILL.md alone when it names a file) with the
candidate's SKILL.md (or planned edit) written into the copy, never through a link.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

from ..core.model import Skill
from ..core.paths import fresh_dir, inside, safe_component
from ..errors import SkillError
from .load import MAX_SKILL_BYTES, load_skill, read_skill_text
from .plans import SUPPORTED_ACTIONS, apply_plan, plan_problems
from .ranking import Ranking
from .target import original_target as target_of
from .tree import IGNORED_NAMES, SKILL_FILE

INLINE_KEYS: tuple[str, ...] = ("skill_content", "content", "body")
CandidateSource = Literal["inline", "execution_plan"]


@dataclass(frozen=True)
class ResolvedCandidate:
    """A candidate ready to run. `warnings` go into the artifact (e.g. a plan that changed
    nothing, which makes the comparison void)."""

    skill: Skill
    score: float | None
    entry: dict[str, Any]
    warnings: tuple[str, ...]
    source: CandidateSource


def resolve_original(ranking: Ranking, skills_root: Path | None = None) -> Skill:
    """The original skill named by `target.path` (checked by target.original_target): a
    directory, whose skill carries it, or a file, whose skill is that file alone (see
    load_skill)."""
    target = target_of(ranking, skills_root)
    try:
        return load_skill(target)
    except SkillError as exc:
        raise SkillError(f"{exc.message} (target.path in {ranking.path})", path=exc.path) from None


def resolve_candidate(
    ranking: Ranking, candidate_id: str, work_dir: Path, skills_root: Path | None = None
) -> ResolvedCandidate:
    """Build the skill of one candidate in a fresh folder under `work_dir`: inline text written
    as SKILL.md into a copy of the original, or the execution plan applied to the copy. The
    copy is the whole original directory when `target.path` names a directory, and a folder
    holding only SKILL.md when it names a file. Raises SkillError for an unknown id, a
    candidate without a skill, a bad plan or target_path."""
    index, entry = _find_candidate(ranking, candidate_id)
    where = f'{ranking.path}: scored_candidates[{index}] (id "{candidate_id}")'
    score = candidate_score(entry)
    plan = entry.get("execution_plan")
    for key in INLINE_KEYS:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            skill, warnings = _inline(
                ranking, candidate_id, where, key, value, work_dir, skills_root
            )
            if plan is not None:
                warnings.insert(
                    0,
                    f"candidate {candidate_id!r} has both {key} and an "
                    f"execution_plan; the execution_plan was ignored",
                )
            return ResolvedCandidate(skill, score, entry, tuple(warnings), "inline")
    if plan is None:
        raise SkillError(
            f"{where}: has no skill: give its full SKILL.md text as one of "
            f"{', '.join(INLINE_KEYS)}, or an execution_plan whose action is one of "
            f"{', '.join(SUPPORTED_ACTIONS)}",
            path=str(ranking.path),
        )
    skill, warnings = _planned(ranking, candidate_id, where, entry, plan, work_dir, skills_root)
    return ResolvedCandidate(skill, score, entry, tuple(warnings), "execution_plan")


def score_of(ranking: Ranking, candidate_id: str) -> float | None:
    """The discriminator's `score` of candidate `candidate_id`, read before anything else of
    it (a candidate under --eval-threshold is skipped unread). SkillError for an unknown id."""
    return candidate_score(_find_candidate(ranking, candidate_id)[1])


def candidate_score(entry: Mapping[str, Any]) -> float | None:
    """The discriminator's `score` of a scored_candidates entry; None when absent or not a
    number."""
    raw = entry.get("score")
    return float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None


def _inline(
    ranking: Ranking,
    candidate_id: str,
    where: str,
    key: str,
    text: str,
    work_dir: Path,
    skills_root: Path | None = None,
) -> tuple[Skill, list[str]]:
    if len(text.encode("utf-8")) > MAX_SKILL_BYTES:
        raise SkillError(f"{where}.{key}: the skill is larger than 1 MiB", path=str(ranking.path))
    warnings: list[str] = []
    root = _fresh_dir(work_dir, candidate_id)
    try:
        original_target: Path | None = target_of(ranking, skills_root)
        original = resolve_original(ranking, skills_root)
    except SkillError as exc:
        original_target, original = None, None
        warnings.append(
            f"original skill unavailable ({exc.message}); candidate "
            f"{candidate_id!r} is a directory holding only {SKILL_FILE}"
        )
    if original_target is not None and original is not None:
        skill_dir = _copy_original(original_target, root, work_dir)
        if original.content == text:
            warnings.append(
                f"candidate {candidate_id!r} is identical to the original skill; "
                f"the comparison is void"
            )
    else:
        name = ranking.target.get("name")
        skill_dir = root / _dir_name(name if isinstance(name, str) else "skill")
        skill_dir.mkdir()
    _write_in_copy(skill_dir / SKILL_FILE, text)
    skill = _load_candidate(skill_dir, f"{where}.{key}", str(ranking.path))
    origin = f"{ranking.path} candidate {candidate_id!r} ({key})"
    return dataclasses.replace(skill, origin=origin), warnings


def _planned(
    ranking: Ranking,
    candidate_id: str,
    where: str,
    entry: Mapping[str, Any],
    plan: Any,
    work_dir: Path,
    skills_root: Path | None = None,
) -> tuple[Skill, list[str]]:
    problems = plan_problems(plan)
    if problems:
        raise SkillError(
            "\n".join(f"{where}.{field}: {message}" for field, message in problems),
            path=str(ranking.path),
        )
    given = entry.get("target_path") or plan.get("target_path") or SKILL_FILE
    original_target = target_of(ranking, skills_root)
    rel = _in_skill(given, original_target, where, str(ranking.path))
    _check_relative(rel, where, str(ranking.path))
    original = resolve_original(ranking, skills_root)
    skill_dir = _copy_original(original_target, _fresh_dir(work_dir, candidate_id), work_dir)
    target = skill_dir / rel
    if not inside(skill_dir, target):
        raise SkillError(
            f"{where}.target_path: {rel!r} leads outside the skill directory (through a symlink)",
            path=str(ranking.path),
        )
    real = Path(os.path.realpath(target))
    if not real.is_file():
        what = (
            f"the skill directory {original.directory}"
            if original.directory is not None
            else f"the skill: target.path names the file {original.origin}, so the skill "
            f"is that file alone (name its directory to edit other files)"
        )
        raise SkillError(
            f"{where}.target_path: {rel!r} is not a file in {what}", path=str(ranking.path)
        )
    try:
        outcome = apply_plan(read_skill_text(real), plan)
    except SkillError as exc:
        raise SkillError(f"{where}: {rel}: {exc.message}", path=str(ranking.path)) from None
    warnings: list[str] = []
    if outcome.changed:
        _write_in_copy(real, outcome.text)
        if Path(rel) != Path(SKILL_FILE):
            warnings.append(
                f"execution plan of candidate {candidate_id!r} edits {rel}, not "
                f"{SKILL_FILE}; only the installed skill mode sees the change"
            )
    else:
        warnings.append(
            f"execution plan of candidate {candidate_id!r} changed nothing: "
            f"{outcome.note}; the comparison is void"
        )
    skill = _load_candidate(skill_dir, f"{where}: {rel}", str(ranking.path))
    origin = (
        f"{ranking.path} candidate {candidate_id!r} (execution_plan "
        f"{plan['action']} on {original.origin})"
    )
    return dataclasses.replace(skill, origin=origin), warnings


def _load_candidate(skill_dir: Path, where: str, ranking_path: str) -> Skill:
    """Load a built candidate; its format errors name the candidate, not the temp copy."""
    try:
        return load_skill(skill_dir)
    except SkillError as exc:
        copy = f"{skill_dir / SKILL_FILE}:"
        lines = [line.replace(copy, f"{where}, line ", 1) for line in exc.message.split("\n")]
        raise SkillError("\n".join(lines), path=ranking_path) from None


def _find_candidate(ranking: Ranking, candidate_id: str) -> tuple[int, dict[str, Any]]:
    for index, entry in enumerate(ranking.candidates):
        if entry.get("id") == candidate_id:
            return index, entry
    available = ", ".join(ranking.candidate_ids) or "(none)"
    raise SkillError(
        f"candidate {candidate_id!r} not found in {ranking.path}; available ids: {available}",
        path=str(ranking.path),
    )


def _fresh_dir(work_dir: Path, candidate_id: str) -> Path:
    """A new folder under work_dir for one candidate; the id is sanitised, never a path."""
    return fresh_dir(work_dir, f"candidate-{safe_component(candidate_id, max_len=40)}-")


def _dir_name(name: str) -> str:
    return name if name not in ("", ".", "..") and "/" not in name else "skill"


def _copy_original(original: Path, root: Path, work_dir: Path) -> Path:
    """Copy the original skill to root/<its folder's name>. A directory is copied whole:
    symlinks as links (never followed); IGNORED_NAMES, special files and work_dir itself (when
    it lies inside the skill directory) are left out. A file (SKILL.md or another name) becomes a
    directory holding only SKILL.md, with the file's text: nothing next to it is copied."""
    if not original.is_dir():
        dest = root / _dir_name(original.parent.resolve().name)
        dest.mkdir()
        _write_in_copy(dest / SKILL_FILE, read_skill_text(original))
        return dest
    source = original.resolve()
    dest = root / _dir_name(source.name)
    skip = {os.path.realpath(work_dir), os.path.realpath(root)}

    def ignore(directory: str, names: list[str]) -> Iterable[str]:
        left_out = []
        for name in names:
            full = os.path.join(directory, name)
            mode = os.lstat(full).st_mode
            special = not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))
            if name in IGNORED_NAMES or special or os.path.realpath(full) in skip:
                left_out.append(name)
        return left_out

    shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    os.chmod(dest, stat.S_IMODE(os.stat(dest).st_mode) | stat.S_IRWXU)
    return dest


def _write_in_copy(path: Path, text: str) -> None:
    """Write a file of the copy: a symlink is replaced, never written through; a read-only
    copied file is made writable first. Bytes are written as given (CRLF stays CRLF)."""
    if path.is_symlink():
        path.unlink()
    elif path.exists():
        os.chmod(path, stat.S_IMODE(path.stat().st_mode) | stat.S_IWUSR)
    path.write_bytes(text.encode("utf-8"))


def _check_relative(rel: Any, where: str, ranking_path: str) -> None:
    problem = None
    if not isinstance(rel, str) or not rel.strip() or "\x00" in rel:
        problem = "must be a non-empty relative path"
    elif (
        PurePosixPath(rel).is_absolute()
        or PureWindowsPath(rel).is_absolute()
        or PureWindowsPath(rel).drive
        or rel.startswith(("/", "\\"))
    ):
        problem = f"{rel!r} must be relative to the skill directory"
    elif ".." in PureWindowsPath(rel).parts:
        problem = f"{rel!r} must not contain '..'"
    elif PurePosixPath(rel) == PurePosixPath("."):
        problem = f"{rel!r} must name a file"
    if problem:
        raise SkillError(f"{where}.target_path: {problem}", path=ranking_path)


def _in_skill(given: Any, original: Path, where: str, ranking_path: str) -> Any:
    """A plan's target_path relative to the skill. The discriminator of the original pipeline
    writes absolute paths: one inside the original skill's folder (as written, or with links
    resolved) becomes the path inside it; any other absolute path is refused. Anything else
    is returned as given, for _check_relative."""
    if not isinstance(given, str) or "\x00" in given or not os.path.isabs(given):
        return given
    folder = original if original.is_dir() else original.parent
    for base, path in (
        (os.path.abspath(folder), os.path.normpath(given)),
        (os.path.realpath(folder), os.path.realpath(given)),
    ):
        if os.path.commonpath([base, path]) == base:  # the folder itself: '.', refused later
            return os.path.relpath(path, base)
    raise SkillError(
        f"{where}.target_path: {given!r} is outside the original skill's folder {folder}",
        path=ranking_path,
    )


def unapplied_plan(ranking: Ranking, candidate_id: str) -> tuple[str, float | None] | None:
    """Why a candidate cannot be built by a program, with its score; None when it can. Its
    execution_plan names an action skill-eval does not implement (the original pipeline's
    `unsupported_manual_*`, left for a person): a run gives it the verdict `skipped` with this
    reason, before any model call. A candidate with inline text, or a malformed plan (an
    error), is not one. Raises SkillError for an unknown id."""
    index, entry = _find_candidate(ranking, candidate_id)
    if any(isinstance(entry.get(key), str) and entry[key].strip() for key in INLINE_KEYS):
        return None
    plan = entry.get("execution_plan")
    action = plan.get("action") if isinstance(plan, Mapping) else None
    if not isinstance(action, str) or not action.strip() or action in SUPPORTED_ACTIONS:
        return None
    action = action if len(action) <= 80 else action[:77] + "..."
    return (
        f"scored_candidates[{index}].execution_plan.action {action!r} cannot be applied "
        f"by a program (skill-eval applies {', '.join(SUPPORTED_ACTIONS)}); the candidate "
        f"was not evaluated",
        candidate_score(entry),
    )
