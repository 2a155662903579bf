"""`anthropic --batch`: the anthropic executor with every attempt's request sent through the
Message Batches API (half price; the service runs them in parallel).

Before the attempts start, the runner hands `prepare` every request of the run and a
`BatchLog`. `prepare` first collects the batches the journal already names (a resumed run
polls the batch it sent before it was killed, and sends none again), then sends what is left
as one batch, journals its id at once, polls it with backoff, and maps results back by
`custom_id`. Requests that came back in error (overloaded, expired, ...) go out again in a
follow-up batch, up to --max-retries times; one that cannot succeed (an invalid request) is
kept as an error. Then the attempts run as usual: `run` answers each from its batch result
(a skill folder's tool turns after the first go to the Messages API directly) and the judges
judge it; before that, the runner sends the llm-rubric/rubric judgements of the batch's
answers (`prepared_output`) as a second batch (judges/batch_judging.py). A request `prepare`
never saw (a retry after a failed tool turn) is sent directly.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.model import ExecutionRequest, ExecutionResult
from ..skills.files import skill_folder
from .anthropic_api import (
    SUPPORTED_MODES,
    AnthropicConfig,
    AnthropicExecutor,
    _message_text,
    _usage_of,
    build_params,
    classify_exception,
)
from .batches import BATCH_RECORD, BatchLog, BatchSession, custom_id, send_all


def _key(request: ExecutionRequest) -> str:
    return custom_id(request.arm, request.task.id, request.attempt)


class BatchAnthropicExecutor(AnthropicExecutor):
    """The anthropic executor in batch mode (`AnthropicConfig.batch`)."""

    prepares_requests = True

    def __init__(self, config: AnthropicConfig) -> None:
        super().__init__(config)
        self._ready: dict[str, Any] = {}  # custom_id -> (Message, batch id) or ExecutionResult
        self._ready_lock = threading.Lock()

    def batch_params(self, request: ExecutionRequest) -> dict[str, Any]:
        """The first turn's `messages.create` arguments as a batch request's `params`."""
        folder = skill_folder(request.skill)
        params = build_params(self.config, self.model, request, folder)
        params.update(params.pop("extra_body", {}))  # a batch takes the fields themselves
        if folder is not None and self.config.max_tool_turns <= 1:
            params["tool_choice"] = {"type": "none"}
        return params

    def prepare(self, requests: Sequence[ExecutionRequest], log: BatchLog) -> None:
        """Get every request's first answer through batches (see the module docstring)."""
        if self.config.skill_mode not in SUPPORTED_MODES:
            return  # run() reports the mode on every attempt
        session = BatchSession(self._get_client(), log, classify_exception)
        ready = send_all(session, BATCH_RECORD, {_key(r): self.batch_params(r) for r in requests})
        with self._ready_lock:
            self._ready.update(ready)

    def prepared_output(self, request: ExecutionRequest) -> str | None:
        """The answer a batch gave `request`, when it is the attempt's whole output (no tool
        call follows); None otherwise."""
        with self._ready_lock:
            ready = self._ready.get(_key(request))
        if not isinstance(ready, tuple) or any(
            getattr(b, "type", None) == "tool_use" for b in ready[0].content or ()
        ):
            return None
        return _message_text(ready[0])

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        with self._ready_lock:
            ready = self._ready.pop(_key(request), None)
        if ready is None:
            return super().run(request)
        if isinstance(ready, ExecutionResult):
            return replace(ready, meta={**ready.meta, "batch": True})
        message, batch_id = ready
        result = self.converse(request, first=message)
        # The first turn was billed at the batch price; any later (tool) turns at the full one.
        model = str(getattr(message, "model", None) or self.model)
        first = _usage_of(message)
        saved = self.prices.cost(model, first)[0] - self.prices.cost(model, first, batch=True)[0]
        if result.charged and self.budget is not None:  # charged at the full price as it came
            self.budget.charge(-saved, 0)
        return replace(
            result,
            cost_usd=round(max(0.0, result.cost_usd - saved), 8),
            meta={**result.meta, "batch": True, "batch_id": batch_id},
        )


__all__ = ["BatchAnthropicExecutor"]
