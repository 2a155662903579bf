"""The `turns` plugin's fake API on loopback: `POST /turns/v0/next` answers a first turn with
a `put` of report.md and the next with an answer, each with its tokens; every request is
recorded (path, headers, body)."""

from __future__ import annotations

import http.server
import json
import threading
from types import TracebackType
from typing import Any

MODEL = "turn-1"
REPORT = "# Report\nWritten by the turns agent.\n"


class TurnServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        seen = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the base class's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if body.get("done"):
                    reply: dict[str, Any] = {"say": "Wrote report.md"}
                else:
                    put = {"path": "report.md", "text": REPORT}
                    reply = {"do": [{"id": "turn-call-1", "tool": "put", "args": put}]}
                reply.update(model=MODEL, spent={"in": 12, "out": 4})
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> TurnServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
