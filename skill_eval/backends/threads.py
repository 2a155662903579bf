"""`threads`: jobs on a bounded thread pool of this process (the default), each run with the
function the engine gives (its live executor, judges and judge context): nothing is shipped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

from . import Shipment

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")


class ThreadBackend:
    """At most `concurrency` jobs at once; at most twice that many submitted, so a long plan
    does not sit in the pool's queue (and a stop leaves little to cancel)."""

    name = "threads"

    def __init__(self, concurrency: int, address: str | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self._pools: list[ThreadPoolExecutor] = []

    def run(
        self, local: Callable[[_Job], _Result], jobs: Sequence[_Job], shipment: Shipment
    ) -> Iterator[_Result]:
        return self.map(local, jobs)

    def map(self, fn: Callable[[_Job], _Result], jobs: Iterable[_Job]) -> Iterator[_Result]:
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="skill-eval")
        self._pools.append(pool)
        pending: set[Future[_Result]] = set()
        queue = iter(jobs)

        def fill() -> None:
            for job in queue:
                pending.add(pool.submit(fn, job))
                if len(pending) >= self.concurrency * 2:
                    break

        try:
            fill()
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
                fill()
        except BaseException:  # an error, Ctrl-C, or the consumer closed us: start nothing new
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            self._pools.remove(pool)
        pool.shutdown(wait=True)

    def cancel(self) -> None:
        # Threads cannot be killed: queued jobs are dropped; running ones stop through the
        # executor's own cancel (the runner calls it) and the run's stop event.
        for pool in list(self._pools):
            pool.shutdown(wait=False, cancel_futures=True)
