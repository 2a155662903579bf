"""Tool calls are what the API saw (issue 39): the jail's API proxy, outside the jail, records
the tool calls of every model reply it relays (jail/api_log.py); an attempt's transcript, read
from the CLI's output, must hold no call the model never sent. A call in the transcript with
no counterpart in the replies, under another name or with another input, or out of the order
the replies came in, is tampering (something in the jail wrote to the CLI's output): the
attempt is an error naming it, never judged. So is a tool result (Claude Code prints results
apart from calls) for an id the model never sent.

    problem = checked("claude", reader.calls.items(), log, results=reader.unmatched_results)
    problem = checked("codex", reader.calls.items(), log)       # "opencode" too
    if problem: return tampered(problem, log)

Claude Code and OpenCode print the model's own call ids (`toolu_...`, `call_...`): each call
is found by its id, its name must match (OpenCode's under Claude Code's names), and for Claude
Code its input too (both trimmed alike). Calls of one reply keep their order, and a call never
comes after one whose request went out only once its own reply had ended. Codex prints ids of
its own: each command it ran must be in a shell call the model sent (each call once), each
file it changed named in an apply_patch the model sent, a plan in an update_plan call; an MCP
or web search call is invented (neither is on in the jail; a Skill is its command's). A call
the model sent that the transcript lacks is no tampering (a stream cut and retried, a run
stopped early).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..core.execution import ExecutionResult
from ..core.transcript import INPUT_LIMIT, PendingCall, trim_value
from ..jail.api_log import ApiLog, SentCall

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
SHELL_TOOLS = frozenset({"shell", "exec_command", "local_shell_call", "container.exec"})


def checked(
    agent: str,
    calls: Iterable[tuple[str, PendingCall]],
    log: ApiLog | None,
    *,
    results: Iterable[str] = (),
) -> str | None:
    """The tampering `log` shows in an attempt's `calls` (id, call) and in the ids of its tool
    `results` that answer none of them, or None; None without a log (no jail: nothing outside
    the agent saw its replies)."""
    if log is None:
        return None
    if log.unread_replies:
        return (
            f"{log.unread_replies} of the model's replies could not be read by the API proxy, "
            "so the transcript's tool calls cannot be checked against them"
        )
    sent = log.sent()
    if problem := tampering(agent, list(calls), sent, log.ranks()):
        return problem
    ids = {c.id for c in sent}
    unanswered = next((r for r in results if r not in ids), None)
    if unanswered is not None:  # its call may be past the transcript's cap, never unsent
        return (
            f"tool result for {unanswered[:80]} in the CLI's output answers no call the model sent"
        )
    return None


def tampered(problem: str, log: ApiLog | None) -> ExecutionResult:
    """The attempt whose transcript the model's replies do not bear out: an error, never
    retried (the same candidate would do it again) nor judged; no transcript, since a judge
    must not read calls the model never made."""
    meta: dict[str, Any] = {"error_type": "tampering"}
    if log is not None:
        meta.update(api_requests=log.requests, api_tool_calls=len(log.sent()), **log.record())
    return ExecutionResult(error=f"tampering: {problem}", retryable=False, meta=meta)


def tampering(
    agent: str,
    calls: Sequence[tuple[str, PendingCall]],
    sent: Sequence[SentCall],
    ranks: Mapping[int, int],
) -> str | None:
    """Why the transcript's `calls` are not what the model `sent` (`ranks`: each reply's rank
    among the replies ended, ApiLog.ranks), or None."""
    if agent == "codex":
        return _codex(calls, sent)
    by_id = {c.id: (index, c) for index, c in enumerate(sent)}
    seen_opened, last_in_reply = 0, dict[int, int]()
    for call_id, call in calls:
        found = by_id.get(call_id)
        said = f"tool call {call.name} ({call_id[:80]}) in the transcript"
        if found is None:
            return f"{said} was never sent by the model"
        index, model = found
        if _name(agent, model.name) != call.name:
            return f"{said} was sent by the model as {model.name[:80]}"
        if agent == "claude" and trim_value(_mapping(model.input), INPUT_LIMIT) != call.input:
            return f"{said} has another input than the model sent"
        ended = ranks.get(model.reply)
        early = ended is not None and ended <= seen_opened  # ended before an earlier's request
        if early or index < last_in_reply.get(model.reply, -1):
            return f"{said} is out of the order the model sent its calls in"
        seen_opened = max(seen_opened, model.opened)
        last_in_reply[model.reply] = index
    return None


def _name(agent: str, tool: str) -> str:
    if agent == "opencode":
        from .agents.opencode_events import TOOL_NAMES

        return TOOL_NAMES.get(tool, tool)
    return tool


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _codex(calls: Sequence[tuple[str, PendingCall]], sent: Sequence[SentCall]) -> str | None:
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
        elif call.name in ("Write", "Edit", "Delete", "apply_patch"):
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
