"""One attempt's traffic as the jail's API proxy saw it: the replies by status (was the API
failing when the attempt ended?), the requests it refused (a route not allowed, a body over
the cap, a connection over the jail's cap), the requests its dialect's allow-list refused
(`tampering`: nothing the agent's CLI sends), each reply's usage, and the tool calls the model
sent in its replies, reply by reply: the record an attempt's transcript is checked against
(executors/tool_check.py), since the proxy is outside the jail and nothing in it can add to
what the model said.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .wire import ReplyUsage

ERRORS_KEPT = 32  # the last statuses an ApiLog keeps, for "was the API failing at the end?"
REFUSALS_KEPT = 50  # refused requests named in the record (all are counted)
MAX_SENT_CALLS = 20_000  # tool calls kept per attempt (a transcript keeps 5,000)
MAX_USAGES = 10_000  # replies' usage kept per attempt (a long attempt makes a few hundred)


@dataclass(frozen=True)
class SentCall:
    """One tool call in a model reply: its id (`toolu_...`, `call_...`), the tool's name, its
    input (a mapping; for a Responses custom tool or a shell action, the raw text under
    `input`), and the reply it came in: `reply` numbers the attempt's requests in the order
    they came in, `opened` is how many replies had ended then (a reply whose rank among the
    ended ones is at most that ended before this call's request came in)."""

    id: str
    name: str
    input: Any
    reply: int
    opened: int


class ApiLog:
    """One attempt's replies from the API as the proxy saw it (thread-safe): how many, by
    status (0: the upstream could not be reached), the last few in order, what was refused,
    and the model's tool calls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.statuses: Counter[int] = Counter()
        self.recent: list[int] = []
        self.refused: list[str] = []
        self.refusals = 0
        self.calls: list[SentCall] = []
        self.unread_replies = 0  # 2xx model replies whose tool calls could not be read
        self.ended: dict[int, int] = {}  # reply number -> its rank among the replies ended
        self.tampering: list[str] = []  # requests the dialect refused (the first few named)
        self.tampered = 0
        self.usages: list[ReplyUsage] = []
        self._begun = 0

    def saw(self, status: int) -> None:
        with self._lock:
            self.statuses[status] += 1
            self.recent = [*self.recent[-(ERRORS_KEPT - 1) :], status]

    def refuse(self, what: str) -> None:
        """A request the proxy did not forward (`what`: `GET /v1/files: not allowed`)."""
        with self._lock:
            self.refusals += 1
            if len(self.refused) < REFUSALS_KEPT:
                self.refused.append(what[:200])

    def tamper(self, what: str) -> None:
        """A request the dialect's allow-list refused (`what`: why, in one line): refused
        too, and the attempt is tampering (tool_check.py)."""
        with self._lock:
            self.tampered += 1
            if len(self.tampering) < REFUSALS_KEPT:
                self.tampering.append(what[:300])
        self.refuse(what)

    def replied(self, usage: ReplyUsage) -> None:
        """One reply's usage, as the proxy read it."""
        with self._lock:
            if len(self.usages) < MAX_USAGES:
                self.usages.append(usage)

    def begin(self) -> tuple[int, int]:
        """A request goes upstream: its reply's number, and how many replies had ended."""
        with self._lock:
            self._begun += 1
            return self._begun, len(self.ended)

    def called(self, reply: int, opened: int, calls: list[tuple[str, str, Any]]) -> None:
        """Tool calls (id, name, input) of reply `reply`, recorded before the agent can read
        them (the proxy records a call before it relays the bytes that complete it)."""
        with self._lock:
            for call_id, name, tool_input in calls:
                if len(self.calls) < MAX_SENT_CALLS:
                    self.calls.append(SentCall(call_id, name, tool_input, reply, opened))

    def end(self, reply: int, readable: bool) -> None:
        """Reply `reply` ended; `readable`: False when it was over the proxy's caps."""
        with self._lock:
            self.ended[reply] = len(self.ended) + 1
            self.unread_replies += not readable

    def sent(self) -> tuple[SentCall, ...]:
        with self._lock:
            return tuple(self.calls)

    def ranks(self) -> dict[int, int]:
        """Reply number -> its rank among the replies ended (a reply cut off has none)."""
        with self._lock:
            return dict(self.ended)

    @property
    def requests(self) -> int:
        with self._lock:
            return sum(self.statuses.values())

    def last_error(self) -> int | None:
        """The status of the last reply when it was an error (0: the upstream could not be
        reached); None when it succeeded or there was none."""
        with self._lock:
            last = self.recent[-1] if self.recent else None
        return last if last is not None and (last == 0 or last >= 400) else None

    def failing(self) -> bool:
        """Whether the API was failing when the attempt ended: its last reply an error a
        retry may heal (408, 429, 5xx, unreachable)."""
        last = self.last_error()
        return last is not None and (last in (0, 408, 429) or last >= 500)

    def summary(self) -> dict[str, int]:
        """{status: count} of the replies that were not 2xx (for an attempt's record)."""
        with self._lock:
            return {str(k): v for k, v in sorted(self.statuses.items()) if not 200 <= k < 300}

    def record(self) -> dict[str, Any]:
        """What an attempt's record keeps of it beside the counts: the refusals."""
        with self._lock:
            if not self.refusals:
                return {}
            record: dict[str, Any] = {
                "api_refused": self.refusals,
                "api_refused_first": list(self.refused),
            }
            if self.tampered:
                record["api_tampering"] = self.tampered
            return record
