"""The measured gate's plan (`skill-eval run SKILL_DIR... --changed-since REF`): the skills a
change touched, each judged by the evals interop/judged_change.py chose (`--evals-from base`:
the base branch's where it has any), planned as skill_runs.py plans any skills; and what the
summary must say besides the verdicts: skills whose evals the change removed, skills with no
evals (not judged: not a pass unless --allow-unjudged), skills whose evals cannot be read,
and the skills whose evals the change touched.

    plan = plan_change(["."], state_root, changed_since="origin/main", evals_from="base",
                       baseline_named=False)
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..inputs.evalsets.folder import find_skill_evals
from .judged_change import EvalsFrom, judge_change
from .skill_finder import find_skills
from .skill_runs import SkillsPlan, plan_skill_runs

CHANGE_FOLDER = "changed"  # under the state root: skill folders judged by the base's evals


@dataclass(frozen=True)
class ChangePlan:
    plan: SkillsPlan
    found: int  # skill folders under the paths given
    judged: int  # of them, the ones the change touched (all without a ref)
    removed: tuple[str, ...] = ()  # labels: the change removed or emptied their evals
    unjudged: tuple[str, ...] = ()  # labels: no evals on either side
    evals_changed: tuple[str, ...] = ()  # labels: the change touched their evals
    judging_change: bool = False  # a ref was given: unjudged skills fail unless allowed


def plan_change(
    paths: Sequence[str],
    state_root: Path,
    *,
    changed_since: str | None,
    evals_from: EvalsFrom = "head",
    baseline_named: bool,
) -> ChangePlan:
    """See the module docstring. Without `changed_since` every skill under `paths` runs with
    its own evals (as `run SKILL_DIR...` always did)."""
    folders = find_skills(paths)
    work = state_root.resolve() / CHANGE_FOLDER
    shutil.rmtree(work, ignore_errors=True)  # ours: what an earlier gate copied
    judged = judge_change(folders, changed_since, work, evals_from=evals_from)
    runnable = [j for j in judged if j.state == "judged"]
    plan = plan_skill_runs(
        [j.judged_dir for j in runnable],
        baseline_named=baseline_named,
        labels={j.judged_dir: j.label for j in runnable},
    )
    unjudged = [j for j in judged if j.state == "unjudged"]  # what its evals/ holds, unread
    unread = [
        f"{j.label}: {u}" for j in unjudged for u in find_skill_evals(j.judged_dir).unread_lines()
    ]
    return ChangePlan(
        replace(plan, notes=(*plan.notes, *unread)),
        len(folders),
        len(judged),
        tuple(j.label for j in judged if j.state == "removed"),
        tuple(j.label for j in judged if j.state == "unjudged"),
        tuple(j.label for j in judged if j.evals_changed),
        changed_since is not None,
    )


__all__ = ["CHANGE_FOLDER", "ChangePlan", "plan_change"]
