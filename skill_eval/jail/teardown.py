"""A jail's end, waited for off the attempt's path: once its holder answered `done` and the
harness copied the workspace out, nothing of the attempt runs any more, but bwrap's exit (its
mount and network namespaces torn down, an RCU grace period or two: 7-15 ms) and the removal
of its cgroup would still delay the attempt's result. `later` runs them on a thread of their
own (not a daemon: an exiting harness still waits for them); `wait` joins them (a run's end,
tests that look for what a jail left)."""

from __future__ import annotations

import threading
from collections.abc import Callable

_lock = threading.Lock()
_pending: set[threading.Thread] = set()


def later(end: Callable[[], None]) -> None:
    """Run `end` on a thread of its own."""

    def run() -> None:
        try:
            end()
        finally:
            with _lock:
                _pending.discard(thread)

    thread = threading.Thread(target=run, name="skill-eval-jail-end")
    with _lock:
        _pending.add(thread)
    thread.start()


def wait(timeout: float | None = None) -> None:
    """Until every jail's end begun so far is done (or `timeout` seconds for each)."""
    with _lock:
        threads = list(_pending)
    for thread in threads:
        thread.join(timeout)
