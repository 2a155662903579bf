"""What the jail's API forward asks of the wire format it speaks: an `ApiDialect`, declared by
the executor whose agent CLI speaks it and handed to the forward (api_proxy.py), which keeps
only the mechanism: the routes it forwards, the credential it puts in place of the agent's
placeholder, the headers it passes, the request allow-list (`check`) and how a reply's tool
calls and usage read (`replies`).

    class MyDialect(ApiDialect):
        routes = frozenset({"/v1/turn"})
        headers = frozenset({"content-type", "authorization"})
        def check(self, request): ...        # Refusal("mcp_servers is not allowed") or None
        def replies(self): return MyReplies()
    proxy = ApiProxy(base_url, MyDialect().credentials(key), MyDialect())

A request the dialect refuses never reaches the upstream: the agent gets a 4xx and the
attempt's ApiLog a `tampering` record (the pinned CLI never sends it: something in the jail
wrote it). An `Admission` hook may refuse a request for the run's own reasons (a spent
budget), and a `UsageHook` hears each reply's usage as the forward read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# One tool call in a reply: (its id, the tool's name, its input).
Call = tuple[str, str, Any]


@dataclass(frozen=True)
class ApiRequest:
    """One request as the forward read it, before anything went upstream: `path` without its
    query, `query` (the text after `?`, "" without one), the header names lower-cased (a
    header sent twice: its values joined by ", "), the body parsed as JSON (None: empty)."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: Any


@dataclass(frozen=True)
class Refusal:
    """Why a request is not forwarded: the status and error type the agent gets, one line,
    and whether the attempt is to be recorded as tampering (True: a request its CLI never
    sends; False: the run's own limit, such as a spent budget)."""

    reason: str
    status: int = 400
    kind: str = "invalid_request_error"
    tampering: bool = True


@dataclass(frozen=True)
class ReplyUsage:
    """What one reply says it cost: its model and tokens (input without the cached ones)."""

    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class ReplyReader(Protocol):
    """One reply read as it is relayed (a new one per reply): each server-sent event's JSON,
    the stream's end, or a whole JSON body; each returns the tool calls it completed."""

    def event(self, event: Mapping[str, Any]) -> list[Call]: ...

    def done(self) -> list[Call]: ...

    def whole(self, body: Any) -> list[Call]: ...

    def usage(self) -> ReplyUsage | None: ...


Admission = Callable[[ApiRequest], "Refusal | None"]
UsageHook = Callable[[ReplyUsage], None]


class ApiDialect:
    """A wire format as the forward speaks it. `routes`: the request paths forwarded (POST
    only, as the agent sends them), with `strip` taken off their front before the upstream's
    own path goes there; `queries`: the query strings allowed on them; `headers`: the request
    headers passed on (any other is dropped: none names the client's address); the agent
    holds `placeholder_prefix` + a random token where the key would be, and `credentials(key)`
    are the headers that replace it. A subclass says `check` and `replies`."""

    name = "api"
    routes: frozenset[str] = frozenset()
    strip = ""
    queries: frozenset[str] = frozenset({""})
    headers: frozenset[str] = frozenset({"content-type", "accept"})
    credential_headers: frozenset[str] = frozenset({"authorization", "x-api-key"})
    placeholder_prefix = "sk-jail-"

    def credentials(self, key: str | None) -> dict[str, str]:
        """The headers the forward sends in place of the agent's (none: the agent's pass)."""
        return {"authorization": f"Bearer {key}"} if key else {}

    def check(self, request: ApiRequest) -> Refusal | None:
        """Why `request` is not forwarded (the allow-list of what the CLI sends), or None."""
        raise NotImplementedError

    def replies(self) -> ReplyReader:
        """A reader of one reply's tool calls and usage."""
        raise NotImplementedError


__all__ = [
    "Admission",
    "ApiDialect",
    "ApiRequest",
    "Call",
    "Refusal",
    "ReplyReader",
    "ReplyUsage",
    "UsageHook",
]
