"""What one attempt sends a model besides its task and the skill, as its executor declares it
(`ExecutorBase.request_frame(task)`), for the run's estimate (engine/prior.py): the tokens
every request carries (an agent's own system prompt and tool definitions), how many requests
an attempt makes, and which part of them the API's prompt cache serves.

    RequestFrame()                                        # one plain request (an API executor)
    RequestFrame(4_200, turns=4, tool_turns=True, cache="conversation")   # an agent CLI

Nothing here is measured per run: the figures are the executor's own, and references/cost.md
says where each came from and how far the estimate built on them was off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# "prefix": the system prompt (the skill, in system mode) is marked for the prompt cache, so
# an arm's first attempt writes it and the others read it; "conversation": every request's
# whole history is marked (Claude Code moves its breakpoint to the newest message), so each
# turn reads what the turn before wrote; "none": nothing is marked.
Cache = Literal["none", "prefix", "conversation"]
# The API caches nothing shorter than this (Anthropic's minimum for most models): a skill
# below it is read at the full input price every time.
MIN_CACHED_TOKENS = 1024
# Characters a token, the estimate's rule of thumb for English text and code.
CHARS_PER_TOKEN = 4
# An agent attempt whose task gives no reference to count its tool calls by: this many
# requests (the agent reads, acts, checks, answers), each resending what came before.
AGENT_TURNS = 4
# An agent CLI that says nothing of its own prompt: what one request carries besides the task.
AGENT_OVERHEAD = 6_000


@dataclass(frozen=True)
class RequestFrame:
    """`overhead`: the tokens every request of an attempt carries besides the task's prompt
    and the skill; `turns`: the requests an attempt makes when its task gives no reference;
    `tool_turns`: whether each tool call (and file written) of a task's reference is one more
    request; `cache`: what the prompt cache serves (see Cache)."""

    overhead: int = 0
    turns: int = 1
    tool_turns: bool = False
    cache: Cache = "none"


__all__ = [
    "AGENT_OVERHEAD",
    "AGENT_TURNS",
    "CHARS_PER_TOKEN",
    "MIN_CACHED_TOKENS",
    "Cache",
    "RequestFrame",
]
