"""`ray`: jobs as Ray tasks, on an existing cluster (`--ray-address`) or a local one.

`map(fn, items)` runs a plain function on the cluster; `run(local, jobs, shipment)` ships each
job as the engine's `Shipment` says (engine/shipped.py for attempts): the worker function it
names runs there, with the payload the job's key shares put in the object store once; a job
whose worker or node was lost becomes what `shipment.lost` makes of it. Results return to the
driver as they finish.

At most `concurrency` jobs are in flight (rate limits are per API key, not per machine); each
asks the cluster for `shipment.resources`. Ray is imported only here, when this backend is
chosen; the worker nodes need skill-eval installed (the same version) and the executor's
credentials.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ..core.interruptible import run_interruptibly
from ..errors import UsageError
from . import Shipment

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")

INSTALL_HINT = "pip install 'skill-eval[ray]'"
MAP_RESOURCES: dict[str, float] = {"num_cpus": 0.25}  # a plain function: mostly waiting


def import_ray() -> Any:
    """The `ray` module, or a UsageError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--runner ray needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def run_remote(fn: Callable[[Any, Any], Any], item: Any, shared: Any) -> Any:
    """On the worker: `fn(item, shared)` (a shipment's worker makes itself interruptible:
    an attempt's stops its executor on the way out)."""
    _hear_cancel()
    return fn(item, shared)


def _hear_cancel() -> None:
    """Ray cancels a task by interrupting the worker's main thread as SIGINT would, which does
    nothing where SIGINT is ignored: a cluster started from a shell's `&` (or any parent that
    ignored or blocked it) hands that to its workers, and their tasks could not be stopped."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _plain(fn: Callable[[Any], Any]) -> Callable[[Any, Any], tuple[Any, None]]:
    def call(item: Any, shared: Any) -> tuple[Any, None]:
        return run_interruptibly(lambda: fn(item), "skill-eval-ray-task"), None

    return call


class _Plain:
    """The shipment of `map`: nothing shared, a lost worker an error like any other."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.resources: Mapping[str, float] = MAP_RESOURCES

    def worker(self) -> Callable[[Any, Any], tuple[Any, Any]]:
        return _plain(self.fn)

    def key(self, job: Any) -> str | None:
        return None

    def payloads(self, jobs: Sequence[Any]) -> Mapping[str, Any]:
        return {}

    def arrived(self, job: Any, result: Any, extra: Any) -> Any:
        return result

    def lost(self, job: Any, exc: BaseException) -> Any:
        raise exc


class RayBackend:
    """Jobs on Ray: `address` None starts a local Ray for the run (and stops it after);
    an already initialised Ray (a test's, a notebook's) is used as it is."""

    name = "ray"

    def __init__(self, concurrency: int, address: str | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.address = address
        self.ray = import_ray()
        self._pending: dict[Any, Any] = {}

    def _connect(self) -> bool:
        """Connect (or start a local Ray); True when this backend started it."""
        if self.ray.is_initialized():
            return False
        try:
            self.ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local Ray"
            raise UsageError(
                f"--runner ray: cannot start or reach {where}: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc}"
            ) from None
        return True

    def run(
        self, local: Callable[[_Job], _Result], jobs: Sequence[_Job], shipment: Shipment
    ) -> Iterator[_Result]:
        """The jobs shipped as `shipment` says (`local`, the driver's way, is not used)."""
        return self._stream(list(jobs), shipment)

    def map(self, fn: Callable[[_Job], _Result], jobs: Iterable[_Job]) -> Iterator[_Result]:
        return self._stream(list(jobs), _Plain(fn))

    def _stream(self, items: list[Any], shipment: Shipment) -> Iterator[Any]:
        """`shipment.worker()(item, payload)` for every item as Ray tasks, at most
        `concurrency` in flight, each result yielded as it finishes."""
        if not items:
            return
        started = self._connect()
        queue = iter(items)
        remote: Any = None
        shared: dict[str, Any] = {}
        worker = shipment.worker()

        def fill() -> None:
            for item in queue:
                key = shipment.key(item)
                # Ray reruns a task whose worker died (never one that raised): a job can run
                # twice, only its last result is recorded.
                ref = remote.options(**shipment.resources, max_retries=2).remote(
                    worker, item, shared.get(key) if key else None
                )
                self._pending[ref] = item
                if len(self._pending) >= self.concurrency:
                    break

        try:
            remote = self.ray.remote(run_remote)
            shared = {k: self.ray.put(v) for k, v in shipment.payloads(items).items()}
            fill()
            while self._pending:
                done, _ = self.ray.wait(list(self._pending), num_returns=1)
                item = self._pending.pop(done[0])
                try:
                    result, extra = self.ray.get(done[0])
                except self.ray.exceptions.RayTaskError:
                    raise  # raised by our own code: a bug, as on threads
                except self.ray.exceptions.RayError as exc:  # a worker or node was lost
                    yield shipment.lost(item, exc)
                else:
                    yield shipment.arrived(item, result, extra)
                fill()
        except BaseException:  # an error, Ctrl-C, or the consumer closed us
            self.cancel()
            raise
        finally:
            self._pending.clear()
            if started:
                self.ray.shutdown()

    def cancel(self) -> None:
        # Not forced: the worker gets a KeyboardInterrupt, so a job's executor kills its own
        # subprocesses on the way out.
        for ref in list(self._pending):
            try:
                self.ray.cancel(ref)
            except Exception:  # noqa: BLE001 - already finished or gone: nothing to stop
                pass
        self._pending.clear()
