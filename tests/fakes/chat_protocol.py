"""OpenAI Chat Completions as a fake `Protocol`: `POST /v1/chat/completions`, answered with a
`chat.completion` or, with `"stream": true`, `chat.completion.chunk` events (`delta.content`
pieces, `delta.tool_calls` with the arguments in pieces, a last chunk with `finish_reason`, a
usage chunk when `stream_options.include_usage` asks for it) ending in `data: [DONE]`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakes.handler import RecordedRequest
from tests.fakes.openai_protocol import (
    DEFAULT_TEXT,
    FINISH_REASONS,
    OpenAIProtocol,
    data_frame,
    fake_id,
    now,
    usage_numbers,
)
from tests.fakes.reply_plan import JSON_CHUNK, TEXT_CHUNK, ReplyPlan, chunks, plan_reply
from tests.fakes.rules import Rule

if TYPE_CHECKING:
    from tests.fakes.handler import RequestHandler

CHAT = "/v1/chat/completions"
DONE = b"data: [DONE]\n\n"


def _usage(numbers: dict[str, int]) -> dict[str, Any]:
    return {
        "prompt_tokens": numbers["input_tokens"],
        "completion_tokens": numbers["output_tokens"],
        "total_tokens": numbers["input_tokens"] + numbers["output_tokens"],
        "prompt_tokens_details": {"cached_tokens": numbers["cached_tokens"]},
        "completion_tokens_details": {"reasoning_tokens": numbers["reasoning_tokens"]},
    }


def completion(plan: ReplyPlan, usage: dict[str, Any], model: str) -> dict[str, Any]:
    """The non-streamed `chat.completion` of a reply plan."""
    message: dict[str, Any] = {"role": "assistant", "content": plan.text, "refusal": None}
    if plan.calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": args}}
            for call, args in zip(plan.calls, plan.arguments, strict=True)
        ]
    return {
        "id": fake_id("chatcmpl-fake"),
        "object": "chat.completion",
        "created": now(),
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": FINISH_REASONS.get(plan.stop, plan.stop),
            }
        ],
        "usage": usage,
    }


def stream_chunks(full: dict[str, Any], with_usage: bool) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` sequence that streams the completion `full`."""
    base = {k: full[k] for k in ("id", "created", "model", "system_fingerprint")}
    base["object"] = "chat.completion.chunk"
    choice = full["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        one = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [one], **({"usage": None} if with_usage else {})}

    out = [chunk({"role": "assistant", "content": ""})]
    if message["content"]:
        out += [chunk({"content": piece}) for piece in chunks(message["content"], TEXT_CHUNK)]
    for index, call in enumerate(message.get("tool_calls") or []):
        opening = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        out.append(chunk({"tool_calls": [{"index": index, **opening}]}))
        for piece in chunks(call["function"]["arguments"], JSON_CHUNK):
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, choice["finish_reason"]))
    if with_usage:
        out.append({**base, "choices": [], "usage": full["usage"]})
    return out


class ChatProtocol(OpenAIProtocol):
    """POST /v1/chat/completions."""

    name = "chat"
    path = CHAT

    def invalid(self, body: Any) -> str | None:
        return self.check(body, "messages", (list,))

    def _completion(self, record: RecordedRequest, rule: Rule | None) -> dict[str, Any]:
        convo = self.read(record.body)
        plan = plan_reply(rule, convo, default_text=DEFAULT_TEXT, id_prefix="call_fake_")
        return completion(plan, _usage(usage_numbers(plan, convo)), convo.model or "gpt-fake")

    def _frames(self, record: RecordedRequest, full: dict[str, Any]) -> list[bytes]:
        options = record.json.get("stream_options")
        with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        return [data_frame(c) for c in stream_chunks(full, with_usage)]

    def reply(self, handler: RequestHandler, record: RecordedRequest, rule: Rule | None) -> None:
        full = self._completion(record, rule)
        if not record.stream:
            handler.send_json(record, 200, full, handler.limit_headers)
            return
        handler.send_stream(record, [*self._frames(record, full), DONE], full)

    def broken(self, handler: RequestHandler, record: RecordedRequest, kind: str) -> None:
        full = self._completion(record, None)
        handler.send_broken(
            kind,
            record.stream,
            self._frames(record, full),
            keep=2,  # the role chunk and one delta
            full=full,
            bad_frame=b'data: {"id": "chatcmpl-fake", "choi\n\n',
            cut_short=b'{"id": "chatcmpl-fake-malformed", "object": "chat.completion", "choi',
        )
