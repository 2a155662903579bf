"""`anthropic`: runs each attempt as a Messages API call through the official SDK.

The skill goes in the system prompt as a text block marked for prompt caching (`system` mode,
so k attempts and many tasks reuse it) or before the task in the user message (`prepend`).
A skill whose folder holds more than SKILL.md comes with the list of its files and the
read-only `read_skill_file` tool (skills/files.py), answered here in a bounded tool loop; its
calls are the attempt's transcript. A one-file skill, and no skill, send no tool.
The SDK's own retries are off: the runner retries with backoff, so every failure comes back
classified (`retryable`, `retry_after`). The SDK is imported on first use, never at start-up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.failure import Failure
from ..core.model import ExecutionRequest, ExecutionResult, Task, Usage
from ..errors import ExecutorError
from ..skills.files import READ_TOOL, TOOL_NAME, SkillFolder, skill_folder
from .adaptive import AimdController, CallGate
from .base import (
    DEFAULT_MODEL,
    ExecutorBase,
    ExecutorConfig,
    compose_prompt,
    env_lookup,
)
from .errors_map import parse_retry_after, status_failure
from .pricing import PriceTable, load_price_table
from .reachability import FirstContact, probe
from .request_frame import RequestFrame
from .tool_loop import ModelTurn, ToolAnswer, ToolUse, converse, failed

MISSING_KEY = "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=... or use --mock"
SUPPORTED_MODES = ("system", "prepend")


@dataclass(frozen=True)
class AnthropicConfig(ExecutorConfig):
    max_tokens: int = 4096
    temperature: float | None = None
    base_url: str | None = None
    price_file: Path | None = None
    env: Mapping[str, str] | None = None  # read before the process environment (API key...)
    # Requests per attempt when the model reads skill files; the last one offers no more calls.
    max_tool_turns: int = 10
    # Send attempts through the Message Batches API (anthropic_batch.py), at half price.
    batch: bool = False
    # Calls at once at most (the run's --concurrency); set, calls pass an adaptive gate
    # (executors/adaptive.py) unless `adaptive_concurrency` is off. None: no gate (the caller's
    # pool).
    concurrency: int | None = None
    adaptive_concurrency: bool = True


def classify_exception(exc: BaseException) -> ExecutionResult:
    """Translate an SDK or transport exception into an error attempt.

    Status errors: 408/409/429/5xx/529 are retryable (with `retry-after` when sent), other 4xx
    are not, and 401/403/404 (bad key, no access, unknown model) stop the run. Connection
    errors, timeouts and bodies that are not a Message are retryable.
    """
    import anthropic  # already imported by whoever raised `exc`

    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        body_error = exc.body.get("error") if isinstance(exc.body, Mapping) else None
        err_type = body_error.get("type") if isinstance(body_error, Mapping) else None
        detail = (
            body_error.get("message") if isinstance(body_error, Mapping) else None
        ) or exc.message
        retry_after = parse_retry_after(dict(exc.response.headers))
        return failed(
            status_failure(f"HTTP {status} {err_type or 'error'}: {detail}", status, retry_after),
            status=status,
            error_type=err_type,
            request_id=getattr(exc, "request_id", None),
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return failed(Failure.transient(f"timeout: {exc.message}"), error_type="timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        why = f"{exc.message} ({type(cause).__name__}: {cause})" if cause else exc.message
        return failed(Failure.transient(f"connection error: {why}"), error_type="connection")
    if isinstance(exc, anthropic.APIResponseValidationError | ValueError):
        # json.JSONDecodeError is a ValueError: a 200 whose body is not JSON.
        return failed(
            Failure.transient(f"malformed response: {type(exc).__name__}: {exc}"),
            error_type="malformed",
        )
    return failed(Failure(f"{type(exc).__name__}: {exc}"), error_type="unexpected")


def _message_text(message: Any) -> str | None:
    """The text blocks of a Message joined, or None when it does not look like a Message."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return None
    parts = [
        getattr(block, "text", "") or ""
        for block in content
        if getattr(block, "type", None) == "text"
    ]
    return "".join(parts)


def _usage_of(message: Any) -> Usage:
    usage = getattr(message, "usage", None)
    if usage is None:
        return Usage()
    return Usage(
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        cache_creation_input_tokens=int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
        cache_read_input_tokens=int(getattr(usage, "cache_read_input_tokens", 0) or 0),
    )


def build_params(
    config: AnthropicConfig,
    model: str,
    request: ExecutionRequest,
    folder: SkillFolder | None = None,
) -> dict[str, Any]:
    """The first `messages.create` arguments of one attempt (pure: no SDK needed). With a
    skill `folder`, its file list follows SKILL.md and the read tool is offered."""
    system, user = compose_prompt(
        request.skill, request.task.prompt, config.skill_mode, folder.listing() if folder else None
    )
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": config.max_tokens,
        "messages": [{"role": "user", "content": user}],
    }
    if folder is not None:
        params["tools"] = [READ_TOOL]  # before the system block: cached with it
    if system:
        # Cached: the same skill prefix is sent by every attempt of every task of this arm.
        params["system"] = [
            {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
        ]
    if config.temperature is not None:
        # SDK 1.x dropped sampling keywords; the API still takes them (older models only:
        # those after Opus 4.6 answer 400 to a non-default temperature). Sent only when set.
        params["extra_body"] = {"temperature": config.temperature}
    return params


def strip_v1(base_url: str | None) -> str | None:
    """The SDK appends /v1/messages itself, so a base URL copied with its /v1 would 404."""
    if base_url is None:
        return None
    trimmed = base_url.rstrip("/")
    return trimmed[: -len("/v1")] if trimmed.endswith("/v1") else base_url


class AnthropicExecutor(ExecutorBase):
    """One Messages API call per attempt. Thread-safe: one SDK client shared by all threads."""

    name = "anthropic"

    def __init__(self, config: AnthropicConfig) -> None:
        self.config = config
        self.model = config.model or self._env("SKILL_EVAL_MODEL") or DEFAULT_MODEL
        self.base_url = strip_v1(config.base_url or self._env("ANTHROPIC_BASE_URL"))
        self.prices: PriceTable = load_price_table(config.price_file)
        self._client: Any = None
        self._lock = threading.Lock()
        self.contact = FirstContact(self.base_url or "https://api.anthropic.com")
        self.gate = (
            CallGate(AimdController(config.concurrency))
            if config.concurrency and config.adaptive_concurrency
            else None
        )

    @property
    def concurrency_level(self) -> tuple[int, int] | None:
        """(calls allowed at once now, the ceiling) under adaptive concurrency, else None."""
        return (self.gate.limit, self.gate.controller.maximum) if self.gate else None

    def _env(self, name: str) -> str | None:
        """A variable from `config.env` first, then the process environment; "" is unset."""
        return env_lookup(self.config.env)(name)

    def preflight(self) -> None:
        if self.config.skill_mode not in SUPPORTED_MODES:
            raise ExecutorError(
                f"skill mode {self.config.skill_mode!r} is not supported by the anthropic "
                f"executor (it delivers the skill as text: use {' or '.join(SUPPORTED_MODES)}; "
                "'installed' needs --executor claude-cli)"
            )
        if not self._env("ANTHROPIC_API_KEY"):
            raise ExecutorError(MISSING_KEY)
        if self.base_url is not None and (nobody := probe(self.base_url)) is not None:
            raise ExecutorError(nobody)  # before the SDK's import, which takes seconds
        try:
            import anthropic  # noqa: F401
        except ImportError as exc:
            raise ExecutorError(
                f"the anthropic SDK is not installed ({exc}): pip install anthropic"
            ) from None

    def request_frame(self, task: Task, skilled: bool) -> RequestFrame:
        """One request; in system mode the skill is its cached system prompt."""
        return RequestFrame(cache="prefix" if self.config.skill_mode == "system" else "none")

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import anthropic

                self._client = anthropic.Anthropic(
                    api_key=self._env("ANTHROPIC_API_KEY") or "",
                    base_url=self.base_url,
                    max_retries=0,  # the runner retries, honouring retry-after
                )
            return self._client

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if self.config.skill_mode not in SUPPORTED_MODES:
            return failed(
                Failure(
                    f"skill mode {self.config.skill_mode!r} is not supported by the anthropic "
                    "executor"
                )
            )
        return self.converse(request)

    def converse(self, request: ExecutionRequest, first: Any = None) -> ExecutionResult:
        """The attempt's requests, tool turns included; `first`: the first turn's Message,
        already answered (by a batch), so only the turns after it are sent here."""
        folder = skill_folder(request.skill)
        dialogue = _Messages(self, build_params(self.config, self.model, request, folder), first)
        started = time.monotonic()
        end = converse(
            dialogue,
            folder,
            max_tool_turns=self.config.max_tool_turns,
            timeout_seconds=request.timeout_seconds,
            budget=self.budget,
            price=lambda turn: self.prices.cost(turn.model or self.model, turn.usage)[0],
        )
        return end.result(self.prices, self.model, time.monotonic() - started)

    def _create(self, params: dict[str, Any], timeout: float) -> Any:
        """One Messages call, through the adaptive gate when there is one (which learns from
        the status, `retry-after` and `anthropic-ratelimit-*` headers of every reply)."""
        client = self._get_client()
        if self.gate is None:
            return client.messages.create(**params, timeout=timeout)
        queued = time.monotonic()
        with self.gate.call() as call:
            left = max(1.0, timeout - (time.monotonic() - queued))  # the wait at the gate counts
            try:
                raw = client.messages.with_raw_response.create(**params, timeout=left)
            except Exception as exc:
                headers = dict(getattr(getattr(exc, "response", None), "headers", None) or {})
                call.failed(getattr(exc, "status_code", None), headers, parse_retry_after(headers))
                raise
            call.ok(dict(raw.headers))
        return raw.parse()

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "anthropic",
            "version": sdk_version(),
            "model": self.model,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
            "skill_mode": self.config.skill_mode,
            "prices": self.prices.describe(),
            # The model reads the skill's other files: they shape results (cache keys).
            "skill_folder": self.config.skill_mode in SUPPORTED_MODES,
            "isolation": {
                "api": "messages",
                "system_prompt": "skill only (system mode), else none",
                "prompt_cache": self.config.skill_mode == "system",
                "tools": [TOOL_NAME] if self.config.skill_mode in SUPPORTED_MODES else [],
                "tools_when": "the skill's folder holds more than SKILL.md",
                "max_tool_turns": self.config.max_tool_turns,
                "sdk_retries": 0,
                "custom_base_url": self.base_url is not None,
            },
        }


class _Messages:
    """One attempt's conversation in the Messages API (tool_loop.Dialogue): `params` grows by
    an assistant message and a user message of tool results per tool turn."""

    def __init__(self, executor: AnthropicExecutor, params: dict[str, Any], first: Any) -> None:
        self.executor, self.params, self.first = executor, params, first

    def ask(self, last: bool, timeout: float) -> ModelTurn | ExecutionResult:
        if last:
            self.params["tool_choice"] = {"type": "none"}  # the last turn must answer
        message, self.first = self.first, None
        contact = self.executor.contact
        try:
            if message is None:
                message = self.executor._create(self.params, timeout)
        except Exception as exc:  # every SDK failure becomes data on the attempt
            if (nobody := contact.fatal(exc)) is not None:  # a closed port, as a 401 does
                return failed(Failure.setup(nobody), error_type="refused")
            if getattr(exc, "status_code", None) is not None:
                contact.answered()
            return classify_exception(exc)
        contact.answered()
        text = _message_text(message)
        if text is None:
            shown = message if isinstance(message, str) else type(message).__name__
            return failed(
                Failure.transient(f"malformed response: not a Message: {str(shown)[:200]}"),
                error_type="malformed",
            )
        uses = tuple(
            ToolUse(str(b.id), str(b.name), getattr(b, "input", None))
            for b in message.content
            if getattr(b, "type", None) == "tool_use"
        )
        named = {k: getattr(message, k, None) for k in ("model", "id", "stop_reason")}
        return ModelTurn(text, uses, _usage_of(message), raw=message, **named)

    def add(self, turn: ModelTurn, answers: Sequence[ToolAnswer]) -> None:
        results = [
            {"type": "tool_result", "tool_use_id": a.use.id, "content": a.text}
            | ({} if a.ok else {"is_error": True})
            for a in answers
        ]
        blocks = [_block_param(b) for b in turn.raw.content if getattr(b, "text", None) != ""]
        self.params["messages"] = [
            *self.params["messages"],
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": results},
        ]


def _block_param(block: Any) -> dict[str, Any]:
    """A response content block as a request block, for the next turn's history."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": getattr(block, "text", "") or ""}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    dumped: dict[str, Any] = block.model_dump(exclude_none=True)  # thinking blocks etc.
    return dumped


def sdk_version() -> str | None:
    """The installed anthropic SDK version, read without importing the SDK."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anthropic")
    except PackageNotFoundError:
        return None


__all__ = ["AnthropicConfig", "AnthropicExecutor", "build_params", "classify_exception"]
