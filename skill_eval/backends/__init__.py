"""Where attempts run: one small protocol, so the runner does not care whether a job runs on a
thread of this process (`threads`, the default) or somewhere else (`ray`: a Ray cluster).

A backend maps a plain function over picklable jobs and yields each result as it finishes, in
any order. The runner (the driver) consumes the results: it alone writes the journal, reports
progress and decides to stop. Closing the iterator early (the run stopped, Ctrl-C) must stop
queued jobs from starting; `cancel()` asks running ones to stop too.

A Ray backend is `map` = `ray.remote(fn)` over the jobs, `ray.wait` for each finished one,
and `cancel` = `ray.cancel` of the rest: the job and `run_attempt` need nothing else, since the
job carries how to rebuild its executor and judges (see `skill_eval.engine.jobs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")


class Backend(Protocol):
    def map(self, fn: Callable[[_Job], _Result], jobs: Iterable[_Job]) -> Iterator[_Result]:
        """`fn(job)` for every job, yielded as each finishes; an exception raised by `fn`
        propagates out of the iterator."""
        ...

    def cancel(self) -> None:
        """Stop what is queued, and what is running where that is possible."""
        ...


BACKENDS = ("threads", "ray")


def create_backend(name: str, *, concurrency: int, address: str | None = None) -> Backend:
    """The backend called `name`: "threads", or "ray" (on the cluster at `address`, or a
    local one; Ray is imported only then)."""
    if name == "threads":
        from .threads import ThreadBackend

        return ThreadBackend(concurrency)
    if name == "ray":
        from .ray import RayBackend

        return RayBackend(concurrency, address)
    from ..errors import UsageError

    raise UsageError(f"unknown backend {name!r}; valid backends: {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "Backend", "create_backend"]
