"""Whether anything listens at a model API's address. A closed port (a wrong --base-url, a
server not started) is a set-up error, like a 401: every attempt would be refused alike, so
the run stops at once with "nothing listens at URL" instead of retrying it as an outage.

Two checks: `probe`, a TCP connect before the first attempt (preflight, for a base URL the
user gave: the public APIs are not probed), and `FirstContact`, which classes a refused
connection as fatal until some request of the run has been answered (after that, a refusal
is the server going down mid-run: an outage, retried).
"""

from __future__ import annotations

import errno
import socket
import threading
from urllib.parse import urlsplit

PROBE_TIMEOUT = 3.0  # a connect that neither succeeds nor is refused is left to the run


def nothing_listens(url: str) -> str:
    return f"nothing listens at {url} (connection refused): start the server or fix the base URL"


def refused(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from, is a refused TCP connection (the
    SDKs wrap it: anthropic.APIConnectionError <- httpx.ConnectError <- ConnectionRefusedError)."""
    seen: BaseException | None = exc
    for _ in range(10):  # a chain is short; a cycle must not loop
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or (
            isinstance(seen, OSError) and seen.errno == errno.ECONNREFUSED
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def probe(url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """`nothing_listens(url)` when a TCP connect to the URL's host and port is refused; None
    when it connects, or fails otherwise (a name that does not resolve, a timeout: the run's
    own errors say more)."""
    parts = urlsplit(url)
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: the client says so
        return None
    if not host:
        return None
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except ConnectionRefusedError:
        return nothing_listens(url)
    except OSError:
        return None
    return None


class FirstContact:
    """Has any request of this run been answered (any status)? Until one has, a refused
    connection is fatal. Thread-safe."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._answered = threading.Event()

    def answered(self) -> None:
        self._answered.set()

    def fatal(self, exc: BaseException) -> str | None:
        """`nothing_listens(url)` when `exc` is a refusal and nothing has answered yet."""
        if self._answered.is_set() or not refused(exc):
            return None
        return nothing_listens(self.url)


__all__ = ["FirstContact", "nothing_listens", "probe", "refused"]
