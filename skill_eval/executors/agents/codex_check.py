"""Codex's own tampering rule (its reader's `tampering`, executors/tool_check.py): Codex prints
ids of its own, not the model's, so its transcript is matched by content. Each command it ran
must be in a shell call the model sent (each call once), each file it changed named in an
`apply_patch` the model sent, a plan in an `update_plan` call; an MCP or web search call is
invented (neither is on in the jail), and a Skill is its command's (checked as that command).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ...core.transcript import PendingCall
from ...jail.api_log import SentCall

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
SHELL_TOOLS = frozenset({"shell", "exec_command", "local_shell_call", "container.exec"})
PATCHES = ("Write", "Edit", "Delete", "apply_patch")


def codex_tampering(
    calls: Iterable[tuple[str, PendingCall]], sent: Sequence[SentCall]
) -> str | None:
    """Why Codex's transcript `calls` (id, call) are not what the model `sent`, or None."""
    shells = [c for c in sent if c.name in SHELL_TOOLS]
    patched = [p.strip() for c in sent for s in _strings(c.input) for p in _patch_files(s)]
    used: set[int] = set()
    for call_id, call in calls:
        said = f"tool call {call.name} ({call_id[:80]}) in the transcript"
        if call.name == "Bash":
            command = str(call.input.get("command") or "")
            match = next(
                (
                    i
                    for i, c in enumerate(shells)
                    if i not in used and any(command in s for s in _strings(c.input))
                ),
                None,
            )
            if match is None:
                return f"{said} was never sent by the model (no shell call ran {command[:80]!r})"
            used.add(match)
        elif call.name in PATCHES:
            path = str(call.input.get("file_path") or "")
            if not any(path == p or path.endswith("/" + p.lstrip("./")) for p in patched):
                return f"{said} was never sent by the model (no patch of {path[:120]!r})"
        elif call.name == "TodoWrite":
            if not any(c.name == "update_plan" for c in sent):
                return f"{said} was never sent by the model (no update_plan call)"
        elif call.name != "Skill":  # its Bash is checked; MCP and web search are off in the jail
            return f"{said} was never sent by the model (Codex has no such tool here)"
    return None


def _patch_files(text: str) -> Iterator[str]:
    for match in _PATCH_FILE.finditer(text):
        yield match.group(1) or match.group(2)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a call's input (nested lists and mappings included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
