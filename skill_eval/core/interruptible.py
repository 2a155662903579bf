"""`call()` on a thread, the calling thread waiting in short steps: a cancel (Ctrl-C, Ray's
cancel) raises KeyboardInterrupt only between bytecodes, never inside a blocking wait (an
agent's subprocess, a socket read), so a waiting thread is where it lands."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def run_interruptibly(
    call: Callable[[], T], name: str, on_interrupt: Callable[[], None] | None = None
) -> T:
    """`call()`'s result or exception. On KeyboardInterrupt, `on_interrupt()` (stop what the
    call started), up to 5 s for the call to end, then the interrupt goes on."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
            worker.join(5)
        raise
    if "error" in outcome:
        raise outcome["error"]
    result: T = outcome["result"]
    return result
