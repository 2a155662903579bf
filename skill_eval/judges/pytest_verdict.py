"""What a pytest judgement concludes from one run: pure, from pytest's exit code, the summary
the harness plugin streamed over its channel (judges/pytest_channel.py) and the log's tail.

Anything the tested code can cause (a failure, a skip, a crash, a tampered channel) is a
failed judgement; only "pytest never ran the suite's tests" or "pytest rejected our own
invocation" is an error (could not judge).
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from typing import Any

from ..core.model import JudgeResult

MAX_DETAILS = 2000
__all__ = ["MAX_DETAILS", "exit_text", "failed", "verdict"]


def _trim(text: str) -> str:
    return text if len(text) <= MAX_DETAILS else text[: MAX_DETAILS - 15] + "\n... (trimmed)"


def exit_text(code: int, isolated: bool) -> str:
    """`exit 1`, `killed by SIGKILL`; under the namespace's sh a signal death reads 128+N."""
    signum = -code if code < 0 else (code - 128 if isolated and code > 128 else 0)
    try:
        return f"exit {code}" if not signum else f"killed by {signal.Signals(signum).name}"
    except ValueError:
        return f"exit {code}"


def failed(details: str, data: dict[str, Any], score: float = 0.0) -> JudgeResult:
    """A failed judgement (the tested code's doing), its details trimmed."""
    return JudgeResult(passed=False, score=score, details=_trim(details), data=data)


def _lines(entries: list[Any], limit: int = 10) -> str:
    rows = [
        f"{e.get('name', '?')}: {e.get('message', '')}" if isinstance(e, dict) else str(e)
        for e in entries[:limit]
    ]
    return "\n".join(rows)


def verdict(
    code: int, summary: Mapping[str, Any] | None, log: str, data: dict[str, Any]
) -> JudgeResult:
    """Pure: the result of a pytest run from its exit code, the plugin's summary and the log's
    tail. Errors only when pytest never reached a session or rejected our own invocation;
    everything the tested code can cause is a failure."""
    if summary is None:  # nothing of the suite's tests, let alone the output, has run
        isolated = bool(data.get("isolated"))
        return JudgeResult.failure(
            f"pytest could not start a session ({exit_text(code, isolated)}):\n{log}"
        )
    if summary.get("forged"):  # whatever else happened, the run cannot be trusted
        why = (
            ""
            if summary.get("phase") == "finished"
            else "\n" + _unfinished(code, summary, log, data).details
        )
        return failed(
            "the result channel received lines the harness plugin did not send: "
            "the tested code tampered with it" + why,
            data,
        )
    if summary.get("phase") != "finished":
        return _unfinished(code, summary, log, data)
    counts = _record_counts(code, summary, data)
    stopped = _stopped(code, summary, log, data, counts)
    return stopped if stopped is not None else _judged(code, summary, log, data, counts)


def _record_counts(code: int, summary: Mapping[str, Any], data: dict[str, Any]) -> dict[str, int]:
    """The finished run's counts by outcome; the judgement's data records them."""
    counts = {
        k: int(summary.get(k) or 0)
        for k in ("collected", "passed", "failed", "errors", "skipped", "xfailed")
    }
    data.update(
        {
            "exit_code": code,
            "tests": counts["collected"],
            "passed": counts["passed"],
            "failed": counts["failed"] + counts["errors"],
            "skipped": counts["skipped"] + counts["xfailed"],
        }
    )
    return counts


def _stopped(
    code: int,
    summary: Mapping[str, Any],
    log: str,
    data: dict[str, Any],
    counts: Mapping[str, int],
) -> JudgeResult | None:
    """A session that finished without running its course: interrupted, our invocation
    rejected, or pytest's internal error; None when it ran its course."""
    isolated = bool(data.get("isolated"))
    if summary.get("interrupted"):
        return failed(
            f"pytest was interrupted ({summary.get('interrupt_reason') or 'no reason'}"
            f", {exit_text(code, isolated)}): the run did not complete\n"
            + _lines(summary.get("failures") or []),
            data,
        )
    if code == 4 and counts["collected"] == 0 and not counts["errors"]:
        return JudgeResult.failure(f"pytest rejected the judge's invocation (exit 4):\n{log}")
    if code == 3 or summary.get("internal_error"):
        return failed(
            f"pytest hit an internal error ({exit_text(code, isolated)}): "
            f"{summary.get('internal_error') or log}",
            data,
        )
    return None


def _judged(
    code: int,
    summary: Mapping[str, Any],
    log: str,
    data: dict[str, Any],
    counts: Mapping[str, int],
) -> JudgeResult:
    """A session that ran its course: passed only when every collected test passed and pytest
    agrees (exit 0); the score is the share of tests that passed."""
    isolated = bool(data.get("isolated"))
    failures, skips = summary.get("failures") or [], summary.get("skips") or []
    total = counts["collected"]
    score = counts["passed"] / total if total else 0.0
    bad = counts["failed"] + counts["errors"]
    if code == 0 == summary.get("exitstatus") and total and counts["passed"] == total and not bad:
        return JudgeResult(passed=True, score=1.0, details=f"{total} test(s) passed", data=data)
    if bad:
        head = (
            f"collection error, pytest was interrupted ({exit_text(code, isolated)})"
            if not total
            else f"{bad} of {total} test(s) failed or errored"
        )
        return failed(head + ":\n" + _lines(failures), data, score)
    if counts["skipped"] and not total:
        return failed("skipped: the test module was skipped, no test ran:\n" + _lines(skips), data)
    if not total:
        return failed(
            f"no tests collected: the test file defines no tests ({exit_text(code, isolated)})",
            data,
        )
    not_run = total - counts["passed"]
    if not_run and not counts["passed"]:
        return failed(
            f"only skipped tests, none ran ({not_run} skipped or xfailed):\n" + _lines(skips), data
        )
    if not_run:
        return failed(
            f"{not_run} of {total} test(s) skipped or xfailed; every collected test "
            f"must pass:\n" + _lines(skips),
            data,
            score,
        )
    return failed(
        f"every test passed but pytest reported {exit_text(code, isolated)}:\n{log}", data, score
    )


def _unfinished(
    code: int, summary: Mapping[str, Any], log: str, data: dict[str, Any]
) -> JudgeResult:
    """The process ended before pytest finished: the test running then fails, the tests that
    ended before keep their streamed outcomes, and the judgement fails."""
    isolated = bool(data.get("isolated"))
    total, passed = int(summary.get("collected") or 0), int(summary.get("passed") or 0)
    running = summary.get("running") or ""
    data.update(
        {
            "exit_code": code,
            "tests": total,
            "passed": passed,
            "failed": int(summary.get("failed") or 0) + int(summary.get("errors") or 0),
        }
    )
    where = f"; the process ended during {running}, which fails" if running else ""
    return failed(
        f"pytest died before finishing its run ({exit_text(code, isolated)}){where}; "
        f"the tested code ended it:\n{log}",
        data,
        passed / total if total else 0.0,
    )
