"""The Responses API as Codex speaks it, declared for the jail's forward (jail/wire.py): its
route, headers and request allow-list, and how a reply's tool calls (`function_call`,
`custom_tool_call` and `local_shell_call` items, complete at their `output_item.done`) and
usage (`response.completed`) read.

The allow-list is what the pinned Codex (@openai/codex 0.171.0, `wire_api = "responses"`,
web search off) was recorded sending against tests/fakes' Responses API in every mode
skill-eval runs it with (references/security.md lists it): function, custom and namespace
tools only (no hosted tool: web search, file search, code interpreter, computer use, MCP,
image generation), `store: false` and nothing that refers to state on the API's servers
(`previous_response_id`, `conversation`, `background`, a `prompt` template, an `item_reference`
or a file by id), input images only inline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...jail.model_replies import arguments
from ...jail.request_rules import header_values, one_of, outside
from ...jail.wire import ApiRequest, Call, Refusal, ReplyUsage
from .openai_dialect import OpenAiDialect, each, usage_of

TOP_LEVEL = frozenset(
    {
        "model",
        "stream",
        "input",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "store",
        "include",
        "prompt_cache_key",
        "client_metadata",
        "text",
    }
)
HEADERS = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "user-agent",
        "originator",
        "session-id",
        "thread-id",
        "x-codex-beta-features",
        "x-codex-turn-metadata",
        "x-codex-window-id",
        "x-client-request-id",
    }
)
BETA_FEATURES = frozenset({"remote_compaction_v2"})  # x-codex-beta-features
# A tool's type -> its fields (`tool_search` only as Codex runs it: `execution: client`).
TOOLS: dict[str, frozenset[str]] = {
    "function": frozenset({"type", "name", "description", "parameters", "strict"}),
    "custom": frozenset({"type", "name", "description", "format"}),
    "tool_search": frozenset({"type", "execution", "description", "parameters"}),
}
# An input item's type -> its fields. `reasoning` items and assistant messages were not
# recorded (the fake sends neither), but the API needs them back in a stateless session.
ITEMS: dict[str, frozenset[str]] = {
    "message": frozenset({"type", "role", "content", "id", "status"}),
    "function_call": frozenset({"type", "name", "arguments", "call_id", "id", "status"}),
    "function_call_output": frozenset({"type", "call_id", "id", "output"}),
    "custom_tool_call": frozenset({"type", "name", "input", "call_id", "id", "status"}),
    "custom_tool_call_output": frozenset({"type", "call_id", "id", "output"}),
    "reasoning": frozenset({"type", "id", "summary", "content", "encrypted_content"}),
}
PARTS: dict[str, frozenset[str]] = {
    "input_text": frozenset({"type", "text"}),
    "output_text": frozenset({"type", "text", "annotations", "logprobs"}),
    "input_image": frozenset({"type", "image_url", "detail"}),
}
INCLUDES = frozenset({"reasoning.encrypted_content"})
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})


class ResponsesDialect(OpenAiDialect):
    """`POST /v1/responses`, as Codex sends it."""

    name = "responses"
    routes = frozenset({"/v1/responses"})
    headers = HEADERS

    def check(self, request: ApiRequest) -> Refusal | None:
        body = request.body
        problem = outside(body, TOP_LEVEL, "the body") or header_values(
            request.headers, "x-codex-beta-features", BETA_FEATURES
        )
        if problem is None and body.get("store") is not False:
            problem = Refusal("the body does not say store: false (a stored response)")
        if problem is None and "include" in body:
            include = body["include"]
            listed = include if isinstance(include, list) else [include]
            wrong = [i for i in listed if not (isinstance(i, str) and i in INCLUDES)]
            problem = Refusal(f"include asks for {str(wrong[0])[:60]}") if wrong else None
        if problem is None and "reasoning" in body:
            problem = outside(body["reasoning"], frozenset({"effort", "summary"}), "reasoning")
        if problem is None and "text" in body:
            problem = outside(body["text"], frozenset({"verbosity"}), "text")
        if problem is None and "tool_choice" in body:
            problem = one_of(body["tool_choice"], frozenset({"auto"}), "tool_choice")
        if problem is None and "client_metadata" in body:
            problem = _strings(body["client_metadata"], "client_metadata")
        return problem or _tools(body.get("tools", []), "tools") or _input(body.get("input"))

    def replies(self) -> ResponsesReplies:
        return ResponsesReplies()


def _strings(value: Any, where: str) -> Refusal | None:
    """An object of strings (the agent's own labels of its session): nothing else."""
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        return Refusal(f"{where} is not an object of strings")
    return None


def _tools(tools: Any, where: str) -> Refusal | None:
    """Client tools only: a hosted one (web search, file search, code interpreter, computer
    use, MCP, image generation, a shell run by the API) is refused by its type."""
    if not isinstance(tools, list):
        return Refusal(f"{where} is not a list")
    for index, tool in enumerate(tools):
        at = f"{where}[{index}]"
        kind = tool.get("type") if isinstance(tool, Mapping) else None
        if kind not in TOOLS:
            return Refusal(f"{at} is a hosted tool or unknown ({str(kind)[:60]})")
        problem = outside(tool, TOOLS[str(kind)], at)
        if problem is None and kind == "tool_search":
            problem = one_of(tool.get("execution"), frozenset({"client"}), f"{at}.execution")
        if problem is not None:
            return problem
    return None


def _input(items: Any) -> Refusal | None:
    if isinstance(items, str):
        return None
    problem = each(items, frozenset(set().union(*ITEMS.values())), "input")
    for index, item in enumerate(items if problem is None else []):
        at = f"input[{index}]"
        problem = one_of(item.get("type", "message"), frozenset(ITEMS), f"{at}.type")
        if problem is None:
            problem = outside(item, ITEMS[item.get("type", "message")], at)
        kind = item.get("type", "message")
        if problem is None and kind == "message":
            problem = one_of(
                item.get("role"), frozenset({"developer", "user", "assistant"}), f"{at}.role"
            ) or _parts(item.get("content"), f"{at}.content")
        if problem is None and kind.endswith("_output"):
            problem = _parts(item.get("output"), f"{at}.output")
        if problem is not None:
            return problem
    return problem


def _parts(parts: Any, where: str) -> Refusal | None:
    if isinstance(parts, str):
        return None
    problem = each(parts, frozenset(set().union(*PARTS.values())), where)
    for index, part in enumerate(parts if problem is None else []):
        at = f"{where}[{index}]"
        problem = one_of(part.get("type"), frozenset(PARTS), f"{at}.type")
        if problem is None:
            problem = outside(part, PARTS[part["type"]], at)
        url = part.get("image_url", "data:")
        if problem is None and not (isinstance(url, str) and url.startswith("data:")):
            problem = Refusal(f"{at}.image_url is not inline data (the API would fetch it)")
        if problem is not None:
            return problem
    return problem


class ResponsesReplies:
    """One Responses reply's tool calls (each call item at its `response.output_item.done`;
    a whole reply's `output`) and usage (`response.completed`'s response)."""

    def __init__(self) -> None:
        self._response: Any = None

    def event(self, event: Mapping[str, Any]) -> list[Call]:
        kind = event.get("type")
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self._response = event.get("response")
        if kind == "response.output_item.done":
            return _call(event.get("item"))
        return []

    def done(self) -> list[Call]:
        return []

    def whole(self, body: Any) -> list[Call]:
        if not isinstance(body, Mapping):
            return []
        self._response = body
        output = body.get("output")
        return [c for item in (output if isinstance(output, list) else []) for c in _call(item)]

    def usage(self) -> ReplyUsage | None:
        response = self._response
        if not isinstance(response, Mapping):
            return None
        return usage_of(
            response.get("model"), response.get("usage"), "input_tokens", "output_tokens"
        )


def _call(item: Any) -> list[Call]:
    if not isinstance(item, Mapping) or item.get("type") not in CALLS:
        return []
    call_id = str(item.get("call_id") or item.get("id") or "")
    if item["type"] == "function_call":
        tool_input = arguments(str(item.get("arguments") or ""))
    elif item["type"] == "custom_tool_call":
        tool_input = {"input": str(item.get("input") or "")}
    else:
        tool_input = {"action": item.get("action")}
    return [(call_id, str(item.get("name") or item["type"]), tool_input)]


RESPONSES = ResponsesDialect()

__all__ = ["HEADERS", "RESPONSES", "TOP_LEVEL", "ResponsesDialect", "ResponsesReplies"]
