"""A loopback stand-in of the Anthropic Messages API for tests, benchmarks and manual runs.

Scripted replies (rules), latency, fault injection and a record of every request (server.py),
the Messages protocol (messages_protocol.py), Message Batches (batches.py), a rate limit
(ratelimit.py) and simulated prompt caching (replies.py); the real `anthropic` SDK and the
real `claude` CLI talk to it.
Command line: `python -m tests.fakes.anthropic_server --port 8765 --rules rules.yaml`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tests.fakes.batches import BATCHES, BatchStore
from tests.fakes.command_line import common_parser, common_settings, serve
from tests.fakes.faults import Fault, error_body
from tests.fakes.handler import RecordedRequest, RequestHandler
from tests.fakes.messages_protocol import (
    COUNT_TOKENS,
    MESSAGES,
    CountTokensProtocol,
    MessagesProtocol,
)
from tests.fakes.ratelimit import TokenBucket
from tests.fakes.replies import UsageMeter
from tests.fakes.rules import Rule
from tests.fakes.server import FakeServer, RuleLike

__all__ = ["FakeAnthropic", "Fault", "RecordedRequest", "Rule", "main"]

HELLO = (
    "/api/hello"  # the claude CLI's connectivity probe (HEAD), unless nonessential traffic is off
)


class FakeAnthropic(FakeServer):
    """The fake Messages API server. Use as a context manager, or call start() / stop().

    Takes FakeServer's arguments (rules, default, latency, faults, seed, host, port,
    record_file, verbose) and:
        batch_seconds: how long a Message Batch stays `in_progress` (see batches.py).
        rate_limit: (requests per second, burst): a token bucket on /v1/messages answering
            429 with `retry-after` and `anthropic-ratelimit-requests-*` headers (ratelimit.py).
    """

    label = "fake-anthropic"
    request_id_headers = ("request-id",)
    protocols = {MESSAGES: MessagesProtocol(), COUNT_TOKENS: CountTokensProtocol()}

    def __init__(
        self,
        rules: Iterable[RuleLike] | None = None,
        *,
        batch_seconds: float = 0.0,
        rate_limit: tuple[float, int] | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(rules, **settings)
        self.batches = BatchStore(self, batch_seconds)
        self.bucket = TokenBucket(rate_limit[0], rate_limit[1]) if rate_limit else None
        self.usage = UsageMeter()

    def _forget(self) -> None:
        self.usage = UsageMeter()  # the prompt cache

    def not_found_body(self, message: str) -> Any:
        return error_body("not_found_error", message)

    def serve_other(self, handler: RequestHandler, record: RecordedRequest) -> bool:
        if record.path == HELLO and record.method in ("GET", "HEAD"):
            handler.send_json(record, 200, {})
            return True
        if record.path == BATCHES or record.path.startswith(BATCHES + "/"):
            status, payload = self.batches.answer(record.method, record.path, record.body)
            if not isinstance(payload, str):  # results go out as JSON lines
                handler.send_json(record, status, payload)
                return True
            data = payload.encode()
            record.status, record.reply = status, payload
            handler.start(status, "application/binary", len(data))
            handler.wfile.write(data)
            return True
        return False


# -- command line ------------------------------------------------------------------------------


def _parse_rate_limit(spec: str | None) -> tuple[float, int] | None:
    """`RATE:BURST` (e.g. `10:5`) -> (10.0, 5); None when not given."""
    if not spec:
        return None
    rate, _, burst = spec.partition(":")
    return float(rate), int(burst or max(1, round(float(rate))))


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted, after printing the base URL on stdout."""
    parser = common_parser("python -m tests.fakes.anthropic_server", __doc__.splitlines()[0])
    parser.add_argument(
        "--batch-seconds", type=float, default=0.0, help="seconds a Message Batch stays in_progress"
    )
    parser.add_argument(
        "--rate-limit",
        metavar="RATE:BURST",
        help="token bucket on /v1/messages: requests per second and burst",
    )
    args = parser.parse_args(argv)
    server = FakeAnthropic(
        batch_seconds=args.batch_seconds,
        rate_limit=_parse_rate_limit(args.rate_limit),
        **common_settings(args),
    )
    return serve(server, "{base_url}")


if __name__ == "__main__":
    sys.exit(main())
