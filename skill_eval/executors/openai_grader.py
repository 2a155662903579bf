"""The `openai` model services beside its executor: the grader (`--judge-executor openai`) and
the text model (review roles, the improver), over the same Chat Completions client.

The grader asks for the judgement as a forced function call; a reply without one (many local
servers ignore `tool_choice`) counts only through the object between the request's nonce tags
in its text (the prompt says how). It retries transient failures itself (a judgement is not
retried by the runner) and never raises. The text model makes one plain call per reply and
raises TextModelError when there is none.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.model import ExecutionResult
from .grader import GradeRequest, GraderSettings, Reply, answer_format, extract_judgement
from .openai_api import OpenAIConfig, api_key, key_problem, resolved_base_url
from .openai_http import ChatClient, message_of, text_of, usage_of
from .text_model import TextModelError, TextModelSettings, TextReply, TextRequest

SDK_LIKE_RETRIES = 4  # what a text model retries when its settings leave it to the client


def _client(config: OpenAIConfig, max_retries: int) -> ChatClient:
    return ChatClient(resolved_base_url(config), api_key(config), max_retries=max_retries)


def grade_body(request: GradeRequest) -> dict[str, Any]:
    """The request body of one judgement: the judgement as a forced function call."""
    return {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "messages": [
            {"role": "system", "content": request.system},
            {
                "role": "user",
                "content": f"{request.prompt}\n\nIf you cannot call {request.tool_name}: "
                f"{answer_format(request)}",
            },
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": request.tool_name,
                    "description": "Record the judgement. Call this exactly once.",
                    "parameters": dict(request.schema),
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": request.tool_name}},
    }


class OpenAIGrader:
    name = "openai"

    def __init__(self, config: OpenAIConfig, settings: GraderSettings) -> None:
        self.config, self.settings = config, settings
        self._client = _client(config, settings.sdk_retries)

    def complete(self, request: GradeRequest) -> Reply:
        problem = key_problem(self.config)
        if problem:
            return Reply(None, "", model=request.model, error=problem, transient=False)
        try:
            completion = self._client.complete(grade_body(request), self.settings.timeout)
        except Exception as exc:  # a judge must never raise into the runner
            error = f"openai judge call failed: {type(exc).__name__}: {exc}"
            return Reply(None, "", model=request.model, error=error, transient=False)
        if isinstance(completion, ExecutionResult):
            why = completion.failure
            error = f"judge model API error: {why.message if why else 'no completion'}"
            transient = why is not None and why.retry
            return Reply(None, "", model=request.model, error=error, transient=transient)
        return reply_of(completion, request)


def reply_of(completion: dict[str, Any], request: GradeRequest) -> Reply:
    """The judgement a completion holds: its call of the judge's function (arguments a JSON
    object), else the tagged object in its text, else an error."""
    message = message_of(completion) or {}
    usage, model = usage_of(completion), str(completion.get("model") or request.model)
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") != request.tool_name:
            continue
        raw = str(function.get("arguments") or "")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            return Reply(None, raw, usage, model, "judge function call arguments are not an object")
        return Reply(data, raw, usage, model)
    text = text_of(message)
    data, error = extract_judgement(text, request.nonce)
    return Reply(data, text, usage, model, None if error is None else f"no call, and the {error}")


class OpenAITextModel:
    """One Chat Completions call per reply, retried by the client (a review stage or an
    improver reply is not retried by a runner)."""

    name = "openai"

    def __init__(self, config: OpenAIConfig, settings: TextModelSettings) -> None:
        self.config, self.settings = config, settings
        retries = SDK_LIKE_RETRIES if settings.sdk_retries is None else settings.sdk_retries
        self._client = _client(config, retries)

    def complete(self, request: TextRequest) -> TextReply:
        problem = key_problem(self.config)
        if problem:
            raise TextModelError(problem)
        body = {
            "model": request.model,
            self.config.max_tokens_field: request.max_tokens,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
        }
        completion = self._client.complete(body, self.settings.timeout)
        if isinstance(completion, ExecutionResult):
            why = completion.failure.message if completion.failure else "no completion"
            raise TextModelError(f"{request.label}: model call failed: {why}")
        message = message_of(completion) or {}
        answered = str(completion.get("model") or request.model)
        return TextReply(text_of(message), usage_of(completion), answered)
