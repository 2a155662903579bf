"""Runs arms × tasks × attempts through a backend (`backends/`: a bounded thread pool by
default), stops the run on an executor result marked fatal, and journals every attempt as it
finishes. Concurrency lives here and in the backends, nowhere else; each attempt is a picklable
job the backend runs with this run's live environment or one rebuilt from the job's spec
(`jobs.execute_job` / `jobs.run_attempt`), which retries what is not the skill's fault and may
heal (as the executor or judge classifies it). The runner is the driver: the only writer of the
journal.

Jobs are interleaved (task 0 candidate, task 0 baseline, task 1 candidate, ...) so that a slow
hour or a warm cache favours neither arm. The journal (`attempts.jsonl`, engine/journal.py) gets one
signed line per finished attempt, flushed and fsynced, so a run killed half way can be
resumed: a torn last line is ignored, and attempts that ended in error are run again.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from ..backends import Backend
from ..backends.threads import ThreadBackend
from ..core.attempt_policy import AttemptPolicy
from ..core.model import Arm, ArmName, Attempt, Task
from ..errors import RunStopped
from ..executors.base import ExecutorBase
from ..executors.batches import BatchCounts, BatchLog
from ..judges.base import Judge, JudgeContext
from ..judges.llm import JudgeSettings
from .jobs import (
    AttemptEnv,
    AttemptJob,
    Finished,
    RunSpec,
    WorkspaceSettings,
    execute_job,
    judge_attempt,
    kept_workspace_dir,
    now_iso,
)
from .journal import JOURNAL_NAME, Journal
from .requests import request_of
from .shipped import AttemptShipment
from .spend import Meter

__all__ = [
    "JOURNAL_NAME",
    "Job",
    "Journal",
    "RunSettings",
    "Runner",
    "attempts_by",
    "kept_workspace_dir",
    "plan_jobs",
]

_In = TypeVar("_In")
_Out = TypeVar("_Out")
Job = AttemptJob  # one (arm, task, sample index); see engine/jobs.py


@dataclass
class RunSettings:
    concurrency: int = 8
    # Retries of transient failures, their backoff, the output cut (--max-retries,
    # --max-output-bytes): what each attempt's job is run with, here or in another process.
    attempts: AttemptPolicy = field(default_factory=AttemptPolicy)
    progress: Callable[[Attempt], None] | None = None
    batch_status: Callable[[BatchCounts], None] | None = None  # a sent batch's counts (--batch)
    sleep: Callable[[float], None] | None = None  # injectable for tests; default waits on stop
    # Where attempts' workspaces are made, which are kept after judging, where and how big.
    workspaces: WorkspaceSettings = field(default_factory=WorkspaceSettings)
    # Told of each finished attempt; True: start no new attempt, let the running ones finish.
    stop_when: Callable[[Attempt], bool] | None = None
    # The run's caps (engine/spend.py): its executors charge each model reply to it and ask it
    # before each request; the runner adds each recorded attempt's judgement (and what its
    # executor did not charge). Once a cap is reached nothing new starts.
    meter: Meter | None = None


def plan_jobs(arms: Sequence[Arm], tasks: Sequence[Task], samples: int) -> list[AttemptJob]:
    """Every arm runs every task `samples` times, interleaved across arms."""
    return [Job(arm, task, i) for i in range(samples) for task in tasks for arm in arms]


class Runner:
    """The driver: hands jobs to a backend (one executor, and the executors of the arms
    another one runs; per-task judges; no executor: it only judges), journals each attempt it
    gets back, reports progress, and stops the run at an executor result marked fatal. The
    only writer of the journal."""

    def __init__(
        self,
        executor: ExecutorBase | None,
        judges: Mapping[str, Judge],
        ctx: JudgeContext,
        journal: Journal | None,
        settings: RunSettings,
        backend: Backend | None = None,
        arm_executors: Mapping[str, ExecutorBase] | None = None,
    ) -> None:
        self.executor = executor
        self.arm_executors = dict(arm_executors or {})
        self.judges = judges
        self.ctx = ctx
        self.journal = journal
        self.settings = settings
        self.backend = backend or ThreadBackend(settings.concurrency)
        self.stop = threading.Event()
        self.key = uuid.uuid4().hex
        self._env: AttemptEnv | None = None
        if settings.meter is not None:  # each reply charged as it comes (core/budget.py)
            for each in self.executors:
                each.use_budget(settings.meter)

    def spec(self) -> RunSpec:
        """How another process rebuilds this run's executor and judges (see engine/jobs.py)."""
        s = self.settings
        return RunSpec(
            self.key,
            self.executor.name if self.executor else None,
            self.executor.config if self.executor else None,
            JudgeSettings.of(self.ctx),
            s.attempts,
            s.workspaces,
            arm_executors={
                arm: (executor.name, executor.config)
                for arm, executor in self.arm_executors.items()
            },
        )

    @property
    def env(self) -> AttemptEnv:
        """This run's live objects, which the backend runs the jobs with (`threads`) or
        rebuilds from `spec()` wherever it runs them."""
        if self._env is None:
            s = self.settings
            self._env = AttemptEnv(
                self.executor,
                self.judges,
                self.ctx,
                s.attempts,
                workspaces=s.workspaces,
                sleep=s.sleep,
                stop=self.stop,
                arm_executors=self.arm_executors,
                budget=s.meter,
            )
        return self._env

    @property
    def executors(self) -> list[ExecutorBase]:
        """Every executor of the run, each once."""
        found = [self.executor, *self.arm_executors.values()]
        return [e for i, e in enumerate(found) if e is not None and e not in found[:i]]

    def run(self, jobs: Iterable[Job], done: Iterable[Attempt] = ()) -> list[Attempt]:
        """Run the jobs not already in `done` (passed/failed attempts are kept, errors rerun)."""
        kept = {(a.arm, a.task_id, a.index): a for a in done if a.status != "error"}
        spec = self.spec()
        todo = [replace(job, run=spec) for job in jobs if job.key not in kept]
        results = list(kept.values())
        self._prepare(todo)
        with closing(
            self._guarded(
                lambda: self.backend.run(
                    partial(execute_job, self.env), todo, AttemptShipment(self.env)
                ),
                todo,
            )
        ) as finishing:
            for finished in finishing:
                recorded = self._record(finished)
                if recorded is not None:
                    results.append(recorded)
        return results

    def _prepare(self, todo: Sequence[Job]) -> None:
        """A batch-mode executor (executors/batches.py) gets every request before the jobs
        start, with the batches this run's journal already names; the batch ids it sends are
        journaled here, the moment they exist, so a killed run resumes the same batches. The
        model-graded judgements of what it answered go out as a batch too."""
        executor = self.executor
        if executor is None or not executor.prepares_requests or not todo:
            return
        todo = [job for job in todo if job.arm.name not in self.arm_executors]
        from ..judges.batch_judging import batch_judgements  # batch mode only

        journal = self.journal
        requests = [request_of(job) for job in todo]
        log = BatchLog(
            records=journal.notes() if journal else (),
            note=journal.note if journal else BatchLog().note,
            status=self.settings.batch_status,
            attempts=self.settings.attempts,
            sleep=self.env.sleep,
        )
        executor.prepare(requests, log)
        self.ctx = batch_judgements(
            executor.prepared_output,
            [(job.task, r) for job, r in zip(todo, requests, strict=True)],
            self.judges,
            self.ctx,
            log,
        )

    def _record(self, finished: Finished) -> Attempt | None:
        """Journal a finished attempt, report it, and stop the run if it was fatal; the
        attempt as journaled (long output as a preview, the whole in the blob store)."""
        attempt = finished.attempt
        if attempt is None:  # not started: the run had already stopped
            return None
        if self.journal is not None:
            attempt = self.journal.append(attempt)
        if finished.fatal:
            self.stop.set()
            raise RunStopped(
                attempt.error or "the executor cannot run",
                str(self.journal.path.parent) if self.journal else "",
            )
        if self.settings.progress is not None:
            self.settings.progress(attempt)
        meter = self.settings.meter
        if meter is not None and meter.add(attempt, own_charged=finished.charged):
            self.stop.set()  # queued jobs start nothing; running ones are refused requests
        if self.settings.stop_when is not None and self.settings.stop_when(attempt):
            self.stop.set()  # queued jobs start nothing (jobs.execute_job); none is cancelled
        return attempt

    def rejudge(self, attempts: Iterable[Attempt], tasks: Mapping[str, Task]) -> list[Attempt]:
        """Judge recorded attempts again through the backend, with `judge_attempt` (so with
        the same retries as a run), journaling each; nothing is executed. Attempts whose task
        left the suite are dropped; those that never produced work are kept as they were."""
        todo = [a for a in attempts if a.task_id in tasks]
        results = []
        with closing(
            self._map(lambda a: (a, self._rejudge_one(a, tasks[a.task_id])), todo)
        ) as judged:
            for old, new in judged:
                if new is not old and self.journal is not None:
                    new = self.journal.append(new)
                results.append(new)
        return results

    def _rejudge_one(self, old: Attempt, task: Task) -> Attempt:
        if old.status == "error" and old.judge is None:
            return old  # it never produced an output to judge
        try:
            judged = self.judge_attempt(old, task)
        except OSError as exc:  # its blob is gone or unreadable: say so, judge nothing
            judged = replace(
                old,
                status="error",
                judge=None,
                error=f"cannot rejudge: the recorded output is missing ({exc})",
            )
        return replace(judged, finished_at=now_iso())

    def judge_attempt(self, attempt: Attempt, task: Task) -> Attempt:
        """Judge an attempt's work: `jobs.judge_attempt` with this run's judges and context."""
        return judge_attempt(self.env, attempt, task)

    def _map(self, fn: Callable[[_In], _Out], items: Sequence[_In]) -> Generator[_Out, None, None]:
        """`fn` over `items` on the backend (see `_guarded`)."""
        return self._guarded(lambda: self.backend.map(fn, items), items)

    def _guarded(
        self, start: Callable[[], Iterator[_Out]], items: Sequence[Any]
    ) -> Generator[_Out, None, None]:
        """The results of `start()` (a backend's map over `items`); on any exit before the end
        (an error, Ctrl-C, a fatal result) nothing new starts and the executor is told to
        cancel what is running."""
        if not items:
            return
        self._env = None  # judges or settings may have changed since the last run
        results = start()
        try:
            yield from results
        except BaseException:  # GeneratorExit too: the driver stopped reading
            self.stop.set()
            self.backend.cancel()
            for executor in self.executors:
                executor.cancel()  # kill running subprocesses
            raise


def attempts_by(attempts: Iterable[Attempt], arm: ArmName) -> dict[str, list[Attempt]]:
    """An arm's attempts grouped by task, each list in attempt order."""
    out: dict[str, list[Attempt]] = {}
    for attempt in sorted(attempts, key=lambda a: (a.task_id, a.index)):
        if attempt.arm == arm:
            out.setdefault(attempt.task_id, []).append(attempt)
    return out
