"""Why an execution produced no output to judge, as one typed record: how the attempt ends
when no retry helps (an error, the output's own failure, or the run stops) and whether
trying again may help. The runner's whole decision reads from it (engine/jobs.py).

    ends_as   retry  recorded as         the runner
    error     no     error               keeps it; the run goes on
    error     yes    error (if no retry  tries again while --max-retries allows
                     heals it)
    failed    no     failed              counts it against the output: never excluded
    failed    yes    failed (if no retry tries again first (a timeout: the service may have
                     heals it)           been slow), then counts it against the output
    stop      -      error               keeps it and starts nothing more: every attempt of
                                         the run would end alike (bad key, unknown model)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# What an attempt is when no retry helps: an error (the harness's or the service's fault,
# excluded from pass rates), a failure of the output (an agent at its turn limit, an execution
# that outran its timeout: recorded `failed`, so an output cannot drop its task from both pass
# rates by misbehaving), or an error that stops the run.
EndsAs = Literal["error", "failed", "stop"]
ENDS_AS: tuple[EndsAs, ...] = ("error", "failed", "stop")


@dataclass(frozen=True)
class Failure:
    """Why an execution has no output to judge. `message` is the attempt's recorded `error`
    (or, for `failed`, the reason its judgement gives); `retry` says trying again may help
    (rate limits, overload, timeouts), `retry_after` how long the service asked to wait.
    What the service said the failure was (`error_type`) stays in the result's `meta`: it is
    the executor's record of how the attempt ran, written to the artifact as it is."""

    message: str
    ends_as: EndsAs = "error"
    retry: bool = False
    retry_after: float | None = None

    def __post_init__(self) -> None:
        if self.ends_as not in ENDS_AS:
            raise ValueError(f"Failure.ends_as must be one of {ENDS_AS}, not {self.ends_as!r}")
        if self.ends_as == "stop" and self.retry:
            raise ValueError("a Failure that stops the run is not retried")
        if self.retry_after is not None and not self.retry:
            raise ValueError("Failure.retry_after needs retry=True")

    @classmethod
    def transient(cls, message: str, *, after: float | None = None) -> Failure:
        """The service's passing fault (rate limit, overload, a dropped connection): retried,
        an error if no retry heals it."""
        return cls(message, "error", retry=True, retry_after=after)

    @classmethod
    def setup(cls, message: str) -> Failure:
        """No attempt of this run can succeed (bad credentials, unknown model, nobody
        listening): the attempt is an error and the run stops."""
        return cls(message, "stop")

    @classmethod
    def output(cls, message: str, *, retry: bool = False) -> Failure:
        """The output's own doing (a turn limit, a cap it went past; with `retry`, a timeout
        a slow service may have caused): recorded `failed`."""
        return cls(message, "failed", retry=retry)

    @property
    def status(self) -> Literal["error", "failed"]:
        """The attempt's recorded status when no retry heals it."""
        return "failed" if self.ends_as == "failed" else "error"

    @property
    def stops_run(self) -> bool:
        return self.ends_as == "stop"

    def retried(self, retries_left: bool) -> bool:
        """Whether the runner tries the attempt again, with `retries_left` under
        --max-retries."""
        return self.retry and retries_left

    def final(self) -> Failure:
        """This failure with no retry left in it (the retries were spent elsewhere)."""
        return Failure(self.message, self.ends_as)

    @classmethod
    def from_flags(
        cls,
        message: str,
        *,
        retryable: bool = False,
        fatal: bool = False,
        retry_after: float | None = None,
        output_caused: bool = False,
    ) -> Failure:
        """The failure the loose flags of `ExecutionResult` before this record meant (kept
        for plugin executors that still pass them: core/execution.py). `fatal` wins, as the
        runner checked it first; `retry_after` counts only with `retryable`."""
        if fatal:
            return cls.setup(message)
        return cls(
            message,
            "failed" if output_caused else "error",
            retry=retryable,
            retry_after=retry_after if retryable else None,
        )
