"""Where attempts run: one small protocol, so the runner does not care whether a job runs on a
thread of this process (`threads`, the default) or somewhere else (`ray`: a Ray cluster).

A backend maps a function over items (`map`) and runs a run's jobs (`run`), yielding each
result as it finishes, in any order. The runner (the driver) consumes the results: it alone
writes the journal, reports progress and decides to stop. Closing the iterator early (the run
stopped, Ctrl-C) must stop queued jobs from starting; `cancel()` asks running ones to stop too.

Backends know nothing of attempts: the engine hands `run` the function that runs one job here
(`local`, with the run's live executor and judges) and a `Shipment` that says how a job
travels to another machine (the worker function to call there, what each run's jobs share,
what a lost worker's job becomes). `threads` calls `local`; `ray` ships. Backends are built
by name through a registry, as executors and judges are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from ..core.registry import Registry
from ..errors import UsageError

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")


class Shipment(Protocol):
    """How a run's jobs travel to another machine (engine/shipped.py builds one per run)."""

    # What one job asks of the machine it runs on (Ray resources: num_cpus, memory).
    resources: Mapping[str, float]

    def worker(self) -> Callable[[Any, Any], tuple[Any, Any]]:
        """A module-level (picklable) function: `worker(job, shared)` on the other machine,
        `shared` the payload of the job's key; returns (result, what to hand `arrived`)."""
        ...

    def key(self, job: Any) -> str | None:
        """Which shared payload `job` needs (None: none)."""
        ...

    def payloads(self, jobs: Sequence[Any]) -> Mapping[str, Any]:
        """Each key's payload, sent once for all the jobs that share it."""
        ...

    def arrived(self, job: Any, result: Any, extra: Any) -> Any:
        """The result as the driver records it, from what the worker sent back."""
        ...

    def lost(self, job: Any, exc: BaseException) -> Any:
        """The result of a job whose worker or machine was lost."""
        ...


class Backend(Protocol):
    def run(
        self, local: Callable[[_Job], _Result], jobs: Sequence[_Job], shipment: Shipment
    ) -> Iterator[_Result]:
        """Every job run here with `local`, or shipped as `shipment` says, yielded as each
        finishes."""
        ...

    def map(self, fn: Callable[[_Job], _Result], jobs: Iterable[_Job]) -> Iterator[_Result]:
        """`fn(job)` for every job, yielded as each finishes; an exception raised by `fn`
        propagates out of the iterator."""
        ...

    def cancel(self) -> None:
        """Stop what is queued, and what is running where that is possible."""
        ...


# name -> "module:class" in this package; each class takes (concurrency, address).
BUILTIN_BACKENDS = {"threads": "threads:ThreadBackend", "ray": "ray:RayBackend"}
BACKENDS = tuple(BUILTIN_BACKENDS)

REGISTRY: Registry[type] = Registry(
    kind="runner",
    valid="valid runners",
    group="skill_eval.backends",
    package=__package__ or "skill_eval.backends",
    builtins=BUILTIN_BACKENDS,
    coerce=lambda value: value,
    name_of=lambda cls: str(getattr(cls, "name", cls.__name__)),
)


def create_backend(name: str, *, concurrency: int, address: str | None = None) -> Backend:
    """The backend called `name`: "threads", or "ray" (on the cluster at `address`, or a
    local one; Ray is imported only then), or a plugin's."""
    cls = REGISTRY.get(name)
    if cls is None:
        raise UsageError(REGISTRY.unknown(name))
    backend: Backend = cls(concurrency, address)
    return backend


__all__ = ["BACKENDS", "Backend", "Shipment", "create_backend"]
