"""The Message Batches endpoints of the fake Anthropic server.

`POST /v1/messages/batches` creates a batch (each request answered by the same rules and faults
as `/v1/messages`, decided at creation), `GET .../batches/{id}` retrieves it (`in_progress`
until `batch_seconds` after creation, then `ended` with its counts and `results_url`),
`GET .../batches/{id}/results` streams the results as JSON lines (in reverse request order, as
the real API does not promise any), `POST .../batches/{id}/cancel` cancels what has not ended.

A fault whose `path` matches `/v1/messages/batches/requests` (counted per batch request, like
retries of `/v1/messages`) makes that request `errored` (a `malformed` one is left out of the
results altogether); a rule's `fault:` does the same.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tests.fakes.conversation import read_messages
from tests.fakes.faults import ERROR_REPLIES, Fault, error_body
from tests.fakes.replies import build_message
from tests.fakes.templates import TemplateError

if TYPE_CHECKING:
    from tests.fakes.anthropic_server import FakeAnthropic

BATCHES = "/v1/messages/batches"
BATCH_REQUEST = "/v1/messages/batches/requests"  # the pseudo path faults name to hit items


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class FakeBatch:
    """One batch: its results (custom_id -> result object), decided at creation."""

    id: str
    created: float
    ends: float
    results: dict[str, dict[str, Any]]
    canceled_at: float | None = None
    retrieved: int = 0
    params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def ended(self, now: float) -> bool:
        return now >= self.ends or self.canceled_at is not None

    def to_dict(self, base_url: str, now: float) -> dict[str, Any]:
        ended = self.ended(now)
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if ended:
            for result in self.results.values():
                counts["errored" if result is MISSING else result["type"]] += 1
        else:
            counts["processing"] = len(self.results)
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _iso(self.created),
            "expires_at": _iso(self.created + 86400),
            "ended_at": _iso(min(self.ends, self.canceled_at or self.ends)) if ended else None,
            "cancel_initiated_at": _iso(self.canceled_at),
            "archived_at": None,
            "results_url": f"{base_url}{BATCHES}/{self.id}/results" if ended else None,
        }


class BatchStore:
    """The batches a FakeAnthropic holds, and what the handler answers for each endpoint."""

    def __init__(self, fake: FakeAnthropic, batch_seconds: float = 0.0) -> None:
        self.fake = fake
        self.batch_seconds = batch_seconds
        self.batches: dict[str, FakeBatch] = {}
        self.creates = 0  # how many batches were created (resume tests: no second one)
        self._lock = threading.Lock()

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """(status, JSON payload, or a str of JSON lines for results)."""
        parts = path[len(BATCHES) :].strip("/").split("/") if path != BATCHES else []
        if method == "POST" and not parts:
            return self._create(body)
        batch = self.batches.get(parts[0]) if parts else None
        if batch is None:
            return 404, error_body("not_found_error", f"Not found: {method} {path}")
        now = time.time()
        if method == "GET" and len(parts) == 1:
            batch.retrieved += 1
            return 200, batch.to_dict(self.fake.base_url, now)
        if method == "GET" and parts[1:] == ["results"]:
            if not batch.ended(now):
                return 400, error_body("invalid_request_error", "batch is still processing")
            lines = [
                {"custom_id": cid, "result": result}
                for cid, result in reversed(batch.results.items())
                if result is not MISSING
            ]
            return 200, "".join(json.dumps(line) + "\n" for line in lines)
        if method == "POST" and parts[1:] == ["cancel"]:
            if not batch.ended(now):
                batch.canceled_at = now
                batch.results = dict.fromkeys(batch.results, {"type": "canceled"})
            return 200, batch.to_dict(self.fake.base_url, now)
        return 404, error_body("not_found_error", f"Not found: {method} {path}")

    def _create(self, body: Any) -> tuple[int, Any]:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return 400, error_body("invalid_request_error", "requests: at least one request")
        ids = [r.get("custom_id") if isinstance(r, dict) else None for r in requests]
        if any(not isinstance(i, str) or not 1 <= len(i) <= 64 for i in ids) or len(
            set(ids)
        ) != len(ids):
            return 400, error_body(
                "invalid_request_error", "custom_id: 1-64 characters, unique within the batch"
            )
        now = time.time()
        batch = FakeBatch(
            "msgbatch_fake_" + uuid.uuid4().hex[:20], now, now + self.batch_seconds, {}
        )
        for request in requests:
            params = request.get("params")
            batch.params[request["custom_id"]] = params
            batch.results[request["custom_id"]] = self._result(params)
        with self._lock:
            self.batches[batch.id] = batch
            self.creates += 1
        return 200, batch.to_dict(self.fake.base_url, now)

    def _result(self, params: Any) -> dict[str, Any]:
        """One request's result: a fault (errored), a rule's reply (succeeded)."""
        if not isinstance(params, dict) or not isinstance(params.get("max_tokens"), int):
            return _errored("invalid_request_error", "params: a Messages request is required")
        fault = self.fake._pick_fault(BATCH_REQUEST, self.fake._count(BATCH_REQUEST))
        rule = None
        if fault is None:
            convo = read_messages(params)
            rule = self.fake._pick_rule("/v1/messages", convo)
            if rule is not None:
                try:
                    rule = rule.reply_for(convo)
                except TemplateError as error:
                    return _errored("invalid_request_error", f"fake: {error}")
                if rule.fault is not None:
                    fault = Fault(kind=rule.fault)
        if fault is not None and fault.kind == "malformed":  # the results leave it out
            return MISSING
        if fault is not None:
            _status, error_type, text = ERROR_REPLIES.get(fault.kind, (500, "api_error", "x"))
            return _errored(error_type, fault.message or text)
        message = build_message(params, rule, self.fake.usage.measure(params))
        return {"type": "succeeded", "message": message}


MISSING: dict[str, Any] = {"type": "missing"}  # a result the results endpoint never lists


def _errored(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "errored", "error": error_body(error_type, message)}
