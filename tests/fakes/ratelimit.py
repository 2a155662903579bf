"""A token-bucket rate limit for the fake server, shaped like Anthropic's requests-per-minute
limit: `rate` requests per second refill a bucket of `burst`; a request that finds it empty is
answered 429 `rate_limit_error` with `retry-after` (whole seconds, rounded up, as the real API
sends) and every reply carries the `anthropic-ratelimit-requests-*` headers.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime


def _rfc3339(when: float) -> str:
    return (
        datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


@dataclass
class TokenBucket:
    """`rate` tokens per second, at most `burst` banked; one token per /v1/messages request."""

    rate: float
    burst: int
    limited: int = 0  # requests answered 429 by the bucket
    _tokens: float = field(default=-1.0, repr=False)
    _stamp: float = field(default=0.0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, now: float | None = None) -> tuple[float, dict[str, str]]:
        """(seconds until a token is free, 0 when one was taken; the rate-limit headers)."""
        clock = time.monotonic() if now is None else now
        with self._lock:
            if self._tokens < 0:
                self._tokens, self._stamp = float(self.burst), clock
            self._tokens = min(float(self.burst), self._tokens + (clock - self._stamp) * self.rate)
            self._stamp = clock
            wait = 0.0
            if self._tokens >= 1.0:
                self._tokens -= 1.0
            else:
                wait = (1.0 - self._tokens) / self.rate
                self.limited += 1
            remaining = int(self._tokens)
            full_in = (self.burst - self._tokens) / self.rate
        headers = {
            "anthropic-ratelimit-requests-limit": str(self.burst),
            "anthropic-ratelimit-requests-remaining": str(remaining),
            "anthropic-ratelimit-requests-reset": _rfc3339(time.time() + full_in),
        }
        if wait > 0:
            headers["retry-after"] = str(max(1, math.ceil(wait)))
        return wait, headers
