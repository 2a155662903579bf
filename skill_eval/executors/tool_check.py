"""Tool calls are what the API saw (issue 39): the jail's API proxy, outside the jail, records
the tool calls of every model reply it relays (jail/api_log.py); an attempt's transcript, read
from the CLI's output, must hold no call the model never sent. A call in the transcript with
no counterpart in the replies, under another name or with another input, or out of the order
the replies came in, is tampering (something in the jail wrote to the CLI's output): the
attempt is an error naming it, never judged. So is a request the forward's allow-list refused
(the dialect's: nothing the CLI sends), and a tool result for an id the model never sent.

    problem = checked(reader, log)       # the reader's own rule: reader.tampering(sent, ranks)
    if problem: return tampered(problem, log)

Each agent's event reader owns its rule (`CallReader.tampering`); the common one is
`by_id`: each call found by the model's own id (`toolu_...`, `call_...`), its name the
model's under the reader's name map, its input the same when the reader says so; the calls of
one reply in their order, and never a call after one whose request went out only once its
own reply had ended. A call the model sent that the transcript lacks is no tampering (a stream
cut and retried, a run stopped early).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from ..core.execution import ExecutionResult
from ..core.failure import Failure
from ..core.transcript import INPUT_LIMIT, PendingCall, trim_value
from ..jail.api_log import ApiLog, SentCall


class CallReader(Protocol):
    """An event reader whose transcript can be checked against what the model sent."""

    def tampering(self, sent: Sequence[SentCall], ranks: Mapping[int, int]) -> str | None:
        """Why its transcript is not what the model `sent` (`ranks`: each reply's rank among
        the replies ended, ApiLog.ranks), or None."""
        ...


def checked(reader: CallReader, log: ApiLog | None) -> str | None:
    """The tampering `log` shows in the attempt `reader` read, or None; None without a log
    (no jail: nothing outside the agent saw its requests and replies)."""
    if log is None:
        return None
    if log.tampering:
        more = f" (and {log.tampered - 1} more)" if log.tampered > 1 else ""
        said = log.tampering[0]
        return f"the API forward refused a request the agent's CLI never sends: {said}{more}"
    if log.unread_replies:
        return (
            f"{log.unread_replies} of the model's replies could not be read by the API proxy, "
            "so the transcript's tool calls cannot be checked against them"
        )
    return reader.tampering(log.sent(), log.ranks())


def tampered(problem: str, log: ApiLog | None) -> ExecutionResult:
    """The attempt whose transcript the model's replies do not bear out: an error, never
    retried (the same candidate would do it again) nor judged; no transcript, since a judge
    must not read calls the model never made."""
    meta: dict[str, Any] = {"error_type": "tampering"}
    if log is not None:
        meta.update(api_requests=log.requests, api_tool_calls=len(log.sent()), **log.record())
    return ExecutionResult(failure=Failure(f"tampering: {problem}"), meta=meta)


def by_id(
    calls: Iterable[tuple[str, PendingCall]],
    sent: Sequence[SentCall],
    ranks: Mapping[int, int],
    *,
    name: Callable[[str], str] = str,
    same_input: bool = False,
) -> str | None:
    """Why the transcript's `calls` (id, call) are not what the model `sent`, each found by
    the model's id: its name as `name` maps the model's, its input the same (trimmed alike)
    when `same_input`, in the order the model sent them; or None."""
    by = {c.id: (index, c) for index, c in enumerate(sent)}
    seen_opened, last_in_reply = 0, dict[int, int]()
    for call_id, call in calls:
        found = by.get(call_id)
        said = f"tool call {call.name} ({call_id[:80]}) in the transcript"
        if found is None:
            return f"{said} was never sent by the model"
        index, model = found
        if name(model.name) != call.name:
            return f"{said} was sent by the model as {model.name[:80]}"
        if same_input and trim_value(_mapping(model.input), INPUT_LIMIT) != call.input:
            return f"{said} has another input than the model sent"
        ended = ranks.get(model.reply)
        early = ended is not None and ended <= seen_opened  # ended before an earlier's request
        if early or index < last_in_reply.get(model.reply, -1):
            return f"{said} is out of the order the model sent its calls in"
        seen_opened = max(seen_opened, model.opened)
        last_in_reply[model.reply] = index
    return None


def unanswered(results: Iterable[str], sent: Sequence[SentCall]) -> str | None:
    """Why a tool result's id answers no call the model sent (its call may be past the
    transcript's cap, never unsent), or None."""
    ids = {c.id for c in sent}
    ghost = next((r for r in results if r not in ids), None)
    if ghost is None:
        return None
    return f"tool result for {ghost[:80]} in the CLI's output answers no call the model sent"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


__all__ = ["CallReader", "by_id", "checked", "tampered", "unanswered"]
