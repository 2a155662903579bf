"""Message Batches plumbing: many Messages requests sent as one batch (half price, run in
parallel by the service), polled with backoff until it ends, and its results read back by
`custom_id`. The SDK client is handed in (nothing here imports the SDK).

What a batch-mode executor needs from the runner travels in a `BatchLog`: the batch records
the run's journal already holds (so `--resume` polls the same batch instead of sending a new
one), a way to journal a new batch id the moment it exists (the runner's Journal writes it),
where to report the batch's counts, and how many follow-up batches a failed request gets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.attempt_policy import AttemptPolicy
from ..core.failure import Failure
from ..core.model import ExecutionResult
from ..errors import ExecutorError
from .errors_map import status_failure

BATCH_RECORD = "batch"  # the journal record kind of a sent batch (`Journal.note`)
# Error types a batch reports per request, as the HTTP status a direct call would have got.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def custom_id(arm: str, task_id: str, index: int) -> str:
    """The request's id in a batch: stable across processes (resume maps results back with
    it), within the API's 64 characters of [A-Za-z0-9_-] whatever the task id holds."""
    digest = hashlib.sha256(f"{arm}\0{task_id}\0{index}".encode()).hexdigest()
    return f"r{digest[:40]}"


@dataclass(frozen=True)
class BatchCounts:
    """A batch's processing status and request counts, as the service reports them."""

    batch_id: str
    status: str
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0

    @classmethod
    def of(cls, batch: Any) -> BatchCounts:
        counts = getattr(batch, "request_counts", None)
        return cls(
            str(batch.id),
            str(batch.processing_status),
            *(
                int(getattr(counts, name, 0) or 0)
                for name in ("processing", "succeeded", "errored", "canceled", "expired")
            ),
        )

    @property
    def ended(self) -> bool:
        return self.status == "ended"

    def describe(self) -> str:
        return (
            f"batch {self.batch_id}: {self.status}, {self.processing} processing, "
            f"{self.succeeded} succeeded, {self.errored} errored, "
            f"{self.canceled + self.expired} canceled or expired"
        )


@dataclass(frozen=True)
class Polling:
    """Seconds between polls: `first`, then times `factor` up to `cap` (a batch takes from
    seconds to hours; polling fast at first and slower later costs few requests either way)."""

    first: float = 0.5
    factor: float = 1.5
    cap: float = 60.0

    def delays(self) -> Iterator[float]:
        delay = self.first
        while True:
            yield delay
            delay = min(self.cap, delay * self.factor)


@dataclass
class BatchLog:
    """The runner's side of batch mode (see the module docstring). `note` journals a record
    at once; `sleep` waits (cut short when the run stops)."""

    records: Sequence[Mapping[str, Any]] = ()
    note: Callable[[dict[str, Any]], None] = lambda record: None
    status: Callable[[BatchCounts], None] | None = None
    attempts: AttemptPolicy = field(default_factory=AttemptPolicy)  # the run's --max-retries
    sleep: Callable[[float], None] = field(default=lambda seconds: None)
    polling: Polling = field(default_factory=Polling)


def request_failure(error_type: str | None, message: str, **meta: Any) -> ExecutionResult:
    """A batch request's error as an error attempt, classified as a direct call's would be."""
    status = _ERROR_STATUS.get(error_type or "", 500)
    return ExecutionResult(
        failure=status_failure(f"batch request {error_type or 'error'}: {message}", status),
        meta={"status": status, "error_type": error_type, **meta},
    )


def outcome(result: Any, batch_id: str) -> Any:
    """One result line: the Message when it succeeded, else an error ExecutionResult."""
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        return result.message
    if kind == "errored":
        inner = getattr(getattr(result, "error", None), "error", None)
        return request_failure(
            getattr(inner, "type", None),
            str(getattr(inner, "message", "") or "no message"),
            batch_id=batch_id,
        )
    # canceled or expired (24 hours passed): the service's doing, worth another batch
    return ExecutionResult(
        failure=Failure.transient(f"batch request {kind}"),
        meta={"error_type": kind, "batch_id": batch_id},
    )


class BatchSession:
    """Create, poll and read batches through an `anthropic.Anthropic` client. A call that
    fails for the service's reasons is tried again (up to `log.attempts.max_retries`); one
    that cannot succeed raises ExecutorError: the run cannot go on in batch mode."""

    def __init__(
        self, client: Any, log: BatchLog, classify: Callable[[BaseException], ExecutionResult]
    ) -> None:
        self.client, self.log, self.classify = client, log, classify

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        delays = Polling(first=1.0, factor=2.0, cap=30.0).delays()
        tries = 0
        while True:
            tries += 1
            try:
                return fn()
            except Exception as exc:  # SDK errors: classified like an attempt's
                why = self.classify(exc).failure or Failure(str(exc))
                if not why.retried(tries <= self.log.attempts.max_retries):
                    raise ExecutorError(f"Message Batches: {what}: {why.message}") from None
                self.log.sleep(why.retry_after if why.retry_after is not None else next(delays))

    def create(self, requests: Mapping[str, Mapping[str, Any]]) -> str:
        """Send one batch; its id."""
        batch = self._call(
            "create",
            lambda: self.client.messages.batches.create(
                requests=[
                    {"custom_id": cid, "params": dict(params)} for cid, params in requests.items()
                ]
            ),
        )
        return str(batch.id)

    def wait(self, batch_id: str) -> BatchCounts | None:
        """Poll until the batch ends (backing off), reporting its counts at each poll; None
        when the service no longer knows it (deleted, archived, another workspace)."""
        for delay in self.log.polling.delays():
            try:
                batch = self._call(
                    "retrieve", lambda: self.client.messages.batches.retrieve(batch_id)
                )
            except ExecutorError as exc:
                if "HTTP 404" in str(exc):
                    return None
                raise
            counts = BatchCounts.of(batch)
            if self.log.status is not None:
                self.log.status(counts)
            if counts.ended:
                return counts
            self.log.sleep(delay)
        raise AssertionError("unreachable: delays() never ends")

    def results(self, batch_id: str) -> dict[str, Any]:
        """custom_id -> Message or error ExecutionResult, for every request of an ended batch."""
        lines = self._call("results", lambda: list(self.client.messages.batches.results(batch_id)))
        return {str(line.custom_id): outcome(line.result, batch_id) for line in lines}


def send_all(
    session: BatchSession,
    kind: str,
    params: Mapping[str, Mapping[str, Any]],
    note: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every request of `params` (custom_id -> Messages params) through batches: first the
    batches of this `kind` the journal already names (resume), then new ones for what is
    left, each journaled the moment it exists (with `note`'s extra fields), and follow-ups for
    requests that failed in a way a retry may heal, at most `max_retries` each. Returns
    custom_id -> (Message, batch id), or the error ExecutionResult it ended with (not
    retryable any more)."""
    log = session.log
    pending = dict(params)
    done: dict[str, Any] = {}
    tries: dict[str, int] = {}
    last: dict[str, ExecutionResult] = {}

    def collect(batch_id: str, sent: Sequence[str]) -> bool:
        if session.wait(batch_id) is None:
            return False
        results = session.results(batch_id)
        for cid in [c for c in sent if c in pending]:
            got = results.get(cid)
            if got is None:  # an ended batch that does not list a request: a failed try
                got = ExecutionResult(
                    failure=Failure.transient(f"batch {batch_id} has no result for this request")
                )
            if isinstance(got, ExecutionResult) and got.failure and got.failure.retry:
                tries[cid] = tries.get(cid, 0) + 1
                last[cid] = got
                continue
            done[cid] = got if isinstance(got, ExecutionResult) else (got, batch_id)
            del pending[cid]
        return True

    earlier = [r for r in log.records if r.get("record") == kind]
    for record in earlier:  # batches an earlier process of this run sent (resume)
        if any(cid in pending for cid in record.get("custom_ids", ())):
            collect(str(record.get("batch_id")), [str(c) for c in record["custom_ids"]])
    rounds = len(earlier)
    while todo := [cid for cid in pending if tries.get(cid, 0) <= log.attempts.max_retries]:
        batch_id = session.create({cid: pending[cid] for cid in todo})
        rounds += 1
        log.note(
            {
                "record": kind,
                "batch_id": batch_id,
                "round": rounds,
                "custom_ids": todo,
                **(note or {}),
            }
        )
        if not collect(batch_id, todo):  # the service lost a batch it just made: a try
            for cid in todo:
                tries[cid] = tries.get(cid, 0) + 1
                gone = Failure.transient(f"batch {batch_id} is gone")
                last[cid] = ExecutionResult(failure=gone)
    for cid in pending:  # out of retries: the last error stands
        spent = last[cid].failure
        done[cid] = replace(last[cid], failure=spent.final() if spent else None)
    return done


__all__ = [
    "BATCH_RECORD",
    "BatchCounts",
    "BatchLog",
    "BatchSession",
    "Polling",
    "custom_id",
    "outcome",
    "request_failure",
    "send_all",
]
