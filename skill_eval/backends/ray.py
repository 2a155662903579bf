"""`ray`: attempts as Ray tasks, on an existing cluster (`--ray-address`) or a local one.

Each attempt job travels with a reference to its run's bundle (backends/shipping.py: the suite's
fixtures and task files and each arm's skill folder, put in the object store once per run),
so a worker on another machine unpacks them into a temp dir, builds the job's executor, judges
and judge context from its spec (`jobs.build_environment`, for that job alone) and runs it
there; a kept workspace comes back as bytes. Results return to the driver as they finish, where the
runner journals them: resume, caches and statistics do not know where an attempt ran.

At most `concurrency` attempts are in flight (rate limits are per API key, not per machine);
Claude Code attempts ask the cluster for a CPU and memory each, API attempts a quarter CPU
(they wait on the network): an executor whose attempts work in a directory
(`ExecutorBase.uses_workspace`) runs an agent locally. Ray is imported only here, when this
backend is chosen; the worker nodes need skill-eval installed (the same version) and the
executor's credentials.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..core.model import Attempt
from ..engine.jobs import (
    AttemptEnv,
    AttemptJob,
    Finished,
    RunSpec,
    build_environment,
    execute_job,
    now_iso,
)
from ..errors import UsageError
from ..executors.base import ExecutorBase
from .shipping import Bundle, build_bundle, localise, materialise, pack_kept, unpack_kept

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")

INSTALL_HINT = "pip install 'skill-eval[ray]'"
# What an attempt asks of the cluster: Claude Code runs a Node process and tools per attempt.
CLAUDE_CODE_RESOURCES: dict[str, float] = {"num_cpus": 1, "memory": 2 * 1024**3}
API_RESOURCES: dict[str, float] = {"num_cpus": 0.25}


def import_ray() -> Any:
    """The `ray` module, or a UsageError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--runner ray needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def resources_for(executor: ExecutorBase | None) -> dict[str, float]:
    """The Ray resources one attempt with `executor` declares (None: a run that only judges)."""
    if executor is not None and executor.uses_workspace:
        return dict(CLAUDE_CODE_RESOURCES)
    return dict(API_RESOURCES)


def run_shipped(
    fn: Callable[[Any], Any], item: Any, bundle: Bundle | None
) -> tuple[Any, dict[str, bytes] | None]:
    """On the worker: `fn(item)` (a plain map), or, with `fn` None, the attempt job `item`
    (see `_run_job`). The second value is the kept workspace's files for the trip back (None:
    no workspace was to be kept)."""
    if fn is not None:
        return _interruptible(lambda: fn(item)), None
    return _run_job(item, bundle)


def _run_job(job: AttemptJob, bundle: Bundle | None) -> tuple[Finished, dict[str, bytes] | None]:
    """Unpack the bundle, rewrite the job to read it, build its environment from its spec and
    run it; the environment lives as long as the job (its judge-cache handle is closed)."""
    if job.run is None:
        raise ValueError("a shipped job needs its run spec")
    root = materialise(bundle) if bundle is not None else None
    keep = (
        Path(tempfile.mkdtemp(prefix="skill-eval-kept-"))
        if root is not None and job.run.workspaces.keep_root is not None
        else None
    )
    local = localise(job, root, bundle, keep) if root is not None and bundle else job
    env = build_environment(local.run or job.run)  # localise rewrites the spec, never drops it
    try:
        finished = _interruptible(lambda: execute_job(env, local), env)
        return finished, pack_kept(finished) if keep is not None else None
    finally:
        env.close()
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)


def _interruptible(call: Callable[[], Any], env: AttemptEnv | None = None) -> Any:
    """`call()` on a thread, this one waiting in short steps: Ray's cancel raises
    KeyboardInterrupt here only between bytecodes, never inside a blocking wait (an agent's
    subprocess, a socket read). Then the job's executor kills what it started and the job
    stops, instead of the task running to its end."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="skill-eval-attempt", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        if env is not None:
            env.stop.set()
            if env.executor is not None:
                env.executor.cancel()
        worker.join(5)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def lost(job: AttemptJob, exc: BaseException) -> Finished:
    """An attempt whose worker or node was lost (out of memory, a node gone): an error, as
    for a crashed executor, so the run goes on and `--resume` runs it again."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return Finished(
        Attempt(
            arm=job.arm.name,
            task_id=job.task.id,
            index=job.index,
            status="error",
            output="",
            judge=None,
            duration_ms=0,
            error=f"ray: the attempt's worker was lost: {type(exc).__name__}: {first}".rstrip(": "),
            started_at=now_iso(),
            finished_at=now_iso(),
        )
    )


class RayBackend:
    """Attempts on Ray: `address` None starts a local Ray for the run (and stops it after);
    an already initialised Ray (a test's, a notebook's) is used as it is."""

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

    def attempts(self, env: AttemptEnv, jobs: Sequence[AttemptJob]) -> Iterator[Finished]:
        """The jobs shipped with their run's bundle; each worker rebuilds the environment
        from the job's spec (`env`, the driver's, says what each attempt asks of the
        cluster)."""
        resources = resources_for(env.executor)
        return self._stream(list(jobs), None, resources, self._bundles)

    def map(self, fn: Callable[[_Job], _Result], jobs: Iterable[_Job]) -> Iterator[_Result]:
        return self._stream(list(jobs), fn, dict(API_RESOURCES), lambda items: {})

    def _stream(
        self,
        items: list[Any],
        fn: Callable[[Any], Any] | None,
        resources: dict[str, float],
        bundling: Callable[[list[Any]], dict[str, Any]],
    ) -> Iterator[Any]:
        """`run_shipped(fn, item, bundle)` for every item as Ray tasks, at most `concurrency`
        in flight, each result yielded as it finishes."""
        if not items:
            return
        started = self._connect()
        queue = iter(items)
        remote: Any = None
        bundles: dict[str, Any] = {}

        def fill() -> None:
            for item in queue:
                key = item.run.key if isinstance(item, AttemptJob) and item.run else None
                # Ray reruns a task whose worker died (never one that raised): an attempt
                # can run twice, only its last result is recorded.
                ref = remote.options(**resources, max_retries=2).remote(
                    fn, item, bundles.get(key) if key else None
                )
                self._pending[ref] = item
                if len(self._pending) >= self.concurrency:
                    break

        try:
            remote = self.ray.remote(run_shipped)
            bundles = bundling(items)
            fill()
            while self._pending:
                done, _ = self.ray.wait(list(self._pending), num_returns=1)
                item = self._pending.pop(done[0])
                try:
                    result, kept = self.ray.get(done[0])
                except self.ray.exceptions.RayTaskError:
                    raise  # raised by our own code: a bug, as on threads
                except self.ray.exceptions.RayError as exc:  # a worker or node was lost
                    if fn is not None:
                        raise
                    result, kept = lost(item, exc), None
                if kept is not None and fn is None and item.run is not None:
                    result = unpack_kept(result, kept, item.run.workspaces.keep_root)
                yield result
                fill()
        except BaseException:  # an error, Ctrl-C, or the consumer closed us
            self.cancel()
            raise
        finally:
            self._pending.clear()
            if started:
                self.ray.shutdown()

    def _bundles(self, items: list[Any]) -> dict[str, Any]:
        """One bundle per run among the jobs, in the object store: run key -> reference."""
        runs: dict[str, tuple[RunSpec, list[AttemptJob]]] = {}
        for item in items:
            if isinstance(item, AttemptJob) and item.run is not None:
                runs.setdefault(item.run.key, (item.run, []))[1].append(item)
        refs = {}
        for key, (spec, jobs) in runs.items():
            tasks = list({job.task.id: job.task for job in jobs}.values())
            arms = list({job.arm.name: job.arm for job in jobs}.values())
            try:
                bundle = build_bundle(Path(spec.judging.suite_dir), tasks, arms)
            except (OSError, ValueError) as exc:
                raise UsageError(f"--runner ray: cannot pack the suite's files: {exc}") from None
            refs[key] = self.ray.put(bundle)
        return refs

    def cancel(self) -> None:
        # Not forced: the worker gets a KeyboardInterrupt, so the executor kills its own
        # subprocesses on the way out.
        for ref in list(self._pending):
            try:
                self.ray.cancel(ref)
            except Exception:  # noqa: BLE001 - already finished or gone: nothing to stop
                pass
        self._pending.clear()
