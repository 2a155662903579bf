"""OpenAI Responses as a fake `Protocol`: `POST /v1/responses`, answered with a `response`
object or, with `"stream": true`, its server-sent events (`response.created`, one
`response.output_item.added` ... `.done` run per output item with its text or argument deltas,
then the required `response.completed`, or `response.incomplete` when the text was cut, with
usage). Text is a `message` item; a tool call is a `function_call` item (a `custom_tool_call`
when the request defines that tool as `type: custom`, e.g. Codex's freeform tools), answered
by the client with a `function_call_output` input item carrying the same `call_id`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.fakes.conversation import Conversation, tool_kind
from tests.fakes.handler import RecordedRequest
from tests.fakes.openai_protocol import (
    DEFAULT_TEXT,
    OpenAIProtocol,
    data_frame,
    fake_id,
    now,
    usage_numbers,
)
from tests.fakes.reply_plan import JSON_CHUNK, TEXT_CHUNK, PlannedCall, chunks, plan_reply
from tests.fakes.rules import Rule

if TYPE_CHECKING:
    from tests.fakes.handler import RequestHandler

RESPONSES = "/v1/responses"


def _call_item(call: PlannedCall, convo: Conversation) -> dict[str, Any]:
    item = {"type": "function_call", "status": "completed", "call_id": call.id, "name": call.name}
    if tool_kind(convo, call.name) == "custom":  # freeform input: the rule's `input` string
        given = call.input.get("input") if isinstance(call.input, dict) else call.input
        text = given if isinstance(given, str) else json.dumps(given)
        return {"id": fake_id("ctc_fake_"), **item, "type": "custom_tool_call", "input": text}
    return {"id": fake_id("fc_fake_"), **item, "arguments": json.dumps(call.input)}


def response_object(record: RecordedRequest, convo: Conversation, rule: Rule | None) -> dict:
    """The complete `response` a rule answers a request with."""
    plan = plan_reply(rule, convo, default_text=DEFAULT_TEXT, id_prefix="call_fake_")
    output: list[dict[str, Any]] = []
    if plan.text is not None:
        part = {"type": "output_text", "text": plan.text, "annotations": []}
        output.append(
            {
                "id": fake_id("msg_fake_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    output += [_call_item(call, convo) for call in plan.calls]
    numbers = usage_numbers(plan, convo)
    body = record.json
    cut = plan.stop == "max_tokens"
    return {
        "id": fake_id("resp_fake_"),
        "object": "response",
        "created_at": now(),
        "status": "incomplete" if cut else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": convo.model or "gpt-fake",
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": numbers["input_tokens"],
            "input_tokens_details": {"cached_tokens": numbers["cached_tokens"]},
            "output_tokens": numbers["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": numbers["reasoning_tokens"]},
            "total_tokens": numbers["input_tokens"] + numbers["output_tokens"],
        },
        "user": None,
        "metadata": {},
    }


def _item_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """`response.output_item.added` ... `.done` for one output item, its deltas between."""
    where = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        opening = {**item, "status": "in_progress", "content": []}
        at = {**where, "content_index": 0}
        middle = [
            {"type": "response.content_part.added", **at, "part": part},
            *(
                {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
                for piece in chunks(text, TEXT_CHUNK)
            ),
            {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
            {"type": "response.content_part.done", **at, "part": item["content"][0]},
        ]
    elif item["type"] == "custom_tool_call":
        opening = {**item, "status": "in_progress", "input": ""}
        middle = [
            *(
                {"type": "response.custom_tool_call_input.delta", **where, "delta": piece}
                for piece in chunks(item["input"], JSON_CHUNK)
            ),
            {"type": "response.custom_tool_call_input.done", **where, "input": item["input"]},
        ]
    else:
        opening = {**item, "status": "in_progress", "arguments": ""}
        middle = [
            *(
                {"type": "response.function_call_arguments.delta", **where, "delta": piece}
                for piece in chunks(item["arguments"], JSON_CHUNK)
            ),
            {
                "type": "response.function_call_arguments.done",
                **where,
                "arguments": item["arguments"],
            },
        ]
    return [
        {"type": "response.output_item.added", "output_index": index, "item": opening},
        *middle,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def stream_events(full: dict[str, Any]) -> list[dict[str, Any]]:
    """The event sequence that streams the response `full`, numbered by `sequence_number`."""
    pending = {**full, "status": "in_progress", "output": [], "usage": None}
    pending["incomplete_details"] = None
    events = [
        {"type": "response.created", "response": pending},
        {"type": "response.in_progress", "response": pending},
    ]
    for index, item in enumerate(full["output"]):
        events += _item_events(index, item)
    last = "response.incomplete" if full["status"] == "incomplete" else "response.completed"
    events.append({"type": last, "response": full})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


class ResponsesProtocol(OpenAIProtocol):
    """POST /v1/responses."""

    name = "responses"
    path = RESPONSES

    def invalid(self, body: Any) -> str | None:
        return self.check(body, "input", (list, str))

    def _frames(self, full: dict[str, Any]) -> list[bytes]:
        return [data_frame(event, event["type"]) for event in stream_events(full)]

    def reply(self, handler: RequestHandler, record: RecordedRequest, rule: Rule | None) -> None:
        full = response_object(record, self.read(record.body), rule)
        if not record.stream:
            handler.send_json(record, 200, full, handler.limit_headers)
            return
        handler.send_stream(record, self._frames(full), full)

    def broken(self, handler: RequestHandler, record: RecordedRequest, kind: str) -> None:
        full = response_object(record, self.read(record.body), None)
        frames = self._frames(full)
        first_delta = next(i for i, f in enumerate(frames) if b".delta\n" in f)
        handler.send_broken(
            kind,
            record.stream,
            frames,
            keep=first_delta + 1,
            full=full,
            bad_frame=b'event: response.output_text.delta\ndata: {"type": "response.outp\n\n',
            cut_short=b'{"id": "resp_fake_malformed", "object": "response", "outp',
        )
