"""One OpenAI-compatible Chat Completions call over HTTP (httpx2), for the `openai` executor,
its grader and its text model: where to send it (`base_url`, `/chat/completions` below it),
the key (`Authorization: Bearer`, from the environment; none needed for a server on this
machine), and every failure classified as an error attempt: 429, 5xx, timeouts and dropped
connections retryable (with `retry-after`), 401/403/404 fatal, as is a refused connection
before any reply (reachability.py), a 200 that is not a completion malformed. Never an SDK:
the wire is small, and servers that call themselves compatible (Ollama, vLLM, llama.cpp) are
read tolerantly.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..core.failure import Failure
from ..core.model import ExecutionResult, Usage
from .errors_map import parse_retry_after, status_failure
from .reachability import FirstContact
from .tool_loop import failed

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_BODY_BYTES = 32 * 1024 * 1024  # a completion larger than this is refused, not read
MAX_BACKOFF_SECONDS = 30.0


def is_local(base_url: str) -> bool:
    """Whether the server runs on this machine (localhost or a loopback address): then no
    key is needed."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def usage_of(completion: Mapping[str, Any]) -> Usage:
    """A completion's usage in our terms: OpenAI's `prompt_tokens` count the cached ones
    too, which Usage keeps apart (`cache_read_input_tokens`)."""
    raw = completion.get("usage")
    if not isinstance(raw, Mapping):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    prompt = _count(raw.get("prompt_tokens"))
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=_count(raw.get("completion_tokens")),
        cache_read_input_tokens=cached,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def message_of(completion: Any) -> Mapping[str, Any] | None:
    """The first choice's message of a completion, or None when it is not a completion."""
    choices = completion.get("choices") if isinstance(completion, Mapping) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, Mapping) else None


def text_of(message: Mapping[str, Any]) -> str:
    """A message's text: `content` as a string, or its text parts joined (some servers)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text") or "") for p in content if isinstance(p, Mapping) and "text" in p
        )
    return ""


class ChatClient:
    """Posts Chat Completions bodies to one server. Thread-safe: one connection pool shared by
    all threads, made on first use. `max_retries` retries a retryable failure after its
    `retry-after` (else 0.5 s, 1 s, 2 s ..., at most MAX_BACKOFF_SECONDS): for graders and
    text models; the executor leaves retries to the runner (0)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        max_retries: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.max_retries = max_retries
        self.contact = FirstContact(base_url)
        self._sleep = sleep
        self._client: Any = None
        self._lock = threading.Lock()

    def _http(self) -> Any:
        import httpx2

        with self._lock:
            if self._client is None:
                self._client = httpx2.Client(headers=self.headers, follow_redirects=False)
            return self._client

    def complete(self, body: Mapping[str, Any], timeout: float) -> dict[str, Any] | ExecutionResult:
        """The completion (a JSON object with a message), or the classified failure."""
        deadline = time.monotonic() + timeout
        for attempt in range(self.max_retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            answer = self._post(body, left)
            if not isinstance(answer, ExecutionResult):
                return answer
            why = answer.failure
            if why is None or not why.retried(attempt < self.max_retries):
                return answer
            wait = why.retry_after if why.retry_after is not None else 0.5 * 2**attempt
            self._sleep(min(wait, MAX_BACKOFF_SECONDS, max(0.0, deadline - time.monotonic())))
        return failed(Failure.transient(f"timeout: no completion within {timeout:g}s"))

    def _post(self, body: Mapping[str, Any], timeout: float) -> dict[str, Any] | ExecutionResult:
        import httpx2

        try:
            with self._http().stream("POST", self.url, json=body, timeout=timeout) as response:
                self.contact.answered()  # a reply, whatever its status: someone listens
                data = _read_capped(response)
                status, headers = response.status_code, dict(response.headers)
        except httpx2.TimeoutException as exc:
            return failed(Failure.transient(f"timeout: {type(exc).__name__}"), error_type="timeout")
        except httpx2.HTTPError as exc:  # refused, reset, dropped mid-body, bad URL
            if (nobody := self.contact.fatal(exc)) is not None:
                return failed(Failure.setup(nobody), error_type="refused")
            why = f"{type(exc).__name__}: {exc}"
            return failed(Failure.transient(f"connection error: {why}"), error_type="connection")
        if data is None:
            return failed(
                Failure(f"malformed response: over {MAX_BODY_BYTES} bytes"), error_type="malformed"
            )
        if status != 200:
            return _status_failure(status, data, headers)
        try:
            completion = json.loads(data)
        except (ValueError, RecursionError) as exc:
            return failed(
                Failure.transient(f"malformed response: not JSON ({exc})"), error_type="malformed"
            )
        if message_of(completion) is None:
            return failed(
                Failure.transient(f"malformed response: not a chat completion: {data[:200]!r}"),
                error_type="malformed",
            )
        return dict(completion)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _read_capped(response: Any) -> bytes | None:
    """The body, or None when it is over MAX_BODY_BYTES (never read whole)."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _status_failure(status: int, data: bytes, headers: Mapping[str, str]) -> ExecutionResult:
    """An error reply as an error attempt: OpenAI's `{"error": {"message", "type", "code"}}`,
    or a server's own `{"error": "text"}` or plain text."""
    try:
        parsed: Any = json.loads(data)
    except (ValueError, RecursionError):
        parsed = None
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    if isinstance(error, Mapping):
        kind = error.get("code") or error.get("type")
        detail = str(error.get("message") or "")
    else:
        kind, detail = None, str(error) if error else data[:300].decode("utf-8", "replace")
    lowered = {k.lower(): v for k, v in headers.items()}
    return failed(
        status_failure(
            f"HTTP {status} {kind or 'error'}: {detail.strip()[:500]}",
            status,
            parse_retry_after(headers),
        ),
        status=status,
        error_type=str(kind) if kind else None,
        request_id=lowered.get("x-request-id"),
    )


__all__ = ["DEFAULT_BASE_URL", "ChatClient", "is_local", "message_of", "text_of", "usage_of"]
