"""What Claude Code sends with every request besides the task and the skill, for the run's
estimate (executors/request_frame.py): its system prompt, which depends on the model, the
definitions of the tools it is offered, and the environment message. Measured on the pinned
CLI (2.1.330) against tests/fakes, in characters as the request carries them; a model it
does not name gets the longest prompt (the 4.x models'), so an estimate errs high.

    frame_tokens("claude-sonnet-5-5", ("Skill", "Read", "Glob", "Grep"))   # about 3,700
"""

from __future__ import annotations

from collections.abc import Sequence

from ..request_frame import CHARS_PER_TOKEN

# The system prompt's characters by model id (its longest matching prefix), and whether the
# model gets the CLI's compact tool definitions (the newer models do).
SYSTEM_PROMPTS: dict[str, tuple[int, bool]] = {
    "claude-sonnet-5-5": (5_080, True),
    "claude-opus-5-5": (5_350, True),
    "claude-opus-4-8": (5_075, True),
    "claude-haiku-5-5": (7_940, True),
    "claude-fable-5": (9_900, True),
    "claude-mythos-5": (9_210, True),
}
LONGEST_PROMPT = (15_440, False)  # the 4.x models', and claude-sonnet-5
# One tool definition's characters: compact, full. A tool not measured: OTHER_TOOL.
TOOLS: dict[str, tuple[int, int]] = {
    "Read": (1_975, 2_968),
    "Write": (663, 1_051),
    "Edit": (1_006, 1_739),
    "Bash": (3_965, 12_809),
    "Glob": (754, 1_004),
    "Grep": (3_331, 3_735),
    "WebFetch": (1_120, 2_269),
    "Skill": (1_856, 1_854),
}
OTHER_TOOL = (1_500, 2_500)
DEFERRED_TOOLS = 214  # the placeholder the compact definitions add beside any tool
ENVIRONMENT = (1_150, 1_500)  # the environment message: without tools, with them


def frame_tokens(model: str, tools: Sequence[str]) -> int:
    """The tokens every request of an attempt on `model` offering `tools` carries."""
    matched = [p for p in SYSTEM_PROMPTS if model.startswith(p)]
    system, compact = SYSTEM_PROMPTS[max(matched, key=len)] if matched else LONGEST_PROMPT
    sizes = [TOOLS.get(tool, OTHER_TOOL)[0 if compact else 1] for tool in tools]
    chars = system + sum(sizes) + ENVIRONMENT[bool(tools)]
    chars += DEFERRED_TOOLS if tools and compact else 0
    return round(chars / CHARS_PER_TOKEN)


__all__ = ["frame_tokens"]
