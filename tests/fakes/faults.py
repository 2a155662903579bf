"""Fault injection for the fake model servers: which request fails, and how.

A Fault names a kind (429, 529/503, 500, 401, 403, 404, dropped connections, a malformed body)
and a trigger: the first N requests, the n-th requests (1-based, counted per path), or a
seeded random rate. The kinds are shared; each protocol family answers an error kind with its
own status and body (`ERROR_REPLIES` for Anthropic, `OPENAI_ERROR_REPLIES` for OpenAI).
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

FaultKind = Literal[
    "rate_limit",
    "overloaded",
    "api_error",
    "drop_mid_stream",
    "drop_before_response",
    "malformed",
    "authentication",
    "permission",
    "not_found",
]
FAULT_KINDS: tuple[str, ...] = (
    "rate_limit",
    "overloaded",
    "api_error",
    "drop_mid_stream",
    "drop_before_response",
    "malformed",
    "authentication",
    "permission",
    "not_found",
)
_ALIASES = {
    "429": "rate_limit",
    "rate_limit_error": "rate_limit",
    "529": "overloaded",
    "overloaded_error": "overloaded",
    "500": "api_error",
    "503": "overloaded",
    "drop": "drop_before_response",
    "disconnect": "drop_before_response",
    "truncate": "drop_mid_stream",
    "malformed_json": "malformed",
    "401": "authentication",
    "authentication_error": "authentication",
    "403": "permission",
    "permission_error": "permission",
    "404": "not_found",
    "not_found_error": "not_found",
}

# kind -> (HTTP status, Anthropic error type, message) for the kinds that answer with an error.
ERROR_REPLIES: dict[str, tuple[int, str, str]] = {
    "rate_limit": (429, "rate_limit_error", "Number of request tokens has exceeded the rate limit"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "api_error": (500, "api_error", "Internal server error"),
    "authentication": (401, "authentication_error", "invalid x-api-key"),
    "permission": (
        403,
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    "not_found": (404, "not_found_error", "model: no-such-model"),
}


# kind -> (HTTP status, OpenAI error type, error code, message). OpenAI has no 529: an
# overloaded service answers 503.
OPENAI_ERROR_REPLIES: dict[str, tuple[int, str, str | None, str]] = {
    "rate_limit": (
        429,
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 20ms.",
    ),
    "overloaded": (
        503,
        "server_error",
        None,
        "The engine is currently overloaded, please try again later",
    ),
    "api_error": (
        500,
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    "authentication": (
        401,
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided.",
    ),
    "permission": (
        403,
        "invalid_request_error",
        "unsupported_country_region_territory",
        "You are not allowed to use this resource.",
    ),
    "not_found": (
        404,
        "invalid_request_error",
        "model_not_found",
        "The model `no-such-model` does not exist or you do not have access to it.",
    ),
}


def normalise_kind(kind: str) -> str | None:
    """The canonical fault kind for a name or alias ('429' -> 'rate_limit'), else None."""
    kind = str(kind).strip().lower()
    if kind in FAULT_KINDS:
        return kind
    return _ALIASES.get(kind)


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """Anthropic's error JSON: `{"type": "error", "error": {"type": ..., "message": ...}}`."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def openai_error_body(error_type: str, message: str, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error JSON: `{"error": {"message", "type", "param", "code"}}`."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


@dataclass
class Fault:
    """Inject `kind` into the requests to `path` (a glob; None: the server's model endpoints,
    `/v1/messages`, or `/v1/chat/completions` and `/v1/responses`) that the trigger selects.

    Triggers (give at most one; none means every request): `first` (the first N requests),
    `nth` (an int or list of 1-based request numbers, counted per path), `rate` (probability,
    drawn from the server's seeded RNG). `retry_after` / `retry_after_ms` add `retry-after`
    (seconds) / `retry-after-ms` headers to an error reply; a 429 always carries `retry-after`
    (0 unless given). The SDK waits that long when it is > 0, else backs off 0.5 s, 1 s, ...
    `message` overrides the error message.
    """

    kind: str
    first: int | None = None
    nth: int | list[int] | None = None
    rate: float | None = None
    path: str | None = None
    retry_after: float | None = None
    retry_after_ms: int | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        kind = normalise_kind(self.kind)
        if kind is None:
            raise ValueError(f"unknown fault kind {self.kind!r}; valid: {', '.join(FAULT_KINDS)}")
        self.kind = kind
        given = [t for t in (self.first, self.nth, self.rate) if t is not None]
        if len(given) > 1:
            raise ValueError("a fault takes at most one of first, nth, rate")
        if self.rate is not None and not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {self.rate}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fault:
        """Build a fault from a rules-file mapping; unknown keys are an error."""
        valid = {"kind", "first", "nth", "rate", "path", "retry_after", "retry_after_ms", "message"}
        unknown = sorted(set(data) - valid)
        if unknown:
            raise ValueError(f"fault: unknown key(s) {', '.join(unknown)}; valid: {sorted(valid)}")
        return cls(**dict(data))

    def triggers(
        self, path: str, number: int, rng: random.Random, model_paths: Iterable[str] = ()
    ) -> bool:
        """Whether this fault hits the `number`-th (1-based) request to `path`; a fault with
        no `path` hits `model_paths` (the server's model endpoints).

        Draws from `rng` only for rate faults; the caller holds the lock guarding `rng`.
        """
        if self.path is None and path not in model_paths:
            return False
        if self.path is not None and not fnmatch.fnmatchcase(path, self.path):
            return False
        if self.first is not None:
            return number <= self.first
        if self.nth is not None:
            wanted = [self.nth] if isinstance(self.nth, int) else list(self.nth)
            return number in wanted
        if self.rate is not None:
            return rng.random() < self.rate
        return True


def coerce_fault(fault: Fault | Mapping[str, Any] | str) -> Fault:
    """A Fault from a Fault, a mapping, or a bare kind name (that fault on every request)."""
    if isinstance(fault, Fault):
        return fault
    if isinstance(fault, str):
        return Fault(kind=fault)
    return Fault.from_dict(fault)
