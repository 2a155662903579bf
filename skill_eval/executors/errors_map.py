"""Which failed attempts are worth retrying, shared by the real executors.

Rate limits (429), overload (529), server errors (5xx), request timeouts (408), lock conflicts
(409), dropped connections and timeouts are the service's fault and may pass on a retry; other
4xx (bad request, authentication, permission, not found) will fail again the same way. Of
those, 401, 403 and 404 (bad key, no access, unknown model) are fatal: every attempt of the run
would get the same answer, so the run stops at the first.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping

from ..core.failure import Failure

RETRYABLE_STATUSES = frozenset({408, 409, 429})
FATAL_STATUSES = frozenset({401, 403, 404})

# Words the Anthropic API, the SDKs and Claude Code use for transient failures.
_TRANSIENT = re.compile(
    r"rate[ _-]?limit|overloaded|\b429\b|\b5\d\d\b|server[ _-]error|internal server|"
    r"api_error|timed? ?out|timeout|connection (?:error|reset|refused|closed|dropped)|"
    r"econnreset|econnrefused|socket hang up|service unavailable|bad gateway|"
    r"temporarily unavailable",
    re.IGNORECASE,
)


def retryable_status(status: int | None) -> bool:
    """True for HTTP statuses where trying again may help: 408, 409, 429 and every 5xx."""
    if status is None:
        return False
    return status in RETRYABLE_STATUSES or status >= 500


def fatal_status(status: int | None) -> bool:
    """True for statuses that say the run's set-up is wrong (credentials, model name)."""
    return status in FATAL_STATUSES


def status_failure(message: str, status: int | None, retry_after: float | None = None) -> Failure:
    """An HTTP error reply as a Failure: the run stops for 401/403/404, a retryable status is
    retried (after `retry_after` when the service asked), any other stays an error."""
    if fatal_status(status):
        return Failure.setup(message)
    if retryable_status(status):
        return Failure.transient(message, after=retry_after)
    return Failure(message)


def retryable_message(message: str | None) -> bool:
    """True when an error message reads like a transient failure (rate limit, overload, 5xx,
    timeout, dropped connection). Used only when no status code is available."""
    return bool(message) and _TRANSIENT.search(message or "") is not None


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date);
    None when absent or unreadable. Negative values become 0."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
