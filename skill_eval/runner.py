"""Runs arms × tasks × attempts on one bounded pool, retries what is not the skill's fault and
may heal (as the executor or judge classifies it), stops the run on an executor result marked
fatal, and journals every attempt as it finishes. Concurrency lives here and nowhere else.

Jobs are interleaved (task 0 candidate, task 0 baseline, task 1 candidate, ...) so that a slow
hour or a warm cache favours neither arm. The journal (`attempts.jsonl`) gets one line per
finished attempt, flushed and fsynced, so a run killed half way can be resumed: a torn last
line is ignored, and attempts that ended in error are run again.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TypeVar

from .errors import RunStopped
from .executors.base import ExecutorBase
from .judges.base import Judge, JudgeContext, run_judge, traceback_tail
from .model import (
    Arm,
    ArmName,
    Attempt,
    ExecutionRequest,
    ExecutionResult,
    JudgeResult,
    Task,
    clean_text,
    status_of,
)
from .work import Work
from .workspace import AttemptWorkspace, detached

JOURNAL_NAME = "attempts.jsonl"
BACKOFF_BASE_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 60.0
_In = TypeVar("_In")


@dataclass(frozen=True)
class Job:
    arm: Arm
    task: Task
    index: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.arm.name, self.task.id, self.index)


@dataclass
class RunSettings:
    concurrency: int = 8
    max_retries: int = 5
    backoff_base: float = BACKOFF_BASE_SECONDS
    backoff_cap: float = BACKOFF_CAP_SECONDS
    progress: Callable[[Attempt], None] | None = None
    sleep: Callable[[float], None] | None = None  # injectable for tests; default waits on stop
    keep_workspaces: bool = False  # keep each attempt's workspace after judging
    workspace_parent: Path | None = None  # where workspaces are made (default: the temp dir)


def plan_jobs(arms: Sequence[Arm], tasks: Sequence[Task], samples: int) -> list[Job]:
    """Every arm runs every task `samples` times, interleaved across arms."""
    return [Job(arm, task, i) for i in range(samples) for task in tasks for arm in arms]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Journal:
    """Append-only JSON-lines record of finished attempts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._handle: IO[str] | None = None

    def read(self) -> list[Attempt]:
        """Attempts already recorded; a torn or corrupt line (a kill mid-write) is skipped."""
        if not self.path.exists():
            return []
        attempts: dict[tuple[str, str, int], Attempt] = {}
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    attempt = Attempt.from_dict(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    continue
                attempts[(attempt.arm, attempt.task_id, attempt.index)] = attempt
        return list(attempts.values())

    def append(self, attempt: Attempt) -> None:
        line = json.dumps(attempt.to_dict(), ensure_ascii=False) + "\n"
        with self._lock:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.path.open("a", encoding="utf-8")
                self._repair_tail()
            self._handle.write(line)
            self._handle.flush()
            try:
                os.fsync(self._handle.fileno())
            except OSError:
                pass

    def _repair_tail(self) -> None:
        # A kill mid-write can leave a line without its newline; start ours on a fresh line.
        if self._handle is None:
            return
        size = self.path.stat().st_size
        if size:
            with self.path.open("rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    self._handle.write("\n")

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


class Runner:
    """Executes jobs with one executor and per-task judges (no executor: it only judges)."""

    def __init__(self, executor: ExecutorBase | None, judges: Mapping[str, Judge],
                 ctx: JudgeContext, journal: Journal, settings: RunSettings) -> None:
        self.executor = executor
        self.judges = judges
        self.ctx = ctx
        self.journal = journal
        self.settings = settings
        self.stop = threading.Event()
        self._stopped: RunStopped | None = None  # why an executor stopped the run

    def run(self, jobs: Iterable[Job], done: Iterable[Attempt] = ()) -> list[Attempt]:
        """Run the jobs not already in `done` (passed/failed attempts are kept, errors rerun)."""
        kept = {(a.arm, a.task_id, a.index): a for a in done if a.status != "error"}
        todo = [job for job in jobs if job.key not in kept]
        return list(kept.values()) + self._map(self._run_job, todo)

    def rejudge(self, attempts: Iterable[Attempt], tasks: Mapping[str, Task]) -> list[Attempt]:
        """Judge recorded attempts again on the same pool, through `judge_attempt` (so with
        the same retries as a run), journaling each; nothing is executed. Attempts whose task
        left the suite are dropped; those that never produced work are kept as they were."""
        todo = [a for a in attempts if a.task_id in tasks]
        return self._map(lambda old: self._rejudge_one(old, tasks[old.task_id]), todo)

    def _rejudge_one(self, old: Attempt, task: Task) -> Attempt:
        if old.status == "error" and old.judge is None:
            return old  # it never produced an output to judge
        new = replace(self.judge_attempt(old, task), finished_at=now_iso())
        self.journal.append(new)
        return new

    def _map(self, fn: Callable[[_In], Attempt], items: Sequence[_In]) -> list[Attempt]:
        """`fn` over `items` on a bounded pool (in flight: twice the concurrency)."""
        results: list[Attempt] = []
        if not items:
            return results
        pool = ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency),
                                  thread_name_prefix="skill-eval")
        pending: set[Future[Attempt]] = set()
        queue = iter(items)
        try:
            for item in queue:
                pending.add(pool.submit(fn, item))
                if len(pending) >= self.settings.concurrency * 2:
                    break
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    results.append(future.result())
                for item in queue:
                    pending.add(pool.submit(fn, item))
                    if len(pending) >= self.settings.concurrency * 2:
                        break
        except BaseException:
            self.stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            if self.executor is not None:
                self.executor.cancel()  # kill running subprocesses
            raise
        pool.shutdown(wait=True)
        return results

    def _sleep(self, seconds: float) -> None:
        if self.settings.sleep is not None:
            self.settings.sleep(seconds)
        else:
            self.stop.wait(seconds)

    def _backoff(self, tries: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.settings.backoff_cap)
        delay = self.settings.backoff_base * (2 ** (tries - 1))
        return min(delay, self.settings.backoff_cap) * (0.5 + random.random() / 2)

    @property
    def _uses_workspace(self) -> bool:
        # An executor that works in a directory declares it (ExecutorBase.uses_workspace).
        return self.executor is not None and self.executor.uses_workspace

    def _run_job(self, job: Job) -> Attempt:
        if self._stopped is not None:  # queued before the run stopped: start nothing new
            raise self._stopped
        started_at = now_iso()
        workspace = AttemptWorkspace.create(self.settings.workspace_parent) \
            if self._uses_workspace else None
        start = time.monotonic()
        try:
            result, tries = self._execute(job, workspace.path if workspace else None)
            attempt = Attempt(
                arm=job.arm.name, task_id=job.task.id, index=job.index, status="error",
                output=result.output, judge=None, error=result.error, duration_ms=0,
                tries=tries, usage=result.usage, cost_usd=result.cost_usd,
                started_at=started_at, transcript=result.transcript,
                files=workspace.snapshot() if workspace else None, meta=dict(result.meta))
            if not result.error:
                attempt = self.judge_attempt(attempt, job.task)
            elif result.output_caused:  # the output's own doing: a failure, never excluded
                attempt = replace(attempt, status="failed", error=None, judge=JudgeResult(
                    False, 0.0, f"counted as a failure: {result.error}",
                    data={"output_caused": True}))
            duration_ms = int((time.monotonic() - start) * 1000)
        finally:  # judged (or failed): the workspace has served its purpose
            kept = workspace.finish(keep=self.settings.keep_workspaces) if workspace else None
        attempt = replace(attempt, duration_ms=duration_ms, finished_at=now_iso(),
                          files=attempt.files if kept else detached(attempt.files))
        self.journal.append(attempt)
        if result.fatal:  # no attempt of this run can succeed: stop at the first one
            self._stopped = self._stopped or RunStopped(result.error or "the executor cannot run",
                                                        str(self.journal.path.parent))
            self.stop.set()
            raise self._stopped
        if self.settings.progress is not None:
            self.settings.progress(attempt)
        return attempt

    def judge_attempt(self, attempt: Attempt, task: Task) -> Attempt:
        """Judge an attempt's work (retrying judge errors) and set its judgement, error and
        status. The one way an attempt is judged: by a run and by `rejudge` alike."""
        judge = self._judge(task, attempt.work)
        error = f"judge error: {judge.error}" if judge.error else None  # not the skill's fault
        return replace(attempt, judge=judge, error=error,
                       status="error" if error else status_of(judge))

    def _retrying(self, tries: int) -> bool:
        return not self.stop.is_set() and tries <= self.settings.max_retries

    def _execute(self, job: Job, workspace: Path | None) -> tuple[ExecutionResult, int]:
        """Run the task, retrying what is not the skill's fault: (result, tries)."""
        request = ExecutionRequest(task=job.task, arm=job.arm.name, attempt=job.index,
                                   skill=job.arm.skill, timeout_seconds=job.task.timeout_seconds,
                                   workspace=workspace)
        tries = 0
        while True:
            tries += 1
            try:
                if self.executor is None:
                    raise RuntimeError("this runner only judges; it has no executor")
                result = self.executor.run(request)
            except Exception as exc:
                # A bug in the executor: the same input raises again, so it is not retried.
                result = ExecutionResult(error=f"executor crashed: {type(exc).__name__}: {exc}"
                                               f"\n{traceback_tail(exc)}")
            result = replace(result, output=clean_text(result.output))
            if result.fatal:
                return result, tries
            if not result.error or not result.retryable or not self._retrying(tries):
                return result, tries
            self._sleep(self._backoff(tries, result.retry_after))

    def _judge(self, task: Task, work: Work) -> JudgeResult:
        """Judge one attempt's work; a transient judge error (as the judge classifies it) is
        retried on the same work (the model is not asked again); a permanent one is kept at
        once."""
        tries = 0
        while True:
            tries += 1
            judge = run_judge(self.judges[task.id], task, work, self.ctx)
            if not judge.transient or not self._retrying(tries):
                return judge
            self._sleep(self._backoff(tries, None))


def attempts_by(attempts: Iterable[Attempt], arm: ArmName) -> dict[str, list[Attempt]]:
    """An arm's attempts grouped by task, each list in attempt order."""
    out: dict[str, list[Attempt]] = {}
    for attempt in sorted(attempts, key=lambda a: (a.task_id, a.index)):
        if attempt.arm == arm:
            out.setdefault(attempt.task_id, []).append(attempt)
    return out
