"""Attempts on another machine: the `Shipment` (backends/__init__.py) a run hands its backend.

Each attempt job travels with a reference to its run's bundle (engine/shipping.py: the suite's
fixtures and task files and each arm's skill folder, sent once per run), so a worker on another
machine unpacks them into a temp dir, builds the job's executor, judges and judge context from
its spec (`jobs.build_environment`, for that job alone) and runs it there; a kept workspace comes
back as bytes. Results return to the driver as they finish, where the runner journals them:
resume, caches and statistics do not know where an attempt ran.

Claude Code attempts ask the machine for a CPU and memory each, API attempts a quarter CPU
(they wait on the network): an executor whose attempts work in a directory
(`ExecutorBase.uses_workspace`) runs an agent locally.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.interruptible import run_interruptibly
from ..core.model import Attempt
from ..errors import UsageError
from ..executors.base import ExecutorBase
from .jobs import AttemptEnv, AttemptJob, Finished, build_environment, execute_job, now_iso
from .shipping import Bundle, build_bundle, localise, materialise, pack_kept, unpack_kept

# What an attempt asks of the machine: Claude Code runs a Node process and tools per attempt.
CLAUDE_CODE_RESOURCES: dict[str, float] = {"num_cpus": 1, "memory": 2 * 1024**3}
API_RESOURCES: dict[str, float] = {"num_cpus": 0.25}


def resources_for(executor: ExecutorBase | None) -> dict[str, float]:
    """What one attempt with `executor` asks of the machine (None: a run that only judges)."""
    if executor is not None and executor.uses_workspace:
        return dict(CLAUDE_CODE_RESOURCES)
    return dict(API_RESOURCES)


def run_shipped_job(
    job: AttemptJob, bundle: Bundle | None
) -> tuple[Finished, dict[str, bytes] | None]:
    """On the worker: unpack the bundle, rewrite the job to read it, build its environment
    from its spec and run it; the environment lives as long as the job (its judge-cache
    handle is closed). The second value is the kept workspace's files for the trip back
    (None: no workspace was to be kept)."""
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


def _interruptible(call: Callable[[], Finished], env: AttemptEnv) -> Finished:
    """`call()`, a cancel stopping it: the job's executor kills what it started and the job
    stops, instead of the task running to its end."""

    def stop() -> None:
        env.stop.set()
        if env.executor is not None:
            env.executor.cancel()

    return run_interruptibly(call, "skill-eval-attempt", stop)


class AttemptShipment:
    """How a run's attempt jobs travel (backends.Shipment): each with its run's bundle."""

    def __init__(self, env: AttemptEnv) -> None:
        self.resources: Mapping[str, float] = resources_for(env.executor)

    def worker(self) -> Callable[[Any, Any], tuple[Any, Any]]:
        return run_shipped_job

    def key(self, job: AttemptJob) -> str | None:
        return job.run.key if job.run is not None else None

    def payloads(self, jobs: Sequence[AttemptJob]) -> dict[str, Bundle]:
        """One bundle per run among the jobs: run key -> bundle."""
        runs: dict[str, tuple[Any, list[AttemptJob]]] = {}
        for job in jobs:
            if job.run is not None:
                runs.setdefault(job.run.key, (job.run, []))[1].append(job)
        out = {}
        for key, (spec, mine) in runs.items():
            tasks = list({job.task.id: job.task for job in mine}.values())
            arms = list({job.arm.name: job.arm for job in mine}.values())
            try:
                out[key] = build_bundle(Path(spec.judging.suite_dir), tasks, arms)
            except (OSError, ValueError) as exc:
                raise UsageError(f"--runner: cannot pack the suite's files: {exc}") from None
        return out

    def arrived(self, job: AttemptJob, result: Finished, kept: Any) -> Finished:
        if kept is not None and job.run is not None:
            return unpack_kept(result, kept, job.run.workspaces.keep_root)
        return result

    def lost(self, job: AttemptJob, exc: BaseException) -> Finished:
        """An attempt whose worker or machine was lost (out of memory, a node gone): an
        error, as for a crashed executor, so the run goes on and `--resume` runs it again."""
        first = (str(exc).strip().splitlines() or [""])[0]
        error = f"the attempt's worker was lost: {type(exc).__name__}: {first}".rstrip(": ")
        return Finished(
            Attempt(
                arm=job.arm.name,
                task_id=job.task.id,
                index=job.index,
                status="error",
                output="",
                judge=None,
                duration_ms=0,
                error=error,
                started_at=now_iso(),
                finished_at=now_iso(),
            )
        )


__all__ = [
    "API_RESOURCES",
    "CLAUDE_CODE_RESOURCES",
    "AttemptShipment",
    "resources_for",
    "run_shipped_job",
]
