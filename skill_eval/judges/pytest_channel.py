"""The harness's end of the pytest plugin's result channel: a socketpair whose child end the
judgement inherits by fd (no path a test could derive), a per-judgement nonce on every line,
and the streamed events folded into the summary `pytest_verdict.verdict` reads."""

from __future__ import annotations

import json
import secrets
import socket
import threading
from typing import Any

CHANNEL_ENV = "SKILL_EVAL_PYTEST_CHANNEL"
MAX_BYTES = 4 * 1024 * 1024  # a summary is a few KB; more is noise we stop reading


class Channel:
    """Create before starting pytest; `child_fd` goes into `pass_fds` and the environment,
    `start()` after the process started, `summary()` after it ended."""

    def __init__(self) -> None:
        self._ours, self._theirs = socket.socketpair()
        self.nonce = secrets.token_hex(16)
        self.child_fd = self._theirs.fileno()
        self._events: list[dict[str, Any]] = []
        self.forged = 0  # lines not carrying the nonce: written by something but the plugin
        self._reader = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        """Close our copy of the child's end, send the nonce, and read in the background
        (the plugin must never block on a full socket buffer)."""
        self._theirs.close()
        try:
            self._ours.sendall(self.nonce.encode() + b"\n")
        except OSError:
            pass
        self._reader.start()

    def _read(self) -> None:
        buffer, total, prefix = b"", 0, self.nonce.encode() + b" "
        while True:
            try:
                chunk = self._ours.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_BYTES:
                self.forged += 1
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self._take(line, prefix)

    def _take(self, line: bytes, prefix: bytes) -> None:
        if not line.startswith(prefix):
            self.forged += 1
            return
        try:
            event = json.loads(line[len(prefix) :])
        except ValueError:
            self.forged += 1
            return
        if isinstance(event, dict):
            self._events.append(event)

    def close(self, wait: float = 2.0) -> None:
        """Stop reading: at once when every holder of the child's end has gone, else after
        `wait` seconds (a process the tests forked out of reach may still hold it)."""
        started = self._reader.ident is not None  # not when pytest could not be started
        if started:
            self._reader.join(wait)
        try:
            self._ours.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if started:
            self._reader.join(1.0)
        self._ours.close()
        self._theirs.close()

    def events(self) -> list[dict[str, Any]]:
        """Every event read so far that carried the nonce (judges/python_jail.py reads its
        one answer so)."""
        return list(self._events)

    def summary(self) -> dict[str, Any] | None:
        """What `verdict` reads: None when no session started; `phase` "finished" with the
        plugin's summary; else "session" with the outcomes so far and the test that was
        running (`running`) when the process ended."""
        events = list(self._events)
        if not any(e.get("event") == "session" for e in events):
            return None
        finished = [e for e in events if e.get("event") == "finished"]
        if finished:
            return {**finished[-1], "phase": "finished", "forged": self.forged}
        outcomes: dict[str, str] = {}
        running = ""
        collected = 0
        for event in events:
            kind, name = event.get("event"), str(event.get("name", ""))
            if kind == "collected":
                collected = int(event.get("count") or 0)
            elif kind == "start":
                running = name
            elif kind == "end":
                outcomes[name] = str(event.get("outcome", ""))
                running = "" if running == name else running
        counts = {
            key: sum(1 for v in outcomes.values() if v == key)
            for key in ("passed", "failed", "error", "skipped", "xfailed")
        }
        return {
            "phase": "session",
            "collected": collected,
            "passed": counts["passed"],
            "failed": counts["failed"] + (1 if running else 0),
            "errors": counts["error"],
            "skipped": counts["skipped"],
            "xfailed": counts["xfailed"],
            "running": running,
            "forged": self.forged,
        }
