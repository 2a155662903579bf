"""The arms of a run: which skill each runs with, resolved from the flags (standalone) or from
a ranking artifact (pipeline), and kept in run.json so a run can be re-judged later. Two
(candidate and baseline), or with --arm several that run one skill on several agents and
deliveries (`Arms.listed`)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, get_args

from ..core.execution import DELIVERIES, delivery_mode
from ..core.model import Arm, Skill
from ..executors.catalog import is_offline, serves_skill_files
from ..plan.arms import stored_arms
from ..skills import (
    load_skill,
    resolve_candidate,
    resolve_original,
    score_of,
    skill_findings,
    unapplied_plan,
)
from ..skills.files import skill_folder
from ..skills.install import plan_install
from ..skills.load import other_files
from ..skills.ranking import load_ranking
from ..skills.tree import SKILL_FILE, walk
from ..stats.verdict import BaselineKind, skip_verdict

if TYPE_CHECKING:
    from ..plan.run_plan import Inputs


@dataclass(frozen=True)
class Arms:
    candidate: Arm
    baseline: Arm | None
    baseline_kind: BaselineKind
    candidate_id: str
    candidate_score: float | None
    run_id: str
    ranking: Any = None
    warnings: tuple[str, ...] = ()
    unbuilt: str | None = None  # why the candidate could not be built: verdict skipped
    # --arm: every arm in the order given; `candidate` is the first that is not the reference
    # (the arm the original's fields and the verdict describe), `baseline` the reference.
    listed: tuple[Arm, ...] = ()

    @property
    def every(self) -> tuple[Arm, ...]:
        """Every arm that runs, in order: the --arm arms as given, else candidate, baseline."""
        if self.listed:
            return self.listed
        return tuple(a for a in (self.candidate, self.baseline) if a is not None)


def _arm_dict(arm: Arm) -> dict[str, Any]:
    """An arm as run.json keeps it; an --arm arm with its name, delivery and executor (and
    its model, when it names one)."""
    out: dict[str, Any] = {"label": arm.label, "skill": _skill_dict(arm.skill)}
    if arm.delivery is not None:
        out.update(name=arm.name, delivery=arm.delivery, executor=arm.executor)
    if arm.model is not None:
        out["model"] = arm.model
    return out


def _arm_from(data: dict[str, Any], default_name: str) -> Arm:
    delivery = data.get("delivery")
    if delivery is not None and delivery not in DELIVERIES:
        raise ValueError(f"delivery: {delivery!r}")
    return Arm(
        str(data.get("name") or default_name),
        _skill_from(data["skill"]),
        data["label"],
        delivery,
        data.get("executor"),
        data.get("model"),
    )


def _skill_dict(skill: Skill | None) -> dict[str, Any] | None:
    if skill is None:
        return None
    return {
        "name": skill.name,
        "content": skill.content,
        "origin": skill.origin,
        "directory": str(skill.directory) if skill.directory else None,
        "tree_sha256": skill.tree_sha256,
    }


def _skill_from(data: dict[str, Any] | None) -> Skill | None:
    if data is None:
        return None
    return Skill(
        data["name"],
        data["content"],
        Path(data["directory"]) if data.get("directory") else None,
        data.get("origin", ""),
        data.get("tree_sha256"),
    )


def arms_to_dict(arms: Arms) -> dict[str, Any]:
    """What run.json keeps of the arms, so a run can be re-judged without re-resolving."""
    ranking = arms.ranking
    return {
        "candidate": _arm_dict(arms.candidate),
        "baseline": None if arms.baseline is None else _arm_dict(arms.baseline),
        **({"listed": [_arm_dict(a) for a in arms.listed]} if arms.listed else {}),
        "baseline_kind": arms.baseline_kind,
        "candidate_id": arms.candidate_id,
        "candidate_score": arms.candidate_score,
        "run_id": arms.run_id,
        "ranking": None
        if ranking is None
        else {"path": str(ranking.path), "lane": ranking.lane, "target": ranking.target},
        "warnings": list(arms.warnings),
    }


def arms_from_dict(data: dict[str, Any]) -> Arms:
    """The arms `arms_to_dict` wrote; a ValueError (or KeyError, TypeError) when the data is
    not in that shape."""
    base = data.get("baseline")
    ranking = data.get("ranking")
    kind = data["baseline_kind"]
    if kind not in get_args(BaselineKind):
        raise ValueError(f"baseline_kind: {kind!r}")
    return Arms(
        _arm_from(data["candidate"], "candidate"),
        None if base is None else _arm_from(base, "baseline"),
        kind,
        data["candidate_id"],
        data.get("candidate_score"),
        data["run_id"],
        None
        if ranking is None
        else SimpleNamespace(
            path=Path(ranking["path"]), lane=ranking.get("lane"), target=ranking.get("target")
        ),
        tuple(data.get("warnings") or ()),
        listed=tuple(_arm_from(a, "") for a in data.get("listed") or ()),
    )


def resolve_arms(
    inputs: Inputs,
    work_dir: Path,
    run_id: str,
    *,
    delivery_mode: str,
    executor: str,
    eval_threshold: float | None = None,
) -> Arms:
    """The arms of a run's inputs; their skills are loaded and checked (errors raise
    SkillError), and the warnings about them (format, delivery, identical arms) are on
    `Arms.warnings`. `delivery_mode` is the skill mode the attempts really get (see
    the judges' roles, judges/roles.py), `executor` the executor's name. A pipeline candidate
    scored under `eval_threshold` is not built (its content is never read): `Arms.unbuilt`."""
    arms = _resolve(inputs, work_dir, run_id, eval_threshold)
    notes = skill_warnings(arms, delivery_mode, executor)
    return replace(arms, warnings=(*arms.warnings, *notes)) if notes else arms


def _resolve(
    inputs: Inputs, work_dir: Path, run_id: str, eval_threshold: float | None = None
) -> Arms:
    if inputs.standalone:
        if inputs.skill_path is None:  # plan/checks.py refuses this before
            raise ValueError("standalone inputs without a skill_path")
        if inputs.arms:
            return listed_arms(inputs, load_skill(inputs.skill_path), run_id)
        candidate = Arm("candidate", load_skill(inputs.skill_path), "candidate skill")
        if inputs.no_baseline:
            return Arms(candidate, None, "absent", "standalone", None, run_id)
        if inputs.baseline_skill:
            base = Arm("baseline", load_skill(inputs.baseline_skill), "baseline skill")
            return Arms(candidate, base, "skill", "standalone", None, run_id)
        return Arms(
            candidate, Arm("baseline", None, "no skill"), "none", "standalone", None, run_id
        )
    if inputs.ranking is None or inputs.candidate_id is None:  # plan/checks.py refuses this
        raise ValueError("pipeline inputs without a ranking and a candidate id")
    candidate_id = inputs.candidate_id
    ranking = load_ranking(inputs.ranking)
    root = Path(inputs.skills_root) if inputs.skills_root else None
    original = resolve_original(ranking, root)
    base = Arm("baseline", original, "original skill")
    # The original tool skips a low-scored candidate before anything else: content that is
    # not a skill must not turn its `skipped` into an error.
    score = score_of(ranking, candidate_id)
    low = skip_verdict(score, eval_threshold)
    unbuilt = (low.reason or "", score) if low else unapplied_plan(ranking, candidate_id)
    if unbuilt is not None:
        return Arms(
            Arm("candidate", None, f"candidate {candidate_id} (not built)"),
            base,
            "original",
            candidate_id,
            unbuilt[1],
            ranking.run_id,
            ranking,
            unbuilt=unbuilt[0],
        )
    resolved = resolve_candidate(ranking, candidate_id, work_dir, root)
    return Arms(
        Arm("candidate", resolved.skill, f"candidate {candidate_id}"),
        base,
        "original",
        candidate_id,
        resolved.score,
        ranking.run_id,
        ranking,
        tuple(resolved.warnings),
    )


def listed_arms(inputs: Inputs, skill: Skill, run_id: str) -> Arms:
    """The --arm arms (plan/arms.py), each running `skill` (none: without it) as it says."""
    listed = tuple(
        Arm(
            spec.name,
            None if spec.delivery == "none" else skill,
            f"{'no skill' if spec.delivery == 'none' else spec.delivery} on {spec.executor}"
            + (f" ({spec.model})" if spec.model else ""),
            spec.delivery,
            spec.executor,
            spec.model,
        )
        for spec in stored_arms(inputs.arms)
    )
    reference = next(a for a in listed if a.name == inputs.reference_arm)
    primary = next(a for a in listed if a is not reference)
    kind: BaselineKind = "none" if reference.skill is None else "skill"
    return Arms(primary, reference, kind, "standalone", None, run_id, listed=listed)


def skill_warnings(arms: Arms, skill_mode: str, executor: str) -> list[str]:
    """Once per run: each arm's format warnings and what its skill mode (or delivery) cannot
    deliver; a note shared by several arms (one skill, several deliveries) is said once."""
    out: list[str] = []
    seen: set[str] = set()
    for arm in arms.every:
        skill = arm.skill
        if skill is None:
            continue
        mode = delivery_mode(arm.delivery) if arm.delivery else None
        runs_on = arm.executor or executor
        notes = delivery_notes(skill, mode or skill_mode, runs_on)
        for note in [str(f) for f in skill_findings(skill)] + notes:
            # the same file in both arms is reported once, so is a note several arms share
            key = note if arms.listed or note not in notes else f"{arm.name}: {note}"
            if key not in seen:
                seen.add(key)
                out.append(f"{arm.name} skill: {note}")
    # Arms that are the same skill are not a warning but an error: see void_reason.
    return out


def delivery_notes(skill: Skill, skill_mode: str, executor: str) -> list[str]:
    """What of the skill a mode does not deliver on executor `executor`, in words for the run
    log and artifact: an offline executor (the mock) installs and writes nothing; in system
    and prepend mode only one that serves a skill's files (read_skill_file) gives the rest."""
    notes: list[str] = []
    others = other_files(skill)
    if others:
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        notes.append(
            f"given as the file {skill.origin}: the {len(others)} other file(s) in its "
            f"folder ({shown}) are not part of the skill; give the folder to include "
            f"them"
        )
    if skill_mode in ("installed", "context"):
        plan = plan_install(skill)
        notes.extend(plan.warnings)
        if is_offline(executor) and skill_mode == "installed":
            notes.append(
                f"--mock installs nothing; installed mode would install "
                f"{len(plan.entries)} file(s): {', '.join(plan.files[:10])}"
                f"{', ...' if len(plan.entries) > 10 else ''}"
            )
        elif is_offline(executor):
            notes.append(
                "--mock writes nothing; context mode would write SKILL.md into the agent's "
                f"context file and copy the skill's {len(plan.entries) - 1} other file(s) "
                "beside it"
            )
    elif skill.directory is not None and serves_skill_files(executor):
        # What the read_skill_file tool refuses or cuts (binary files, links out, big files).
        folder = skill_folder(skill)
        notes.extend(folder.warnings() if folder is not None else [])
    elif skill.directory is not None:
        extra = [e.rel for e in walk(Path(skill.directory)) if e.rel != SKILL_FILE]
        if extra:
            notes.append(
                f"{skill_mode} mode sends SKILL.md alone: the skill's {len(extra)} "
                f"other file(s) ({', '.join(extra[:5])}"
                f"{', ...' if len(extra) > 5 else ''}) never reach the model; "
                f"--skill-mode installed delivers them"
            )
    return notes


def void_reason(arms: Arms) -> str | None:
    """Why nothing would be compared: a plan that changed nothing, or a candidate that is
    byte-identical to the baseline skill (every file of the folder). None when the arms
    differ."""
    if arms.listed:  # one skill by design: the arms differ by executor or delivery
        return None
    if arms.baseline is None or arms.baseline.skill is None or arms.candidate.skill is None:
        return None
    base, cand = arms.baseline.skill, arms.candidate.skill
    for warning in arms.warnings:
        if warning.endswith("the comparison is void"):
            return warning
    if cand.content == base.content and cand.tree_sha256 == base.tree_sha256:
        who = (
            f"candidate {arms.candidate_id!r}"
            if arms.candidate_id != "standalone"
            else f"candidate skill {cand.origin or cand.name}"
        )
        return (
            f"{who} is byte-identical to the {arms.baseline.label} (every file of the "
            f"skill folder); the comparison is void"
        )
    return None


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"standalone-{stamp}-{secrets.token_hex(3)}"
