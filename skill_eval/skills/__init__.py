"""Skills under test. A skill is a folder holding SKILL.md (or a SKILL.md file alone).

load.py        loading, checked against the Agent Skills format before anything runs
lint.py        the format's checks (`skill-eval lint`)
links.py       the files SKILL.md names, checked against its folder (for lint.py)
tree.py        the tree hash over every file, the skill's identity in the artifact
install.py     the copy in an attempt's .claude/skills/, never written through
candidates.py  candidates of a ranking artifact (skills/ranking.py reads the artifact itself)
target.py      the ranking's target.path: located, and checked to be a skill
"""

from __future__ import annotations

from .candidates import (
    INLINE_KEYS,
    ResolvedCandidate,
    resolve_candidate,
    resolve_original,
    score_of,
    unapplied_plan,
)
from .lint import Finding
from .load import MAX_SKILL_BYTES, lint_skill, load_skill, skill_findings
from .ranking import Ranking, load_ranking
from .tree import SKILL_FILE, tree_sha256

__all__ = [
    "INLINE_KEYS",
    "MAX_SKILL_BYTES",
    "SKILL_FILE",
    "Finding",
    "Ranking",
    "ResolvedCandidate",
    "lint_skill",
    "load_ranking",
    "load_skill",
    "resolve_candidate",
    "resolve_original",
    "score_of",
    "skill_findings",
    "tree_sha256",
    "unapplied_plan",
]
