"""Skills under test: SKILL.md files and directories, ranking artifacts, and candidates.

A candidate comes from a ranking artifact as full inline text or as an execution plan
(plans.py) applied to a fresh copy of the original skill directory; the original is never touched.

A skill given as a directory carries that directory (its references, scripts, ...); a skill
given as a SKILL.md file is that file alone: the folder around a file is not assumed to be the
skill's, so nothing else in it is ever copied (into a candidate, or into a model's workspace).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

import jsonschema

from .errors import Problem, SkillError
from .model import Skill
from .paths import inside, safe_component
from .plans import SUPPORTED_ACTIONS, apply_plan, plan_problems, read_frontmatter

MAX_SKILL_BYTES = 1024 * 1024
INLINE_KEYS: tuple[str, ...] = ("skill_content", "content", "body")
SKILL_FILE = "SKILL.md"
RANKING_SCHEMA = Path(__file__).parent / "schemas" / "ranking.schema.json"
CandidateSource = Literal["inline", "execution_plan"]


@dataclass(frozen=True)
class Ranking:
    """A validated ranking artifact. `path` is absolute; `candidates` are the raw
    `scored_candidates` entries, in file order."""

    path: Path
    data: dict[str, Any]
    run_id: str
    lane: str | None
    target: dict[str, Any]
    candidates: tuple[dict[str, Any], ...]

    @property
    def candidate_ids(self) -> list[str]:
        return [str(c["id"]) for c in self.candidates]


@dataclass(frozen=True)
class ResolvedCandidate:
    """A candidate ready to run. `warnings` go into the artifact (e.g. a plan that changed
    nothing, which makes the comparison void)."""

    skill: Skill
    score: float | None
    entry: dict[str, Any]
    warnings: tuple[str, ...]
    source: CandidateSource


def load_skill(path: str | Path) -> Skill:
    """Load a directory holding a SKILL.md, or a SKILL.md (or other markdown) file.

    Only a directory gives the skill a `directory` (absolute): the installed skill mode copies
    it whole. A file gives `directory=None`, so the skill is that file's text alone, whatever
    else lies next to it. The name is the frontmatter `name`, else the folder's name.
    Raises SkillError naming the path when it is missing, has no SKILL.md, is unreadable, not
    UTF-8 or larger than 1 MiB."""
    given = Path(path)
    directory: Path | None = None
    if given.is_dir():
        file = given / SKILL_FILE
        if not file.is_file():
            raise SkillError(f"no {SKILL_FILE} in skill directory: {given}", path=str(given))
        directory = given.resolve()
    elif given.is_file():
        file = given
    elif given.exists():
        raise SkillError(f"skill is not a regular file: {given}", path=str(given))
    else:
        raise SkillError(f"skill not found: {given}", path=str(given))
    text = _read_skill_text(file)
    front = read_frontmatter(text) or {}
    name = front.get("name")
    if not isinstance(name, str | int | float) or isinstance(name, bool) or not str(name).strip():
        name = (directory or file.parent.resolve()).name or "skill"
    return Skill(name=str(name).strip(), content=text, directory=directory, origin=str(file))


def load_ranking(path: str | Path) -> Ranking:
    """Read and validate a ranking artifact (schemas/ranking.schema.json). Every problem is
    reported at once, one per line, as `<file>: <field>: <message>`."""
    given = Path(path)
    if not given.is_file():
        what = "is not a file" if given.exists() else "not found"
        raise SkillError(f"ranking artifact {what}: {given}", path=str(given))
    try:
        text = given.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillError(f"{given}: not UTF-8 (byte {exc.start})", path=str(given)) from None
    except OSError as exc:
        raise SkillError(f"cannot read ranking artifact {given}: {exc.strerror}",
                         path=str(given)) from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SkillError(f"{given}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}",
                         path=str(given)) from None
    except ValueError as exc:
        raise SkillError(f"{given}: invalid JSON: {exc}", path=str(given)) from None
    problems = _schema_problems(str(given), data)
    if not problems:
        problems = _duplicate_ids(str(given), data["scored_candidates"])
    if problems:
        raise SkillError("\n".join(str(p) for p in problems), path=str(given))
    return Ranking(
        path=given.resolve(),
        data=data,
        run_id=data["run_id"],
        lane=data.get("lane"),
        target=dict(data.get("target") or {}),
        candidates=tuple(data["scored_candidates"]),
    )


def resolve_original(ranking: Ranking) -> Skill:
    """The original skill named by `target.path` (relative to the ranking file's directory):
    a directory, whose skill carries it, or a file, whose skill is that file alone (see
    load_skill)."""
    target = _original_target(ranking)
    try:
        return load_skill(target)
    except SkillError as exc:
        raise SkillError(f"{exc.message} (target.path in {ranking.path})", path=exc.path) from None


def resolve_candidate(ranking: Ranking, candidate_id: str, work_dir: Path) -> ResolvedCandidate:
    """Build the skill of one candidate in a fresh folder under `work_dir`: inline text written
    as SKILL.md into a copy of the original, or the execution plan applied to the copy. The
    copy is the whole original directory when `target.path` names a directory, and a folder
    holding only SKILL.md when it names a file. Raises SkillError for an unknown id, a
    candidate without a skill, a bad plan or target_path."""
    index, entry = _find_candidate(ranking, candidate_id)
    where = f'{ranking.path}: scored_candidates[{index}] (id "{candidate_id}")'
    raw_score = entry.get("score")
    score = float(raw_score) if isinstance(raw_score, int | float) \
        and not isinstance(raw_score, bool) else None
    plan = entry.get("execution_plan")
    for key in INLINE_KEYS:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            skill, warnings = _inline(ranking, candidate_id, where, key, value, work_dir)
            if plan is not None:
                warnings.insert(0, f"candidate {candidate_id!r} has both {key} and an "
                                   f"execution_plan; the execution_plan was ignored")
            return ResolvedCandidate(skill, score, entry, tuple(warnings), "inline")
    if plan is None:
        raise SkillError(
            f"{where}: has no skill: give its full SKILL.md text as one of "
            f"{', '.join(INLINE_KEYS)}, or an execution_plan whose action is one of "
            f"{', '.join(SUPPORTED_ACTIONS)}", path=str(ranking.path))
    skill, warnings = _planned(ranking, candidate_id, where, entry, plan, work_dir)
    return ResolvedCandidate(skill, score, entry, tuple(warnings), "execution_plan")


def _inline(ranking: Ranking, candidate_id: str, where: str, key: str, text: str,
            work_dir: Path) -> tuple[Skill, list[str]]:
    if len(text.encode("utf-8")) > MAX_SKILL_BYTES:
        raise SkillError(f"{where}.{key}: the skill is larger than 1 MiB", path=str(ranking.path))
    warnings: list[str] = []
    root = _fresh_dir(work_dir, candidate_id)
    try:
        original_target: Path | None = _original_target(ranking)
        original = resolve_original(ranking)
    except SkillError as exc:
        original_target, original = None, None
        warnings.append(f"original skill unavailable ({exc.message}); candidate "
                        f"{candidate_id!r} is a directory holding only {SKILL_FILE}")
    if original_target is not None and original is not None:
        skill_dir = _copy_original(original_target, root, work_dir)
        if original.content == text:
            warnings.append(f"candidate {candidate_id!r} is identical to the original skill; "
                            f"the comparison is void")
    else:
        name = ranking.target.get("name")
        skill_dir = root / _dir_name(name if isinstance(name, str) else "skill")
        skill_dir.mkdir()
    _write_in_copy(skill_dir / SKILL_FILE, text)
    skill = load_skill(skill_dir)
    origin = f"{ranking.path} candidate {candidate_id!r} ({key})"
    return dataclasses.replace(skill, origin=origin), warnings


def _planned(ranking: Ranking, candidate_id: str, where: str, entry: Mapping[str, Any],
             plan: Any, work_dir: Path) -> tuple[Skill, list[str]]:
    problems = plan_problems(plan)
    if problems:
        raise SkillError("\n".join(f"{where}.{field}: {message}" for field, message in problems),
                         path=str(ranking.path))
    rel = entry.get("target_path") or plan.get("target_path") or SKILL_FILE
    _check_relative(rel, where, str(ranking.path))
    original_target = _original_target(ranking)
    original = resolve_original(ranking)
    skill_dir = _copy_original(original_target, _fresh_dir(work_dir, candidate_id), work_dir)
    target = skill_dir / rel
    if not inside(skill_dir, target):
        raise SkillError(f"{where}.target_path: {rel!r} leads outside the skill directory "
                         f"(through a symlink)", path=str(ranking.path))
    real = Path(os.path.realpath(target))
    if not real.is_file():
        what = (f"the skill directory {original.directory}" if original.directory is not None
                else f"the skill: target.path names the file {original.origin}, so the skill "
                     f"is that file alone (name its directory to edit other files)")
        raise SkillError(f"{where}.target_path: {rel!r} is not a file in {what}",
                         path=str(ranking.path))
    try:
        outcome = apply_plan(_read_skill_text(real), plan)
    except SkillError as exc:
        raise SkillError(f"{where}: {rel}: {exc.message}", path=str(ranking.path)) from None
    warnings: list[str] = []
    if outcome.changed:
        _write_in_copy(real, outcome.text)
        if Path(rel) != Path(SKILL_FILE):
            warnings.append(f"execution plan of candidate {candidate_id!r} edits {rel}, not "
                            f"{SKILL_FILE}; only the installed skill mode sees the change")
    else:
        warnings.append(f"execution plan of candidate {candidate_id!r} changed nothing: "
                        f"{outcome.note}; the comparison is void")
    skill = load_skill(skill_dir)
    origin = (f"{ranking.path} candidate {candidate_id!r} (execution_plan "
              f"{plan['action']} on {original.origin})")
    return dataclasses.replace(skill, origin=origin), warnings


def _find_candidate(ranking: Ranking, candidate_id: str) -> tuple[int, dict[str, Any]]:
    for index, entry in enumerate(ranking.candidates):
        if entry.get("id") == candidate_id:
            return index, entry
    available = ", ".join(ranking.candidate_ids) or "(none)"
    raise SkillError(f"candidate {candidate_id!r} not found in {ranking.path}; available ids: "
                     f"{available}", path=str(ranking.path))


def _original_target(ranking: Ranking) -> Path:
    """What target.path names: a skill directory holding SKILL.md, or a markdown file."""
    raw = ranking.target.get("path")
    if not isinstance(raw, str) or not raw.strip():
        raise SkillError(f"{ranking.path}: target.path: is required to resolve the original "
                         f"skill", path=str(ranking.path))
    path = Path(raw)
    if not path.is_absolute():
        path = ranking.path.parent / path
    if not path.exists():
        raise SkillError(f"original skill not found: {path} (target.path in {ranking.path})",
                         path=str(path))
    if path.is_dir():
        if not (path / SKILL_FILE).is_file():
            raise SkillError(f"no {SKILL_FILE} in skill directory: {path} (target.path in "
                             f"{ranking.path})", path=str(path))
    return path


def _read_skill_text(file: Path) -> str:
    try:
        size = file.stat().st_size
        if size > MAX_SKILL_BYTES:
            raise SkillError(f"skill file too large: {file} ({size} bytes; the limit is 1 MiB)",
                             path=str(file))
        with file.open("rb") as handle:
            data = handle.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        raise SkillError(f"cannot read skill {file}: {exc.strerror}", path=str(file)) from None
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"skill file too large: {file} (the limit is 1 MiB)", path=str(file))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(f"skill is not UTF-8 text: {file} (byte {exc.start})",
                         path=str(file)) from None


def _fresh_dir(work_dir: Path, candidate_id: str) -> Path:
    """A new folder under work_dir for one candidate; the id is sanitised, never a path."""
    work_dir.mkdir(parents=True, exist_ok=True)
    prefix = f"candidate-{safe_component(candidate_id, max_len=40)}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=work_dir))


def _dir_name(name: str) -> str:
    return name if name not in ("", ".", "..") and "/" not in name else "skill"


def _copy_original(original: Path, root: Path, work_dir: Path) -> Path:
    """Copy the original skill to root/<its folder's name>. A directory is copied whole:
    symlinks as links (never followed); .git, special files and work_dir itself (when it lies
    inside the skill directory) are left out. A file (SKILL.md or another name) becomes a
    directory holding only SKILL.md, with the file's text: nothing next to it is copied."""
    if not original.is_dir():
        dest = root / _dir_name(original.parent.resolve().name)
        dest.mkdir()
        _write_in_copy(dest / SKILL_FILE, _read_skill_text(original))
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
            if name == ".git" or special or os.path.realpath(full) in skip:
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
    elif (PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute()
          or PureWindowsPath(rel).drive or rel.startswith(("/", "\\"))):
        problem = f"{rel!r} must be relative to the skill directory"
    elif ".." in PureWindowsPath(rel).parts:
        problem = f"{rel!r} must not contain '..'"
    elif PurePosixPath(rel) == PurePosixPath("."):
        problem = f"{rel!r} must name a file"
    if problem:
        raise SkillError(f"{where}.target_path: {problem}", path=ranking_path)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


@cache
def _ranking_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(RANKING_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


_TYPE_NAMES = {"string": "a string", "number": "a number", "integer": "an integer",
               "object": "an object", "array": "a list", "boolean": "true or false",
               "null": "null"}


def _schema_problems(file: str, data: Any) -> list[Problem]:
    found: dict[str, Problem] = {}
    for error in _ranking_validator().iter_errors(data):
        for field, message in _explain(error):
            problem = Problem(path=file, message=message, field=field)
            found.setdefault(str(problem), problem)
    return sorted(found.values(), key=lambda p: (p.field, p.message))


def _explain(error: jsonschema.ValidationError) -> list[tuple[str, str]]:
    field = _field_name(error.absolute_path)
    kind = error.validator
    if kind == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return [(_field_name([*error.absolute_path, k]), "is required") for k in missing]
    if kind == "type":
        expected = error.validator_value
        names = [expected] if isinstance(expected, str) else list(expected)
        return [(field, "must be " + " or ".join(_TYPE_NAMES.get(n, n) for n in names))]
    if kind in ("minLength", "pattern"):
        return [(field, "must be a non-empty string")]
    return [(field, error.message)]


def _field_name(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _duplicate_ids(file: str, candidates: list[dict[str, Any]]) -> list[Problem]:
    first: dict[str, int] = {}
    problems = []
    for index, entry in enumerate(candidates):
        cid = entry["id"]
        if cid in first:
            problems.append(Problem(path=file, field=f"scored_candidates[{index}].id",
                                    message=f"duplicate id {cid!r} (also "
                                            f"scored_candidates[{first[cid]}])"))
        first.setdefault(cid, index)
    return problems
