"""The harness's own pytest plugin, loaded into every pytest judgement with `-p`: it records what
was collected and how each test ended, and writes that summary as JSON to the file named by
`SKILL_EVAL_PYTEST_SUMMARY`, so the judge never trusts pytest's exit code alone.

This file must import nothing but the standard library: the judge copies it into each
judgement's temp dir and loads it there as a top-level module (importing it through the
`skill_eval.judges` package would cost ~150 ms of jsonschema per judgement). It is written to be
read by `pytest_judge.read_summary`; code under test can in principle tamper with it (it runs in
the same process), so it defends against accidents and the obvious tricks, not against malice.

Summary keys: `phase` ("session" once the session has started, "finished" at its end),
`collected`, `passed`, `failed`, `errors`, `skipped`, `xfailed`, `interrupted`,
`interrupt_reason`, `internal_error` (its last line, or ""), `exitstatus`, `failures`, `skips`.
"""

from __future__ import annotations

import json
import os
from typing import Any

SUMMARY_ENV = "SKILL_EVAL_PYTEST_SUMMARY"
PATH_ENV = "PYTHONPATH"

# Read and forgotten at load time: tests (and what they spawn) never see where the summary goes.
_summary_path = os.environ.pop(SUMMARY_ENV, None)
os.environ.pop(PATH_ENV, None)  # only ever set by the judge, to find this module

_outcomes: dict[str, str] = {}  # nodeid -> passed | failed | error | skipped | xfailed
_failures: list[dict[str, str]] = []
_skips: list[str] = []
_state: dict[str, Any] = {"collected": 0, "interrupted": False, "interrupt_reason": "",
                          "internal_error": "", "collect_errors": 0, "module_skips": 0}


def _write(summary: dict[str, Any]) -> None:
    if not _summary_path:
        return
    tmp = f"{_summary_path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(summary, handle)
        os.replace(tmp, _summary_path)
    except OSError:  # no summary: the judge reports that it could not judge
        pass


def _name(nodeid: str) -> str:
    """`fixtures/test_x.py::test_y[1]` -> `test_y[1]`; a module's nodeid stays whole."""
    return nodeid.split("::", 1)[-1]


def _message(report: Any) -> str:
    """The lines worth showing an author: the crash message, else the `E ` lines."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    message = str(getattr(crash, "message", "") or "").strip()
    if message:
        return message
    text = str(getattr(report, "longreprtext", "") or "")
    e_lines = [ln.strip()[1:].strip() for ln in text.splitlines() if ln.strip().startswith("E ")]
    return "\n".join(e_lines[-6:]) or text.strip()[-300:]


def _skip_reason(report: Any) -> str:
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason.removeprefix("Skipped: ")
    return ""


def pytest_sessionstart(session: Any) -> None:
    _write({"phase": "session"})


def pytest_collection_finish(session: Any) -> None:
    _state["collected"] = len(session.items)


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _state["collect_errors"] += 1
        _failures.append({"name": f"collection error in {report.nodeid or 'the session'}",
                          "message": _message(report)})
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
        _failures.append({"name": _name(nodeid) + ("" if when == "call" else f" ({when})"),
                          "message": _message(report)})
    elif report.skipped:
        if hasattr(report, "wasxfail"):
            _outcomes[nodeid] = "xfailed"
            _skips.append(f"{_name(nodeid)}: xfail {report.wasxfail}".rstrip())
        else:
            _outcomes[nodeid] = "skipped"
            _skips.append(f"{_name(nodeid)}: {_skip_reason(report)}".rstrip(": "))
    elif when == "call" and nodeid not in _outcomes:
        _outcomes[nodeid] = "passed"


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
    counts = {key: sum(1 for v in _outcomes.values() if v == key)
              for key in ("passed", "failed", "error", "skipped", "xfailed")}
    _write({
        "phase": "finished",
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
    })
