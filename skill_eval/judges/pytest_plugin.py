"""The harness's own pytest plugin, loaded into every pytest judgement with `-p`: it streams what
was collected, each test's start and outcome as it happens, and a final summary, as JSON lines
over the socket whose fd `SKILL_EVAL_PYTEST_CHANNEL` names, so the judge never trusts pytest's
exit code alone and a process ending inside a test fails that test.

This file must import nothing but the standard library: the judge copies it into each
judgement's temp dir and loads it there as a top-level module (importing it through the
`skill_eval.judges` package would cost ~150 ms of jsonschema per judgement). It is written to be
read by `pytest_channel.Channel`. The socket is no file a test can name, is closed to every
process the tests start, and every line carries a nonce the harness sent over the socket before
any test ran; code under test runs in this same process and could still find the nonce in
memory (references/security.md, "pytest judge"), so this defends against every generic trick,
not against an output written against this plugin's internals.

Events: `session`, `collected` (count), `start` (name), `end` (name, outcome), and `finished`
with the summary: `collected`, `passed`, `failed`, `errors`, `skipped`, `xfailed`, `interrupted`,
`interrupt_reason`, `internal_error` (its last line, or ""), `exitstatus`, `failures`, `skips`.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

CHANNEL_ENV = "SKILL_EVAL_PYTEST_CHANNEL"
PATH_ENV = "PYTHONPATH"


def _open_channel() -> tuple[socket.socket | None, bytes]:
    """The socket to the harness and the nonce it sent first; (None, b"") without a harness."""
    spec = os.environ.pop(CHANNEL_ENV, "")
    if not spec.isdigit():
        return None, b""
    fd = int(spec)
    try:
        os.set_inheritable(fd, False)  # no process a test starts gets the channel
        sock = socket.socket(fileno=fd)
        sock.settimeout(10)
        nonce = b""
        while not nonce.endswith(b"\n") and len(nonce) < 200:
            chunk = sock.recv(200 - len(nonce))
            if not chunk:
                break
            nonce += chunk
        sock.settimeout(None)
    except OSError:
        return None, b""
    return sock, nonce.strip()


# Read at load time, before any test or conftest: what tests spawn never sees the channel.
_channel, _nonce = _open_channel()
os.environ.pop(PATH_ENV, None)  # only ever set by the judge, to find this module

_outcomes: dict[str, str] = {}  # nodeid -> passed | failed | error | skipped | xfailed
_failures: list[dict[str, str]] = []
_skips: list[str] = []
_state: dict[str, Any] = {
    "collected": 0,
    "interrupted": False,
    "interrupt_reason": "",
    "internal_error": "",
    "collect_errors": 0,
    "module_skips": 0,
}


def _send(event: dict[str, Any]) -> None:
    if _channel is None:
        return
    try:
        _channel.sendall(_nonce + b" " + json.dumps(event).encode() + b"\n")
    except OSError:  # no summary: the judge reports that the run did not finish
        pass


def _name(nodeid: str) -> str:
    """`fixtures/test_x.py::test_y[1]` -> `test_y[1]`; a module's nodeid stays whole."""
    return nodeid.split("::", 1)[-1]


def _message(report: Any) -> str:
    """The lines worth showing an author: the crash message, else the `E ` lines."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    message = str(getattr(crash, "message", "") or "").strip()
    if message:
        return message[:2000]  # the channel carries summaries, not megabytes of assertion text
    text = str(getattr(report, "longreprtext", "") or "")
    e_lines = [ln.strip()[1:].strip() for ln in text.splitlines() if ln.strip().startswith("E ")]
    return ("\n".join(e_lines[-6:]) or text.strip()[-300:])[:2000]


def _skip_reason(report: Any) -> str:
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")[:2000]
    return ""


def pytest_sessionstart(session: Any) -> None:
    _send({"event": "session"})


def pytest_collection_finish(session: Any) -> None:
    _state["collected"] = len(session.items)
    _send({"event": "collected", "count": _state["collected"]})


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _send({"event": "start", "name": _name(nodeid)})


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _state["collect_errors"] += 1
        _failures.append(
            {
                "name": f"collection error in {report.nodeid or 'the session'}",
                "message": _message(report),
            }
        )
    elif report.skipped:
        _state["module_skips"] += 1
        _skips.append(f"{report.nodeid}: {_skip_reason(report)}".rstrip(": "))


def pytest_runtest_logreport(report: Any) -> None:
    nodeid, when = report.nodeid, report.when
    if report.failed:
        status = "failed" if when == "call" else "error"
        # A failing teardown after a passing call still makes the test an error.
        if _outcomes.get(nodeid) not in ("failed", "error"):
            _outcomes[nodeid] = status
        _failures.append(
            {
                "name": _name(nodeid) + ("" if when == "call" else f" ({when})"),
                "message": _message(report),
            }
        )
    elif report.skipped:
        if hasattr(report, "wasxfail"):
            _outcomes[nodeid] = "xfailed"
            _skips.append(f"{_name(nodeid)}: xfail {report.wasxfail}"[:2000].rstrip())
        else:
            _outcomes[nodeid] = "skipped"
            _skips.append(f"{_name(nodeid)}: {_skip_reason(report)}".rstrip(": "))
    elif when == "call" and nodeid not in _outcomes:
        _outcomes[nodeid] = "passed"


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _send({"event": "end", "name": _name(nodeid), "outcome": _outcomes.get(nodeid, "passed")})


def pytest_keyboard_interrupt(excinfo: Any) -> None:
    # Called for Ctrl-C, for pytest.exit() whatever return code it asked for, and for pytest's
    # own stop after collection errors (already counted as errors, so not an interruption).
    if excinfo.typename == "Interrupted" and _state["collect_errors"]:
        return
    _state["interrupted"] = True
    reason = getattr(excinfo.value, "msg", None) or str(excinfo.value)
    _state["interrupt_reason"] = f"{excinfo.typename}: {reason}".rstrip(": ")


def pytest_internalerror(excrepr: Any, excinfo: Any) -> None:
    lines = str(excrepr).strip().splitlines()
    _state["internal_error"] = lines[-1] if lines else "internal error"


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    counts = {
        key: sum(1 for v in _outcomes.values() if v == key)
        for key in ("passed", "failed", "error", "skipped", "xfailed")
    }
    _send(
        {
            "event": "finished",
            "collected": _state["collected"],
            "passed": counts["passed"],
            "failed": counts["failed"],
            "errors": counts["error"] + _state["collect_errors"],
            "skipped": counts["skipped"] + _state["module_skips"],
            "xfailed": counts["xfailed"],
            "interrupted": _state["interrupted"],
            "interrupt_reason": _state["interrupt_reason"],
            "internal_error": _state["internal_error"],
            "exitstatus": int(exitstatus),
            "failures": _failures[:50],
            "skips": _skips[:50],
        }
    )
