"""What every fake model server shares: the threaded HTTP server, its lifecycle, the live
configuration (rules, default reply, faults, latency), the record of every request, and the
command line's common flags.

`FakeAnthropic` (anthropic_server.py) and `FakeOpenAI` (openai_server.py) subclass it with
their protocols (`protocols`: path -> Protocol) and whatever else their API serves
(`serve_other`); command_line.py holds their command lines' common part.
"""

from __future__ import annotations

import json
import random
import socket
import sys
import threading
from collections.abc import Iterable, Mapping
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from tests.fakes.conversation import Conversation
from tests.fakes.faults import Fault, coerce_fault
from tests.fakes.handler import Protocol, RecordedRequest, RequestHandler
from tests.fakes.rules import Rule, coerce_rule, coerce_rules

if TYPE_CHECKING:
    from tests.fakes.ratelimit import TokenBucket

RuleLike = Rule | Mapping[str, Any] | str
FaultLike = Fault | Mapping[str, Any] | str


class _HTTPServer(ThreadingHTTPServer):
    """Joins its handler threads on close, and can cut idle keep-alive connections first."""

    daemon_threads = False
    block_on_close = True
    # The stdlib default backlog of 5 drops SYNs when benchmarks open 16+ connections at once.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], fake: FakeServer) -> None:
        self.fake = fake
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, RequestHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client killed mid-connection (run_eval's early stop, a jail ended) resets it: what
        # clients do, not a fault of the fake worth a traceback. Anything else is printed.
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        """Wake handler threads blocked reading from idle keep-alive connections."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _coerce_default(default: RuleLike | None) -> Rule | None:
    """The default reply as a Rule named "default" unless it has a name of its own."""
    if default is None:
        return None
    if isinstance(default, str):
        return Rule(name="default", text=default)
    if isinstance(default, Mapping):
        return coerce_rule({"name": "default", **default})
    if not default.name:
        default.name = "default"
    return default


class FakeServer:
    """A fake model API server. Use as a context manager, or call start() / stop().

    Args:
        rules: reply rules tried in order (Rule objects, mappings, or bare reply strings).
        default: the reply when no rule matches (a Rule, a mapping, or a text).
        latency: seconds to wait before every reply (a rule's own `latency` replaces it).
        faults: faults to inject (Fault objects, mappings, or bare kind names).
        seed: seed of the RNG that rate-based faults draw from.
        host, port: where to listen; port 0 picks a free port.
        record_file: append every request, as JSON lines, to this file.
        verbose: log one line per request to stderr.
    """

    label = "fake"  # in thread names and log lines
    request_id_headers: tuple[str, ...] = ("request-id",)
    protocols: Mapping[str, Protocol] = {}  # POST path -> the protocol serving it
    bucket: TokenBucket | None = None

    def __init__(
        self,
        rules: Iterable[RuleLike] | None = None,
        *,
        default: RuleLike | None = None,
        latency: float = 0.0,
        faults: Iterable[FaultLike] | None = None,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        record_file: str | Path | None = None,
        verbose: bool = False,
    ) -> None:
        self.latency = latency
        self.host = host
        self.verbose = verbose
        self.record_file = Path(record_file) if record_file else None
        self._requested_port = port
        self._lock = threading.Lock()
        self._file_lock = threading.Lock()
        self._rules = coerce_rules(rules)
        self._default = _coerce_default(default)
        self._faults = [coerce_fault(f) for f in faults or []]
        self._rng = random.Random(seed)
        self._requests: list[RecordedRequest] = []
        self._per_path: dict[str, int] = {}
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what a subclass serves --------------------------------------------------------------

    def protocol_for(self, method: str, path: str) -> Protocol | None:
        """The protocol answering this request, or None (then `serve_other`, else 404)."""
        return self.protocols.get(path) if method == "POST" else None

    def serve_other(self, handler: RequestHandler, record: RecordedRequest) -> bool:
        """Answer a request no protocol serves; False leaves it to the 404."""
        return False

    def not_found_body(self, message: str) -> Any:
        """The API's 404 body for an unknown path."""
        raise NotImplementedError

    @property
    def model_paths(self) -> list[str]:
        """Where a fault without a `path` strikes: the endpoints that answer by rules."""
        return [path for path, protocol in self.protocols.items() if protocol.uses_rules]

    def _forget(self) -> None:
        """What a subclass forgets on reset(), besides the record and the counters."""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind and serve in a background thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError(f"{type(self).__name__} is already running")
        self._stopping.clear()
        self._httpd = _HTTPServer((self.host, self._requested_port), self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"{self.label}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections, and join every thread the server started."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.cut_connections()
        httpd.server_close()
        if thread is not None:
            thread.join()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (only while running)."""
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`, without a path."""
        return f"http://{self.host}:{self.port}"

    # -- configuration -----------------------------------------------------------------------

    @property
    def rules(self) -> list[Rule]:
        """A copy of the current rules, in order."""
        with self._lock:
            return list(self._rules)

    def set_rules(self, rules: Iterable[RuleLike], default: RuleLike | None = None) -> None:
        """Replace the rules (and the default reply, when given)."""
        new = coerce_rules(rules)
        with self._lock:
            self._rules = new
            if default is not None:
                self._default = _coerce_default(default)

    def add_rule(self, rule: RuleLike) -> Rule:
        """Append one rule (tried after the existing ones) and return it."""
        with self._lock:
            new = coerce_rule(rule, len(self._rules))
            self._rules.append(new)
        return new

    @property
    def faults(self) -> list[Fault]:
        """A copy of the current faults, in order; the first that triggers wins."""
        with self._lock:
            return list(self._faults)

    def add_fault(self, kind: str | Fault, **trigger: Any) -> Fault:
        """Inject a fault, e.g. `add_fault("rate_limit", first=1, retry_after=0)`."""
        fault = kind if isinstance(kind, Fault) else Fault(kind=kind, **trigger)
        with self._lock:
            self._faults.append(fault)
        return fault

    def set_faults(self, faults: Iterable[FaultLike]) -> None:
        """Replace all faults."""
        new = [coerce_fault(f) for f in faults]
        with self._lock:
            self._faults = new

    def clear_faults(self) -> None:
        """Remove all faults."""
        self.set_faults([])

    def reset(self) -> None:
        """Forget recorded requests and the per-path counters (and what a subclass keeps)."""
        with self._lock:
            self._requests.clear()
            self._per_path.clear()
            self._forget()

    # -- the record --------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def count(self) -> int:
        """How many requests were received (any path)."""
        with self._lock:
            return len(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The requests to one path (query string ignored), e.g. "/v1/messages"."""
        return [r for r in self.requests if r.path == path]

    def requests_matching(self, text: str) -> list[RecordedRequest]:
        """The requests whose system prompt or messages contain `text`."""
        return [r for r in self.requests if text in r.text]

    @property
    def unknown_paths(self) -> list[str]:
        """Paths that were answered with 404, in order, without repeats."""
        seen: dict[str, None] = {}
        for r in self.requests:
            if r.fault is None and r.status == 404 and r.protocol is None:
                seen[f"{r.method} {r.path}"] = None
        return list(seen)

    # -- used by the request handler ---------------------------------------------------------

    def _admit(self, record: RecordedRequest) -> int:
        """Record a request; returns its 1-based number among requests to its path."""
        with self._lock:
            record.index = len(self._requests)
            self._requests.append(record)
            number = self._per_path.get(record.path, 0) + 1
            self._per_path[record.path] = number
        return number

    def _count(self, path: str) -> int:
        """Count one more request to a pseudo path (a batch's requests); its 1-based number."""
        with self._lock:
            number = self._per_path.get(path, 0) + 1
            self._per_path[path] = number
        return number

    def _pick_fault(self, path: str, number: int) -> Fault | None:
        model_paths = self.model_paths
        with self._lock:
            for fault in self._faults:
                if fault.triggers(path, number, self._rng, model_paths):
                    return fault
        return None

    def _pick_rule(self, path: str, convo: Conversation) -> Rule | None:
        with self._lock:
            rules = list(self._rules)
            default = self._default
        for rule in rules:
            if rule.claim(path, convo):
                return rule
        return default

    def _sleep(self, seconds: float) -> None:
        """Wait without holding anything; returns early when the server is stopping."""
        if seconds > 0:
            self._stopping.wait(seconds)

    def _replied(self, record: RecordedRequest) -> None:
        if self.verbose:
            what = record.fault or record.rule or ""
            print(
                f"[{self.label}] {record.method} {record.path} "
                f"stream={record.stream} -> {record.status} {what}",
                file=sys.stderr,
                flush=True,
            )
        if self.record_file is not None:
            line = json.dumps(record.to_dict(), ensure_ascii=False)
            with self._file_lock, self.record_file.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
