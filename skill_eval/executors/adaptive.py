"""Adaptive concurrency: how many API calls run at once, between 1 and the run's
`--concurrency`, found the way TCP finds a link's capacity (AIMD).

The level rises by one after each window of successes (as many successes as the level, so
about once per round trip at full use); a call answered 429 (rate limited) or 529 (overloaded) cuts
it in half, once per congestion event (calls that started before the last cut saw the old
level and do not cut again). A `retry-after` pauses every call, not only the one that got it
(the limit is shared, so the others would be refused too; for as long as the reset headers
say a unit takes to come back, when the reply has them), and the `anthropic-ratelimit-*`
headers of successful calls hold the level when the budget runs low and pace calls when it
is spent. The controller is pure (a clock is injected); `CallGate` applies it to threads.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

THROTTLE_STATUSES = frozenset({429, 529})
MAX_PAUSE_SECONDS = 60.0  # a wild retry-after or reset never freezes a run for longer
_KINDS = ("requests", "tokens", "input-tokens", "output-tokens")


@dataclass(frozen=True)
class Budget:
    """What an `anthropic-ratelimit-<kind>-*` triple says: limit, remaining, and seconds until
    the bucket is full again."""

    limit: int
    remaining: int
    reset_in: float | None

    def pace(self) -> float:
        """Seconds until one more unit is free when none is left (a token bucket refills
        `limit` over `reset_in`); 0 while some remain."""
        if self.remaining > 0 or self.reset_in is None or self.limit <= 0:
            return 0.0
        return self.reset_in / self.limit


def rate_limit_budgets(
    headers: Mapping[str, str] | None, now: float | None = None
) -> dict[str, Budget]:
    """The budgets the `anthropic-ratelimit-*` headers report, by kind (requests, tokens,
    input-tokens, output-tokens); unreadable ones are left out."""
    lowered = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    budgets = {}
    for kind in _KINDS:
        prefix = f"anthropic-ratelimit-{kind}-"
        try:
            limit = int(lowered[prefix + "limit"])
            remaining = int(lowered[prefix + "remaining"])
        except (KeyError, ValueError):
            continue
        budgets[kind] = Budget(limit, remaining, _seconds_until(lowered.get(prefix + "reset"), now))
    return budgets


def _seconds_until(stamp: str | None, now: float | None) -> float | None:
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return max(0.0, when - (time.time() if now is None else now))


class AimdController:
    """The level (a float; `limit` is its floor) between `minimum` and `maximum`."""

    def __init__(
        self, maximum: int, minimum: int = 1, *, increase: float = 1.0, decrease: float = 0.5
    ) -> None:
        self.maximum, self.minimum = max(1, maximum), max(1, min(minimum, maximum))
        self.increase, self.decrease = increase, decrease
        self.level = float(self.maximum)  # no limit is known yet: start at the ceiling
        self.cuts = 0
        self._last_cut = -math.inf
        self._window = 0  # successes since the level last rose

    @property
    def limit(self) -> int:
        return max(self.minimum, min(self.maximum, int(self.level)))

    def succeeded(self, hold: bool = False) -> None:
        """A call went through: one more call per window, unless the budget says `hold`."""
        if hold:
            return
        self._window += 1
        if self._window >= self.limit:
            self._window = 0
            self.level = min(float(self.maximum), self.level + self.increase)

    def throttled(self, started: float, now: float) -> bool:
        """A call that started at `started` was refused: cut the level, unless a cut already
        happened after it started (one congestion event, one cut). True when it cut."""
        if started < self._last_cut:
            return False
        self.level = max(float(self.minimum), self.level * self.decrease)
        self._last_cut, self._window = now, 0
        self.cuts += 1
        return True


class Call:
    """One admitted call; tell the gate how it went (`ok` or `failed`) before it ends."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.status: int | None = None
        self.headers: Mapping[str, str] = {}
        self.retry_after: float | None = None
        self.ok_ = False

    def ok(self, headers: Mapping[str, str] | None = None) -> None:
        self.ok_, self.headers = True, headers or {}

    def failed(
        self,
        status: int | None,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status, self.headers, self.retry_after = status, headers or {}, retry_after


class CallGate:
    """Admits a call while fewer than the controller's limit are running and no pause is on;
    learns from each call's end. Thread-safe."""

    def __init__(
        self, controller: AimdController, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.controller = controller
        self.clock = clock
        self.running = 0
        self.throttles = 0  # calls answered 429/529
        self.paused_until = 0.0
        self._cond = threading.Condition()

    @property
    def limit(self) -> int:
        return self.controller.limit

    @contextmanager
    def call(self) -> Iterator[Call]:
        with self._cond:
            while True:
                wait = self.paused_until - self.clock()
                if wait <= 0 and self.running < self.controller.limit:
                    break
                self._cond.wait(timeout=wait if wait > 0 else None)
            self.running += 1
            call = Call(self.clock())
        try:
            yield call
        finally:
            with self._cond:
                self.running -= 1
                self._learn(call)
                self._cond.notify_all()

    def _learn(self, call: Call) -> None:
        now = self.clock()
        budgets = rate_limit_budgets(call.headers)
        if call.ok_:
            low = any(b.remaining < self.controller.limit for b in budgets.values())
            self.controller.succeeded(hold=low)
            pace = max((b.pace() for b in budgets.values()), default=0.0)
            self._pause(now, pace)
        elif call.status in THROTTLE_STATUSES:
            self.throttles += 1
            self.controller.throttled(call.started, now)
            # The refused call itself waits its retry-after (the runner's backoff). The others
            # wait too, for as long as the reset headers say a unit takes to come back when
            # the reply has them (the API rounds retry-after up to whole seconds), else for
            # the retry-after.
            pace = max((b.pace() for b in budgets.values()), default=0.0)
            wait = call.retry_after or 0.0
            self._pause(now, min(wait, pace) if pace > 0 else wait)

    def _pause(self, now: float, seconds: float) -> None:
        if seconds > 0:
            self.paused_until = max(self.paused_until, now + min(seconds, MAX_PAUSE_SECONDS))


__all__ = ["AimdController", "Budget", "Call", "CallGate", "rate_limit_budgets"]
