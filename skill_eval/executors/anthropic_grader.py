"""The `anthropic` model services beside its executor: the grader and the text model.

The grader makes one Messages API call with a forced tool call whose input is the judgement.
A reply with no tool call falls back to the object between the request's nonce tags in its
text (the prompt says how), and to nothing else. The SDK's own retries are on (a judgement is
not retried by the runner); a model that refuses `temperature` is asked again without it.
Never raises. The text model (review roles, the improver) makes one plain call per reply and
raises TextModelError when there is none. Both share one client set-up (`SdkClient`)."""

from __future__ import annotations

import json
import threading
from typing import Any

from ..core.model import Usage
from .anthropic_api import AnthropicConfig
from .base import env_lookup
from .errors_map import retryable_status
from .grader import (
    SDK_MAX_RETRIES,
    GradeRequest,
    GraderSettings,
    Reply,
    answer_format,
    extract_judgement,
)
from .text_model import TextModelError, TextModelSettings, TextReply, TextRequest


class SdkClient:
    """The SDK client of one config (key and base URL from its env first), built on first use
    under a lock: the SDK is slow to import, and only a call needs it."""

    def __init__(self, config: AnthropicConfig, timeout: float, max_retries: int) -> None:
        self.config, self.timeout, self.max_retries = config, timeout, max_retries
        self._env = env_lookup(config.env)
        self._client: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        import anthropic

        with self._lock:
            if self._client is None:
                self._client = anthropic.Anthropic(
                    api_key=self._env("ANTHROPIC_API_KEY"),
                    base_url=self.config.base_url or self._env("ANTHROPIC_BASE_URL"),
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            return self._client


class AnthropicGrader:
    name = "anthropic"

    def __init__(self, config: AnthropicConfig, settings: GraderSettings) -> None:
        self.config = config
        self.settings = settings
        self._env = env_lookup(config.env)
        self._sdk = SdkClient(config, settings.timeout, settings.sdk_retries)

    def _get_client(self) -> Any:
        return self._sdk.get()

    def complete(self, request: GradeRequest) -> Reply:
        model = request.model
        if not self._env("ANTHROPIC_API_KEY"):
            return Reply(
                None,
                "",
                model=model,
                error="ANTHROPIC_API_KEY is not set (needed by --judge-executor anthropic)",
                transient=False,
            )
        try:
            return self._complete(request)
        except Exception as exc:  # a judge must never raise into the runner
            return Reply(
                None,
                "",
                model=model,
                error=f"anthropic judge call failed: {type(exc).__name__}: {exc}",
                transient=False,
            )  # a bug here raises again

    def _complete(self, request: GradeRequest) -> Reply:
        import anthropic

        model = request.model
        params = grade_params(request)
        try:
            client = self._get_client()
            try:
                response = client.messages.create(**params)
            except anthropic.BadRequestError as exc:
                if "temperature" not in str(exc):
                    raise
                # A model that takes no sampling parameters: ask again without it.
                response = client.messages.create(**{**params, "extra_body": {}})
        except anthropic.APIStatusError as exc:
            return Reply(
                None,
                "",
                model=model,
                error=f"judge model API error {exc.status_code}: {_short(exc)}",
                transient=retryable_status(exc.status_code),
            )
        except anthropic.APIConnectionError as exc:
            return Reply(None, "", model=model, error=f"judge model unreachable: {_short(exc)}")
        except anthropic.AnthropicError as exc:
            return Reply(None, "", model=model, error=f"judge model call failed: {_short(exc)}")
        return reply_of(response, request)


class AnthropicTextModel:
    """One Messages API call per reply, with the SDK's own retries on (a review stage or an
    improver reply is not retried by a runner)."""

    name = "anthropic"

    def __init__(self, config: AnthropicConfig, settings: TextModelSettings) -> None:
        self._env = env_lookup(config.env)
        retries = SDK_MAX_RETRIES if settings.sdk_retries is None else settings.sdk_retries
        self._sdk = SdkClient(config, settings.timeout, retries)

    def complete(self, request: TextRequest) -> TextReply:
        if not self._env("ANTHROPIC_API_KEY"):
            raise TextModelError("ANTHROPIC_API_KEY is not set (needed by the anthropic executor)")
        import anthropic

        try:
            message = self._sdk.get().messages.create(
                model=request.model,
                max_tokens=request.max_tokens,
                system=request.system,
                messages=[{"role": "user", "content": request.prompt}],
            )
        except anthropic.AnthropicError as exc:
            raise TextModelError(f"{request.label}: model call failed: {_short(exc)}") from None
        text = "".join(
            getattr(b, "text", "") or ""
            for b in message.content or []
            if getattr(b, "type", None) == "text"
        )
        answered = str(getattr(message, "model", "") or request.model)
        return TextReply(text, _usage(getattr(message, "usage", None)), answered)


def grade_params(request: GradeRequest) -> dict[str, Any]:
    """The `messages.create` arguments of one judgement: the judgement as a forced tool call."""
    return {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": [
            {
                "role": "user",
                "content": f"{request.prompt}\n\nIf you cannot "
                f"call {request.tool_name}: {answer_format(request)}",
            }
        ],
        "tools": [
            {
                "name": request.tool_name,
                "input_schema": dict(request.schema),
                "description": "Record the judgement. Call this exactly once.",
            }
        ],
        "tool_choice": {"type": "tool", "name": request.tool_name},
        # Not a keyword of every SDK version (2.x dropped it), so sent in the body itself.
        "extra_body": {"temperature": request.temperature},
    }


def reply_of(response: Any, request: GradeRequest) -> Reply:
    """The judgement a Message holds: its tool call's input, else the tagged object in its
    text (with `request.nonce`), else an error."""
    model = request.model
    usage = _usage(getattr(response, "usage", None))
    texts: list[str] = []
    for block in response.content or []:
        if getattr(block, "type", None) == "tool_use" and block.name == request.tool_name:
            data = block.input if isinstance(block.input, dict) else None
            raw = json.dumps(block.input, sort_keys=True, default=str)
            if data is None:
                return Reply(
                    None,
                    raw,
                    usage,
                    response.model or model,
                    "judge tool call input is not a JSON object",
                )
            return Reply(data, raw, usage, response.model or model)
        if getattr(block, "type", None) == "text":
            texts.append(block.text)
    raw = "\n".join(texts)
    data, error = extract_judgement(raw, request.nonce)
    return Reply(
        data,
        raw,
        usage,
        response.model or model,
        None if error is None else f"no tool call, and the {error}",
    )


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(**{k: int(getattr(raw, k, 0) or 0) for k in Usage().to_dict()})


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
