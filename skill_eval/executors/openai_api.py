"""`openai`: runs each attempt as an OpenAI-compatible Chat Completions call, for open models
served on this machine (Ollama, vLLM, llama.cpp's server) or any compatible endpoint.

`base_url` (the URL that `/chat/completions` follows, e.g. `http://localhost:11434/v1`;
default `OPENAI_BASE_URL`, else OpenAI's) and the model (`--model`) say where; the key comes
from `OPENAI_API_KEY` (or the variable `api_key_env` names) and is not needed for a server on
this machine. The skill goes in the system message (`system` mode) or before the task
(`prepend`); a skill whose folder holds more than SKILL.md comes with its file list and the
`read_skill_file` function tool, answered by the harness in the bounded loop the anthropic
executor uses too (tool_loop.py). HTTP through openai_http.py; failures come back classified
and the runner retries them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.failure import Failure
from ..core.model import ExecutionRequest, ExecutionResult
from ..errors import ExecutorError
from ..skills.files import READ_TOOL, TOOL_NAME, SkillFolder, skill_folder
from .base import (
    ExecutorBase,
    ExecutorConfig,
    ExecutorSpec,
    compose_prompt,
    config_schema,
    deferred,
    env_lookup,
)
from .openai_http import DEFAULT_BASE_URL, ChatClient, is_local, message_of, text_of, usage_of
from .pricing import PriceTable, load_price_table
from .reachability import probe
from .tool_loop import ModelTurn, ToolAnswer, ToolUse, converse, failed

SUPPORTED_MODES = ("system", "prepend")
# READ_TOOL as a Chat Completions function tool.
READ_FUNCTION = {
    "type": "function",
    "function": {
        "name": READ_TOOL["name"],
        "description": READ_TOOL["description"],
        "parameters": READ_TOOL["input_schema"],
    },
}


@dataclass(frozen=True)
class OpenAIConfig(ExecutorConfig):
    base_url: str | None = None
    max_tokens: int = 4096
    # OpenAI's newer models take `max_completion_tokens`; local servers take `max_tokens`.
    max_tokens_field: str = "max_tokens"
    temperature: float | None = None
    api_key_env: str = "OPENAI_API_KEY"
    price_file: Path | None = None
    env: Mapping[str, str] | None = None  # read before the process environment (API key...)
    # Requests per attempt when the model reads skill files; the last one offers no more calls.
    max_tool_turns: int = 10


def resolved_base_url(config: OpenAIConfig) -> str:
    """The config's `base_url`, else `OPENAI_BASE_URL`, else OpenAI's own."""
    return config.base_url or env_lookup(config.env)("OPENAI_BASE_URL") or DEFAULT_BASE_URL


def api_key(config: OpenAIConfig) -> str | None:
    return env_lookup(config.env)(config.api_key_env)


def key_problem(config: OpenAIConfig) -> str | None:
    """Why the key is missing (a remote server without one), or None."""
    base_url = resolved_base_url(config)
    if api_key(config) or is_local(base_url):
        return None
    return (
        f"{config.api_key_env} is not set, and {base_url} is not on this machine: export "
        f"{config.api_key_env}=... (a server on localhost needs no key)"
    )


def build_body(
    config: OpenAIConfig, model: str, request: ExecutionRequest, folder: SkillFolder | None
) -> dict[str, Any]:
    """The first request body of one attempt (pure). With a skill `folder`, its file list
    follows SKILL.md and the read tool is offered."""
    system, user = compose_prompt(
        request.skill, request.task.prompt, config.skill_mode, folder.listing() if folder else None
    )
    messages = [{"role": "system", "content": system}] if system else []
    body: dict[str, Any] = {
        "model": model,
        "messages": [*messages, {"role": "user", "content": user}],
        config.max_tokens_field: config.max_tokens,
    }
    if folder is not None:
        body["tools"] = [READ_FUNCTION]
    if config.temperature is not None:
        body["temperature"] = config.temperature
    return body


class OpenAIExecutor(ExecutorBase):
    """One Chat Completions call per attempt (more when the model reads skill files)."""

    name = "openai"

    def __init__(self, config: OpenAIConfig) -> None:
        self.config = config
        self.model = config.model or env_lookup(config.env)("SKILL_EVAL_MODEL")
        self.base_url = resolved_base_url(config)
        self.prices: PriceTable = load_price_table(config.price_file)
        self.client = ChatClient(self.base_url, api_key(config))

    def preflight(self) -> None:
        if self.config.skill_mode not in SUPPORTED_MODES:
            raise ExecutorError(
                f"skill mode {self.config.skill_mode!r} is not supported by the openai executor "
                f"(it delivers the skill as text: use {' or '.join(SUPPORTED_MODES)})"
            )
        if not self.model:
            raise ExecutorError(
                "the openai executor needs a model: --model NAME (the name the server knows, "
                "e.g. llama3.2 on Ollama)"
            )
        problem = key_problem(self.config)
        if problem:
            raise ExecutorError(problem)
        try:
            import httpx2  # noqa: F401
        except ImportError as exc:
            raise ExecutorError(f"httpx2 is not installed ({exc}): pip install httpx2") from None
        if self.base_url != DEFAULT_BASE_URL and (nobody := probe(self.base_url)) is not None:
            raise ExecutorError(nobody)

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if self.config.skill_mode not in SUPPORTED_MODES or not self.model:
            return failed(
                Failure(
                    f"the openai executor cannot run skill mode {self.config.skill_mode!r} "
                    f"with model {self.model!r}"
                )
            )
        folder = skill_folder(request.skill)
        started = time.monotonic()
        model = self.model
        end = converse(
            _Chat(self.client, build_body(self.config, model, request, folder)),
            folder,
            max_tool_turns=self.config.max_tool_turns,
            timeout_seconds=request.timeout_seconds,
            budget=self.budget,
            price=lambda turn: self.prices.cost(turn.model or model, turn.usage)[0],
        )
        return end.result(self.prices, self.model, time.monotonic() - started)

    def cancel(self) -> None:
        self.client.close()

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "openai",
            "api": "chat.completions",
            "model": self.model,
            "base_url": self.base_url,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
            "skill_mode": self.config.skill_mode,
            "prices": self.prices.describe(),
            "skill_folder": True,  # the model reads the skill's other files: cache keys
            "isolation": {
                "system_prompt": "skill only (system mode), else none",
                "tools": [TOOL_NAME],
                "tools_when": "the skill's folder holds more than SKILL.md",
                "max_tool_turns": self.config.max_tool_turns,
                "client_retries": 0,
            },
        }


class _Chat:
    """One attempt's conversation in Chat Completions (tool_loop.Dialogue): the body's
    `messages` grow by the assistant's message and one `tool` message per call answered."""

    def __init__(self, client: ChatClient, body: dict[str, Any]) -> None:
        self.client, self.body = client, body

    def ask(self, last: bool, timeout: float) -> ModelTurn | ExecutionResult:
        if last:
            self.body["tool_choice"] = "none"  # the last turn must answer
        completion = self.client.complete(self.body, timeout)
        if isinstance(completion, ExecutionResult):
            return completion
        message = message_of(completion) or {}
        calls = message.get("tool_calls")
        found = [_use(call, n) for n, call in enumerate(calls if isinstance(calls, list) else [])]
        choice = completion["choices"][0]
        return ModelTurn(
            text_of(message),
            tuple(use for use in found if use is not None),
            usage_of(completion),
            model=str(completion.get("model") or "") or None,
            id=str(completion.get("id") or "") or None,
            stop_reason=choice.get("finish_reason") if isinstance(choice, Mapping) else None,
            raw=message,
        )

    def add(self, turn: ModelTurn, answers: Sequence[ToolAnswer]) -> None:
        assistant = {
            "role": "assistant",
            "content": turn.text or None,
            "tool_calls": [
                {
                    "id": a.use.id,
                    "type": "function",
                    "function": {"name": a.use.name, "arguments": _arguments(a.use.input)},
                }
                for a in answers
            ],
        }
        results = [{"role": "tool", "tool_call_id": a.use.id, "content": a.text} for a in answers]
        self.body["messages"] = [*self.body["messages"], assistant, *results]


def _use(call: Any, index: int) -> ToolUse | None:
    """A `tool_calls` entry as a ToolUse; its `arguments` JSON parsed (text that is not JSON
    stays a string, which the loop refuses). A call without an id (some servers) gets one:
    the `tool` message answering it must name it."""
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return None
    raw = function.get("arguments")
    try:
        given = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        given = raw
    call_id = str(call.get("id") or f"call_{index}")
    return ToolUse(call_id, str(function.get("name") or ""), given)


def _arguments(given: Any) -> str:
    return given if isinstance(given, str) else json.dumps(given)


SPEC = ExecutorSpec(
    name="openai",
    serves_skill_files=True,  # the read_skill_file tool (tool_loop.py)
    summary="one OpenAI-compatible Chat Completions call per attempt (Ollama, vLLM, llama.cpp)",
    config_cls=OpenAIConfig,
    schema=config_schema(
        OpenAIConfig,
        {
            "base_url": {"type": ["string", "null"], "pattern": "^https?://"},
            "max_tokens": {"type": "integer", "minimum": 1},
            "max_tokens_field": {"enum": ["max_tokens", "max_completion_tokens"]},
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
            "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
            "price_file": {"type": ["string", "null"], "format": "path"},
            "env": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
            "max_tool_turns": {"type": "integer", "minimum": 1},
        },
    ),
    build=OpenAIExecutor,
    grader=deferred(".openai_grader", "OpenAIGrader"),  # its code loads when it grades
    text_model=deferred(".openai_grader", "OpenAITextModel"),
)

__all__ = ["OpenAIConfig", "OpenAIExecutor", "build_body"]
