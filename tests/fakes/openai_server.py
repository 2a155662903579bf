"""A loopback stand-in of the OpenAI API for tests and manual runs: Chat Completions
(`POST /v1/chat/completions`, chat_protocol.py), Responses (`POST /v1/responses`,
responses_protocol.py) and the model list (`GET /v1/models`, `GET /v1/models/{id}`).

The same rules, faults, latency and record as the Messages fake (server.py); the real
`openai` SDK, OpenCode (Chat Completions) and Codex (Responses) talk to it. The base URL an
OpenAI client wants ends in `/v1`: `server.v1_url`.
Command line: `python -m tests.fakes.openai_server --port 8766 --rules rules.yaml`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tests.fakes.chat_protocol import CHAT, ChatProtocol
from tests.fakes.command_line import common_parser, common_settings, serve
from tests.fakes.faults import Fault, openai_error_body
from tests.fakes.handler import RecordedRequest, RequestHandler
from tests.fakes.responses_protocol import RESPONSES, ResponsesProtocol
from tests.fakes.rules import Rule
from tests.fakes.server import FakeServer, RuleLike

__all__ = ["FakeOpenAI", "Fault", "RecordedRequest", "Rule", "main"]

MODELS = "/v1/models"
DEFAULT_MODELS = ("gpt-fake",)


class FakeOpenAI(FakeServer):
    """The fake OpenAI server. Use as a context manager, or call start() / stop().

    Takes FakeServer's arguments (rules, default, latency, faults, seed, host, port,
    record_file, verbose) and `models`: the ids `GET /v1/models` lists (any model may be
    requested all the same).
    """

    label = "fake-openai"
    request_id_headers = ("x-request-id",)
    protocols = {CHAT: ChatProtocol(), RESPONSES: ResponsesProtocol()}

    def __init__(
        self,
        rules: Iterable[RuleLike] | None = None,
        *,
        models: Iterable[str] = DEFAULT_MODELS,
        **settings: Any,
    ) -> None:
        super().__init__(rules, **settings)
        self.models = list(models)

    @property
    def v1_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`: the SDK's `base_url`, OpenCode's `baseURL`, Codex's
        provider `base_url`."""
        return self.base_url + "/v1"

    def not_found_body(self, message: str) -> Any:
        return openai_error_body("invalid_request_error", message)

    def serve_other(self, handler: RequestHandler, record: RecordedRequest) -> bool:
        if record.method != "GET" or not (record.path + "/").startswith(MODELS + "/"):
            return False
        listed = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models
        ]
        wanted = record.path[len(MODELS) + 1 :]
        if not wanted:
            handler.send_json(record, 200, {"object": "list", "data": listed})
            return True
        found = next((m for m in listed if m["id"] == wanted), None)
        if found is None:
            return False
        handler.send_json(record, 200, found)
        return True


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted, after printing the `/v1` base URL on stdout."""
    parser = common_parser("python -m tests.fakes.openai_server", __doc__.splitlines()[0])
    parser.add_argument(
        "--model", action="append", default=[], help="an id GET /v1/models lists; repeatable"
    )
    args = parser.parse_args(argv)
    server = FakeOpenAI(models=args.model or DEFAULT_MODELS, **common_settings(args))
    return serve(server, "{base_url}/v1")


if __name__ == "__main__":
    sys.exit(main())
