"""Where attempts run: one small protocol, so the runner does not care whether a job runs on a
thread of this process (`threads`, the default) or somewhere else (`ray`: a Ray cluster).

A backend runs a run's attempt jobs (`attempts`) and maps a plain function over items (`map`),
yielding each result as it finishes, in any order. The runner (the driver) consumes the
results: it alone writes the journal, reports progress and decides to stop. Closing the
iterator early (the run stopped, Ctrl-C) must stop queued jobs from starting; `cancel()` asks
running ones to stop too.

The runner hands `attempts` the run's live environment (engine.jobs.AttemptEnv: the executor,
judges and judge context it has). `threads` runs every job with exactly that; `ray` ships the
picklable jobs, and each worker builds an environment of its own from the job's spec
(`engine.jobs.run_attempt`). What a worker builds lives as long as its job: no process keeps
a table of environments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:  # the engine imports this module; the protocol only names its types
    from ..engine.jobs import AttemptEnv, AttemptJob, Finished

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")


class Backend(Protocol):
    def attempts(self, env: AttemptEnv, jobs: Sequence[AttemptJob]) -> Iterator[Finished]:
        """Every job run with `env` or with an environment rebuilt from its spec (`job.run`),
        yielded as each finishes."""
        ...

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
