"""One attempt as a unit of work: a picklable `AttemptJob` (task, arm, sample index, and the
`RunSpec` that says how to rebuild the run's executor and judges in any process),
`execute_job(env, job) -> Finished`, which executes it with the live objects of an
`AttemptEnv` (retries, judging, the workspace), and the module-level `run_attempt(job)` that
does the same in any process, with an environment built from the job's spec. Neither writes
anything: the driver (engine/runner.py) journals what they return.

Which one runs is the backend's business (backends/): `threads` runs every job with the
driver's own environment (the executor a test built, the judges the caller passed); `ray`
ships the jobs and each worker builds its environment from the spec. No table of live
environments is kept anywhere.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.attempt_policy import AttemptPolicy
from ..core.blobs import measure
from ..core.budget import Budget
from ..core.execution import SKILL_META
from ..core.failure import Failure
from ..core.model import (
    Arm,
    Attempt,
    ExecutionRequest,
    ExecutionResult,
    JudgeResult,
    Task,
    Usage,
    status_of,
)
from ..core.paths import safe_component
from ..core.task_files import expand_task_files
from ..core.transcript import transcript_problem
from ..core.work import Work
from ..core.workspace import (
    KEEP_MAX_BYTES,
    AttemptWorkspace,
    KeepPolicy,
    KeptWorkspace,
    keeps,
    preserve,
    rehomed,
)
from ..executors.base import ExecutorBase, create_executor
from ..judges.base import (
    Judge,
    JudgeContext,
    build_judge,
    run_judge,
    traceback_tail,
)
from ..judges.llm import JudgeSettings
from ..judges.observers import observe
from .attempt_store import CACHED_FROM
from .requests import request_of


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class WorkspaceSettings:
    """Where attempts' workspaces are made (None: the temp dir), which final workspaces are
    kept after judging (none, failed: not passed, all), where kept ones go (`<run>/workspaces`
    as <arm>/<task>/<index>/; None: they stay where they were made) and their size cap."""

    keep: KeepPolicy = "none"
    parent: Path | None = None
    keep_root: Path | None = None
    keep_max_bytes: int = KEEP_MAX_BYTES


@dataclass(frozen=True)
class RunSpec:
    """What any process needs to run a job of one run: the executor by registry name with its
    own config (None: the run only judges), the judging settings, the attempt policy
    (retries, backoff, output cut) and workspaces.
    `key` names the run (a backend that ships jobs packs one bundle of files per run)."""

    key: str
    executor: str | None
    executor_config: Any
    judging: JudgeSettings
    attempts: AttemptPolicy = field(default_factory=AttemptPolicy)
    workspaces: WorkspaceSettings = field(default_factory=WorkspaceSettings)
    # Arms run by another executor than `executor` (--arm): arm name -> (name, its config).
    arm_executors: Mapping[str, tuple[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class AttemptJob:
    """One execution of `task` with `arm`, sample `index`; `run` says how to rebuild the
    run's executor and judges (set by the runner before the job is shipped)."""

    arm: Arm
    task: Task
    index: int
    run: RunSpec | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.arm.name, self.task.id, self.index)


@dataclass(frozen=True)
class Finished:
    """What `run_attempt` returns: the attempt (None when it was not started because the run
    had stopped, or its budget was spent), whether the executor said no attempt of this run
    can succeed, and whether the attempt's own spending (every try's) was charged to the
    run's budget where it ran (False: the driver charges it when it records the attempt)."""

    attempt: Attempt | None
    fatal: bool = False
    charged: bool = False


class AttemptEnv:
    """The live objects jobs of one run use in this process: executor (and the executors of
    arms another one runs, by arm name), judges (by task id; built from the task's config
    when absent), judge context, attempt policy (retries, output cut), and a stop event that
    cuts backoff waits short and keeps queued jobs from starting, and the run's budget (None:
    no cap, or a process that does not hold it), which each try's spending is charged to."""

    def __init__(
        self,
        executor: ExecutorBase | None,
        judges: Mapping[str, Judge] | None,
        ctx: JudgeContext,
        policy: AttemptPolicy,
        *,
        workspaces: WorkspaceSettings | None = None,
        sleep: Callable[[float], None] | None = None,
        stop: threading.Event | None = None,
        arm_executors: Mapping[str, ExecutorBase] | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.executor, self.ctx, self.policy, self.budget = executor, ctx, policy, budget
        self.arm_executors = dict(arm_executors or {})
        self.judges: dict[str, Judge] = dict(judges or {})
        self.workspaces = workspaces or WorkspaceSettings()
        self.sleep_fn = sleep
        self.stop = stop or threading.Event()
        self._lock = threading.Lock()

    def executor_for(self, arm: str) -> ExecutorBase | None:
        """The executor that runs `arm`'s attempts."""
        return self.arm_executors.get(arm, self.executor)

    def judge_for(self, task: Task) -> Judge:
        with self._lock:
            if task.id not in self.judges:
                self.judges[task.id] = build_judge(task.judge)
            return self.judges[task.id]

    def sleep(self, seconds: float) -> None:
        if self.sleep_fn is not None:
            self.sleep_fn(seconds)
        else:
            self.stop.wait(seconds)

    def backoff(self, tries: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.policy.backoff_cap)
        delay = self.policy.backoff_base * 2.0 ** (tries - 1)
        return min(delay, self.policy.backoff_cap) * (0.5 + random.random() / 2)

    def retrying(self, tries: int) -> bool:
        return not self.stop.is_set() and not self.spent() and tries <= self.policy.max_retries

    def spent(self) -> bool:
        """Whether the run's budget refuses any further model request."""
        return self.budget is not None and self.budget.refusal() is not None

    def close(self) -> None:
        """Close what an environment built for one job opened (its judge-cache handle)."""
        if self.ctx.cache is not None:
            self.ctx.cache.close()


def build_environment(spec: RunSpec) -> AttemptEnv:
    """A new environment for a job of run `spec`, built from the registries (executor,
    judges, judge context): what a process other than the driver's runs a job with."""
    executor = create_executor(spec.executor, spec.executor_config) if spec.executor else None
    built: list[tuple[tuple[str, Any], ExecutorBase]] = []  # arms of one config share one

    def build(setup: tuple[str, Any]) -> ExecutorBase:
        found = next((e for s, e in built if s == setup), None)  # configs compare, not hash
        if found is None:
            found = create_executor(*setup)
            built.append((setup, found))
        return found

    return AttemptEnv(
        executor,
        None,
        spec.judging.context(),
        spec.attempts,
        workspaces=spec.workspaces,
        arm_executors={arm: build(setup) for arm, setup in spec.arm_executors.items()},
    )


def run_attempt(job: AttemptJob) -> Finished:
    """Run one job in whatever process this is, with an environment of its own built from
    the job's spec (the unit a backend that ships jobs maps)."""
    if job.run is None:
        raise ValueError("a job needs its run spec to run outside the runner")
    env = build_environment(job.run)
    try:
        return execute_job(env, job)
    finally:
        env.close()


def execute_job(env: AttemptEnv, job: AttemptJob) -> Finished:
    """Execute (with retries), snapshot the workspace, judge, and finish the workspace."""
    if env.stop.is_set() or env.spent():  # queued before the run stopped: start nothing new
        return Finished(None)
    started_at = now_iso()
    executor = env.executor_for(job.arm.name)
    # An executor that works in a directory declares it; an agent task always has one (only
    # executors that can act are allowed to run it).
    uses_workspace = executor is not None and (executor.uses_workspace or job.task.is_agent_task)
    workspace = AttemptWorkspace.create(env.workspaces.parent) if uses_workspace else None
    start = time.monotonic()
    attempt: Attempt | None = None
    try:
        missing = _copy_in(env, workspace, job.task)
        request = request_of(job, workspace.path if workspace else None)
        result, tries = (
            (ExecutionResult(failure=Failure(missing)), 0)
            if missing
            else _execute(env, executor, request)
        )
        failure = result.failure
        # Encoded and hashed once; cut (and marked) past --max-output-bytes: not an error.
        output, output_ref = measure(result.output, env.policy.max_output_bytes)
        attempt = Attempt(
            arm=job.arm.name,
            task_id=job.task.id,
            index=job.index,
            status="error",
            output=output,
            output_ref=output_ref,
            judge=None,
            error=failure.message if failure else None,
            duration_ms=0,
            tries=tries,
            usage=result.usage,
            cost_usd=result.cost_usd,
            started_at=started_at,
            transcript=result.transcript,
            files=workspace.snapshot() if workspace else None,
            meta=_meta(result, request),
        )
        if failure is None:
            attempt = judge_attempt(env, attempt, job.task)
        elif failure.status == "failed":  # the output's own doing: a failure, never excluded
            attempt = replace(
                attempt,
                status="failed",
                error=None,
                judge=JudgeResult(
                    False,
                    0.0,
                    f"counted as a failure: {failure.message}",
                    data={"output_caused": True},
                ),
            )
        duration_ms = int((time.monotonic() - start) * 1000)
        attempt = replace(attempt, duration_ms=duration_ms)
        if job.task.observers:  # non-gating, read while the workspace still exists
            attempt = replace(attempt, observations=observe(job.task, attempt, env.ctx))
    finally:  # judged (or failed): the workspace has served its purpose
        kept = _finish_workspace(env, workspace, job, attempt)
    meta = {**attempt.meta, "workspace": kept.meta()} if kept else attempt.meta
    attempt = replace(
        attempt,
        duration_ms=duration_ms,
        finished_at=now_iso(),
        meta=meta,
        files=rehomed(attempt.files, kept.path if kept else None),
    )
    stops = failure is not None and failure.stops_run
    if stops:  # no attempt of this run can succeed: nothing else starts here
        env.stop.set()
    return Finished(attempt, fatal=stops, charged=env.budget is not None)


def _copy_in(env: AttemptEnv, workspace: AttemptWorkspace | None, task: Task) -> str | None:
    """Copy the task's input files in before the agent starts; why not, when they cannot be
    (changed on disk since the suite was validated)."""
    if workspace is None or not task.files:
        return None
    try:
        workspace.copy_in(expand_task_files(task.files, env.ctx.suite_dir))
    except (OSError, ValueError) as exc:
        return f"task {task.id!r}: cannot copy its input files: {exc}"
    return None


def _finish_workspace(
    env: AttemptEnv, workspace: AttemptWorkspace | None, job: AttemptJob, attempt: Attempt | None
) -> KeptWorkspace | None:
    """Keep the final workspace (per --keep-workspaces) or delete it."""
    if workspace is None:
        return None
    status = attempt.status if attempt is not None else "error"
    if not keeps(env.workspaces.keep, status):
        workspace.finish(keep=False)
        return None
    if env.workspaces.keep_root is None:
        return KeptWorkspace(workspace.path)
    dest = kept_workspace_dir(env.workspaces.keep_root, job.arm.name, job.task.id, job.index)
    return preserve(workspace, dest, env.workspaces.keep_max_bytes)


def kept_workspace_dir(keep_root: Path, arm: str, task_id: str, index: int) -> Path:
    """`<keep_root>/<arm>/<task>/<index>`: where an attempt's final workspace is kept."""
    return keep_root / safe_component(arm) / safe_component(task_id) / str(index)


def _meta(result: ExecutionResult, request: ExecutionRequest) -> dict[str, Any]:
    """The attempt's record of how it ran: the executor's notes, and for an attempt that
    watched for its skill (`stop_on_skill`) which skill that was, so its judge (and a later
    rejudge of the journal) knows whose invocation counts."""
    meta = dict(result.meta)
    meta.pop(CACHED_FROM, None)  # only the baseline cache marks an attempt as drawn from it
    if request.settings.stop_on_skill and request.skill is not None:
        meta[SKILL_META] = request.skill.name
    return meta


def judge_attempt(env: AttemptEnv, attempt: Attempt, task: Task) -> Attempt:
    """Judge an attempt's work (retrying transient judge errors) and set its judgement, error
    and status. The one way an attempt is judged: by a run and by `rejudge` alike. Work over
    the files skill-eval reads (its snapshot's `problem`, a cut transcript) fails unjudged."""
    over = (attempt.files.problem if attempt.files is not None else None) or transcript_problem(
        attempt.transcript
    )
    if over:  # the agent's doing: a failure, nothing read
        judge = JudgeResult(False, 0.0, over, data={"over_limit": True})
    else:
        judge = _judge(env, task, attempt.load_work())
    error = f"judge error: {judge.error}" if judge.error else None  # not the skill's fault
    return replace(attempt, judge=judge, error=error, status="error" if error else status_of(judge))


def _execute(
    env: AttemptEnv, executor: ExecutorBase | None, request: ExecutionRequest
) -> tuple[ExecutionResult, int]:
    """Run the task, retrying what is not the skill's fault: (result, tries). The result
    carries what every try cost (a try that failed was paid for too), each try charged to
    the run's budget unless its executor charged it reply by reply."""
    tries, usage, cost = 0, Usage(), 0.0
    while True:
        tries += 1
        try:
            if executor is None:
                raise RuntimeError("this runner only judges; it has no executor")
            result = executor.run(request)
        except Exception as exc:
            # A bug in the executor: the same input raises again, so it is not retried.
            crash = f"executor crashed: {type(exc).__name__}: {exc}\n{traceback_tail(exc)}"
            result = ExecutionResult(failure=Failure(crash))
        if env.budget is not None and not result.charged:
            env.budget.charge(result.cost_usd, result.usage.total)
        usage, cost = usage + result.usage, cost + result.cost_usd
        result = replace(result, usage=usage, cost_usd=cost)
        failure = result.failure
        if failure is None or not failure.retried(env.retrying(tries)):
            return result, tries
        env.sleep(env.backoff(tries, failure.retry_after))


def _judge(env: AttemptEnv, task: Task, work: Work) -> JudgeResult:
    """Judge one attempt's work; a transient judge error (as the judge classifies it) is
    retried on the same work (the model is not asked again); a permanent one is kept at once."""
    tries = 0
    while True:
        tries += 1
        judge = run_judge(env.judge_for(task), task, work, env.ctx)
        if not judge.transient or not env.retrying(tries):
            return judge
        env.sleep(env.backoff(tries, None))
