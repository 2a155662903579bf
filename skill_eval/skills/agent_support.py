"""Where the agents one skill folder ships to part ways over its SKILL.md: what one agent drops,
cuts or ignores while another uses it, for `skill-eval lint` (lint.py) to say before a skill
is measured on one agent and shipped to users of another.

Observed on the pinned OpenCode 1.18.33 and Codex CLI 0.171.0, offline against the fake
OpenAI servers (references/agents.md, "What each agent does with a SKILL.md"); Claude Code's
side from its frontmatter reference. Each finding names the agent and what its model sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Codex enforces the format's own limits (lint.py's MAX_DESCRIPTION, MAX_NAME): a longer
# description is listed cut to CODEX_DESCRIPTION_KEPT characters and "...", and a skill with a
# longer name is not loaded ("invalid name: exceeds maximum length of 64 characters").
CODEX_DESCRIPTION_KEPT = 1021

LONG_DESCRIPTION = (
    f"Codex CLI lists it cut to its first {CODEX_DESCRIPTION_KEPT:,} characters and '...' "
    "(OpenCode and Claude Code send it whole): the rest never reaches Codex's model"
)
LONG_NAME = "Codex CLI does not load such a skill at all (OpenCode does)"
CLAUDE_ONLY_TRIGGER = (
    "only Claude Code reads `{key}`: OpenCode and Codex CLI never show it to their model, so "
    "there the skill is chosen on its `description` alone; put what decides when to use it "
    "in `description`"
)
MODEL_NEVER_LOADS = (
    "`disable-model-invocation: true`: Claude Code's model never loads this skill by itself "
    "(only a user's /command does); OpenCode and Codex CLI ignore the key and list the "
    "skill like any other, so their models may load it"
)
# Frontmatter keys whose text decides when Claude Code picks the skill, unseen elsewhere.
CLAUDE_ONLY_TRIGGER_KEYS = ("when_to_use",)


def agent_notes(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(frontmatter key, warning) for each field of `data` one agent uses and another drops,
    beyond what the format's own limits say (lint.py reports those, with LONG_DESCRIPTION
    and LONG_NAME appended)."""
    notes: list[tuple[str, str]] = []
    for key in CLAUDE_ONLY_TRIGGER_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            notes.append((key, CLAUDE_ONLY_TRIGGER.format(key=key)))
    return notes


__all__ = [
    "CLAUDE_ONLY_TRIGGER_KEYS",
    "CODEX_DESCRIPTION_KEPT",
    "LONG_DESCRIPTION",
    "LONG_NAME",
    "MODEL_NEVER_LOADS",
    "agent_notes",
]
