"""The two arms of a run: which skill each runs with, resolved from the flags (standalone) or
from a ranking artifact (pipeline), and kept in run.json so a run can be re-judged later."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from .model import Arm, Skill
from .options import RunOptions
from .skills import SKILL_FILE, load_ranking, load_skill, resolve_candidate, resolve_original


@dataclass(frozen=True)
class Arms:
    candidate: Arm
    baseline: Arm | None
    baseline_kind: str  # original | skill | none | absent
    candidate_id: str
    candidate_score: float | None
    run_id: str
    ranking: Any = None
    warnings: tuple[str, ...] = ()


def _skill_dict(skill: Skill | None) -> dict[str, Any] | None:
    if skill is None:
        return None
    return {"name": skill.name, "content": skill.content, "origin": skill.origin,
            "directory": str(skill.directory) if skill.directory else None}


def _skill_from(data: dict[str, Any] | None) -> Skill | None:
    if data is None:
        return None
    return Skill(data["name"], data["content"],
                 Path(data["directory"]) if data.get("directory") else None,
                 data.get("origin", ""))


def arms_to_dict(arms: Arms) -> dict[str, Any]:
    """What run.json keeps of the arms, so a run can be re-judged without re-resolving."""
    ranking = arms.ranking
    return {
        "candidate": {"label": arms.candidate.label, "skill": _skill_dict(arms.candidate.skill)},
        "baseline": None if arms.baseline is None else {
            "label": arms.baseline.label, "skill": _skill_dict(arms.baseline.skill)},
        "baseline_kind": arms.baseline_kind, "candidate_id": arms.candidate_id,
        "candidate_score": arms.candidate_score, "run_id": arms.run_id,
        "ranking": None if ranking is None else {
            "path": str(ranking.path), "lane": ranking.lane, "target": ranking.target},
        "warnings": list(arms.warnings),
    }


def arms_from_dict(data: dict[str, Any]) -> Arms:
    base = data.get("baseline")
    ranking = data.get("ranking")
    return Arms(
        Arm("candidate", _skill_from(data["candidate"]["skill"]), data["candidate"]["label"]),
        None if base is None else Arm("baseline", _skill_from(base["skill"]), base["label"]),
        data["baseline_kind"], data["candidate_id"], data.get("candidate_score"),
        data["run_id"],
        None if ranking is None else SimpleNamespace(path=Path(ranking["path"]),
                                                     lane=ranking.get("lane"),
                                                     target=ranking.get("target")),
        tuple(data.get("warnings") or ()))


def resolve_arms(opts: RunOptions, work_dir: Path, run_id: str) -> Arms:
    if opts.standalone:
        assert opts.skill_path is not None  # check_options guarantees it
        candidate = Arm("candidate", load_skill(opts.skill_path), "candidate skill")
        if opts.no_baseline:
            return Arms(candidate, None, "absent", "standalone", None, run_id)
        if opts.baseline_skill:
            base = Arm("baseline", load_skill(opts.baseline_skill), "baseline skill")
            return Arms(candidate, base, "skill", "standalone", None, run_id)
        return Arms(candidate, Arm("baseline", None, "no skill"), "none", "standalone",
                    None, run_id)
    assert opts.input is not None and opts.candidate_id is not None
    ranking = load_ranking(opts.input)
    original = resolve_original(ranking)
    resolved = resolve_candidate(ranking, opts.candidate_id, work_dir)
    return Arms(Arm("candidate", resolved.skill, f"candidate {opts.candidate_id}"),
                Arm("baseline", original, "original skill"), "original", opts.candidate_id,
                resolved.score, ranking.run_id, ranking, tuple(resolved.warnings))


# Build and editor litter that says nothing about the skill.
_IGNORED_PARTS = {"__pycache__", ".git", ".DS_Store"}


def skill_tree_sha256(skill: Skill) -> str:
    """A hash over every file of the skill folder, path and content (SKILL.md as loaded), so
    two skills that differ only in a script or a reference are not taken for the same."""
    digest = hashlib.sha256()
    files: dict[str, bytes] = {SKILL_FILE: skill.content.encode("utf-8")}
    if skill.directory is not None and skill.directory.is_dir():
        for path in sorted(skill.directory.rglob("*")):
            rel = path.relative_to(skill.directory)
            if path.is_file() and not _IGNORED_PARTS & set(rel.parts) \
                    and rel.as_posix() != SKILL_FILE:
                files[rel.as_posix()] = path.read_bytes()
    for name, data in sorted(files.items()):
        digest.update(f"{len(name)}:{name}:{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def void_reason(arms: Arms) -> str | None:
    """Why nothing would be compared: a plan that changed nothing, or a candidate that is
    byte-identical to the baseline skill (every file of the folder). None when the arms
    differ."""
    if arms.baseline is None or arms.baseline.skill is None or arms.candidate.skill is None:
        return None
    base, cand = arms.baseline.skill, arms.candidate.skill
    for warning in arms.warnings:
        if warning.endswith("the comparison is void"):
            return warning
    if skill_tree_sha256(cand) == skill_tree_sha256(base):
        who = f"candidate {arms.candidate_id!r}" if arms.candidate_id != "standalone" \
            else f"candidate skill {cand.origin or cand.name}"
        return (f"{who} is byte-identical to the {arms.baseline.label} (every file of the "
                f"skill folder); the comparison is void")
    return None


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"standalone-{stamp}-{secrets.token_hex(3)}"
