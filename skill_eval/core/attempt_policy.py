"""`AttemptPolicy`: how the runner treats each attempt of a run, whatever runs it: how often
a transient failure is tried again (rate limits, 5xx, timeouts; a batch request too), the
backoff between tries, and where an executor's output is cut before judging. The one
record of these settings below the plan (`--max-retries`, `--max-output-bytes`)."""

from __future__ import annotations

from dataclasses import dataclass

from .blobs import DEFAULT_MAX_OUTPUT_BYTES

BACKOFF_BASE_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 60.0


@dataclass(frozen=True)
class AttemptPolicy:
    """Retries of a transient failure after the first try, the backoff's first delay and
    cap (a server's retry-after is honoured up to the cap), and the output cut (an output
    longer than `max_output_bytes` is cut, the cut marked; None: never)."""

    max_retries: int = 5
    backoff_base: float = BACKOFF_BASE_SECONDS
    backoff_cap: float = BACKOFF_CAP_SECONDS
    max_output_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES


__all__ = ["BACKOFF_BASE_SECONDS", "BACKOFF_CAP_SECONDS", "AttemptPolicy"]
