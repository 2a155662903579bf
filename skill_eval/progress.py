"""Progress on stderr: a redrawn bar on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Mapping
from typing import IO

from .model import Attempt


class Progress:
    def __init__(self, totals: Mapping[str, int], stream: IO[str] | None = None,
                 interval: float = 10.0) -> None:
        self.totals = dict(totals)
        self.done = dict.fromkeys(totals, 0)
        self.errors = 0
        self.cost = 0.0
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self._last = 0.0
        self._lock = threading.Lock()

    def already(self, attempts: Iterable[Attempt]) -> None:
        """Count attempts finished before this process (resumed or from the cache)."""
        with self._lock:
            for attempt in attempts:
                self.done[attempt.arm] = self.done.get(attempt.arm, 0) + 1

    def __call__(self, attempt: Attempt) -> None:
        with self._lock:
            self.done[attempt.arm] = self.done.get(attempt.arm, 0) + 1
            self.errors += attempt.status == "error"
            self.cost += attempt.cost_usd
            finished = sum(self.done.values()) >= sum(self.totals.values())
            now = time.monotonic()
            if self.tty:
                self.stream.write("\r" + self.line() + ("\n" if finished else ""))
                self.stream.flush()
            elif finished or now - self._last >= self.interval:
                self._last = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def line(self) -> str:
        arms = "  ".join(f"{arm} {self.done[arm]}/{total}" for arm, total in self.totals.items())
        done, total = sum(self.done.values()), sum(self.totals.values())
        width = 20
        filled = int(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        return f"[{bar}] {arms}  errors {self.errors}  cost ${self.cost:.4f}"
