"""How every report names an arm: its label and its skill. Two arms that run skills of the same
name (two descriptions of one skill, as a trigger suite compares; a candidate revised from
its original) are told apart by the path each skill was loaded from.

The text is raw (it may come from a skill's frontmatter): each report cleans it as it cleans
any other text it shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ARMS = ("candidate", "baseline")


def arm_skills(artifact: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Per arm in the manifest: (label, skill), e.g. ("baseline skill", "my-skill
    (base/SKILL.md)"); the skill is "" for the no-skill baseline. The path is added when both
    arms have a skill of the same name, and stands alone for a skill without a name."""
    listed = (artifact.get("manifest") or {}).get("arms")
    arms = listed if isinstance(listed, Mapping) else {}
    found = {arm: meta for arm in ARMS if isinstance(meta := arms.get(arm), Mapping)}
    names = [str(meta["skill_name"]) for meta in found.values() if meta.get("skill_name")]
    clash = len(names) != len(set(names))
    out: dict[str, tuple[str, str]] = {}
    for arm, meta in found.items():
        name = str(meta.get("skill_name") or "")
        where = str(meta.get("skill_origin") or meta.get("skill_directory") or "")
        skill = f"{name} ({where})" if name and where and clash else name or where
        out[arm] = (str(meta.get("label") or arm), skill)
    return out


def arm_names(artifact: Mapping[str, Any]) -> dict[str, str]:
    """Per arm in the manifest: its label and skill in one phrase, `baseline skill my-skill
    (base/SKILL.md)`, or the label alone (`no skill`)."""
    return {arm: f"{label} {skill}".strip() for arm, (label, skill) in arm_skills(artifact).items()}
