"""JUnit XML from an evaluation artifact, for CI systems: one test case per task (the
candidate's result), the verdict and the comparison as suite properties.

One more test case, named `verdict`, is the verdict itself, so the JUnit agrees with the exit
code of `skill-eval run`: a `<failure>` on `fail` and an `<error>` on `error` (both with the
reason), `<skipped>` on `skipped` (CI shows *why* nothing ran), passing on `pass`. A task can
fail while the verdict passes (the baseline failed it too), and every task can pass while the
verdict is `error` (too many attempts ended in error) or `fail`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from ..stats.results import cause_line
from . import triggers as trigger_report
from .arms import arm_names
from .verdict_text import MOCK_MARK

# Characters XML 1.0 forbids anywhere (most C0 controls, lone surrogates, U+FFFE/U+FFFF).
_XML_FORBIDDEN = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Bidirectional controls (U+202E and kin) make a report show text in another order than it
# has ("Trojan Source"): model output never gets to reorder what a reader sees.
BIDI_CHARS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI = re.compile(f"[{BIDI_CHARS}]")
MAX_OUTPUT_CHARS = 4000
MAX_MESSAGE_CHARS = 500


def xml_text(value: Any) -> str:
    """`value` as a string XML 1.0 can carry (ElementTree escapes `<`, `&` and quotes)."""
    return _BIDI.sub("", _XML_FORBIDDEN.sub("", "" if value is None else str(value)))


def _status(result: Mapping[str, Any]) -> str:
    status = result.get("status")
    if status in ("passed", "failed", "error"):
        return str(status)
    if result.get("passed"):
        return "passed"
    return "error" if result.get("error") else "failed"


def _seconds(duration_ms: Any) -> str:
    try:
        return f"{max(0, int(duration_ms)) / 1000:.3f}"
    except (TypeError, ValueError):
        return "0.000"


def rate_text(value: Any, *, signed: bool = False) -> str:
    """A rate or delta as every report prints it: four decimals, always (1.0000, +0.6000)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{number:+.4f}" if signed else f"{number:.4f}"


def journal_path(artifact: Mapping[str, Any]) -> str | None:
    """Where the full record of the run is: the run directory's attempts.jsonl."""
    run_dir = (artifact.get("manifest") or {}).get("run_dir")
    return f"{str(run_dir).rstrip('/')}/attempts.jsonl" if run_dir else None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _attempt_line(attempt: Mapping[str, Any]) -> str:
    judge = attempt.get("judge") or {}
    why = attempt.get("error") or judge.get("details") or ""
    return f"attempt {attempt.get('index', '?')}: {attempt.get('status', '?')}" + (
        f": {why}" if why else ""
    )


def _failure_message(result: Mapping[str, Any]) -> str:
    """The judge's details of the first failing attempt, else the task's own details."""
    for attempt in result.get("attempts") or ():
        if attempt.get("status") == "failed":
            details = (attempt.get("judge") or {}).get("details")
            if details:
                return str(details)
    return str(result.get("details") or "failed")


def _body(result: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> str:
    attempts = list(result.get("attempts") or ())
    lines = [_attempt_line(a) for a in attempts]
    if baseline is not None:
        lines.append(
            f"baseline: {_status(baseline)} "
            f"({baseline.get('passes', int(bool(baseline.get('passed'))))}"
            f"/{len(baseline.get('attempts') or ()) or 1} attempts passed)"
        )
    shown = next((a for a in attempts if a.get("status") == "failed"), None)
    if shown is not None and shown.get("output"):
        output = str(shown["output"])
        lines += [
            f"--- output of attempt {shown.get('index', '?')} "
            f"(first {MAX_OUTPUT_CHARS} characters) ---"
            if len(output) > MAX_OUTPUT_CHARS
            else f"--- output of attempt {shown.get('index', '?')} ---",
            output[:MAX_OUTPUT_CHARS],
        ]
        if shown.get("output_blob"):  # the record holds a preview: say where the whole is
            lines.append(
                f"--- the whole output ({shown.get('output_size')} bytes) is "
                f"{shown['output_blob']} in the run directory ---"
            )
    return "\n".join(lines)


def _maybe_rate(value: Any, signed: bool = False) -> str | None:
    return None if value is None else rate_text(value, signed=signed)


def _properties(artifact: Mapping[str, Any]) -> list[tuple[str, Any]]:
    ev = artifact.get("evaluation") or {}
    manifest = artifact.get("manifest") or {}
    comparison = artifact.get("comparison") or {}
    policy = ev.get("policy")
    interval = comparison.get("interval")
    props: list[tuple[str, Any]] = [
        ("verdict", ev.get("verdict")),
        ("mocked", "true" if ev.get("mocked") is True else None),  # no model made the verdict
        ("reason", ev.get("reason")),
        ("conclusion", ev.get("conclusion")),
        ("policy", policy.get("name") if isinstance(policy, Mapping) else policy),
        ("candidate_pass_rate", _maybe_rate(ev.get("execution_pass_rate"))),
        ("baseline_pass_rate", _maybe_rate(ev.get("baseline_pass_rate"))),
        ("delta", _maybe_rate(ev.get("delta"), signed=True)),
    ]
    if isinstance(interval, list | tuple) and len(interval) == 2:
        props += [
            ("delta_interval_low", interval[0]),
            ("delta_interval_high", interval[1]),
            ("delta_interval_confidence", comparison.get("confidence")),
            ("delta_interval_method", comparison.get("method")),
        ]
    props += [
        ("mcnemar_p", comparison.get("mcnemar_p")),
        *((f"{arm}_arm", name) for arm, name in arm_names(artifact).items()),
        ("candidate_id", artifact.get("candidate_id")),
        ("run_id", artifact.get("run_id")),
        ("pass_k", artifact.get("pass_k")),
        ("samples", manifest.get("samples")),
        ("executor", (manifest.get("executor") or {}).get("kind")),
        ("model", manifest.get("model")),
        ("suite_sha256", (manifest.get("task_suite") or {}).get("sha256")),
        ("artifact", artifact.get("truth_anchor")),
        ("attempts_record", journal_path(artifact)),
        *trigger_report.junit_properties(artifact),
    ]
    return [(name, value) for name, value in props if value is not None]


def _verdict_case(
    suite: ET.Element, classname: str, artifact: Mapping[str, Any], counts: dict[str, int]
) -> None:
    """The test case of the verdict: it fails exactly when the run's exit code does."""
    ev = artifact.get("evaluation") or {}
    verdict = ev.get("verdict")
    reason = str(ev.get("reason") or "")
    if not artifact.get("candidate_results"):
        reason = reason or f"verdict {verdict or '?'}: no task was run"
    counts["tests"] += 1
    case = ET.SubElement(suite, "testcase", classname=classname, name="verdict", time="0.000")
    shown = f"verdict {verdict}" + (f" {MOCK_MARK}" if ev.get("mocked") is True else "")
    message = xml_text(_clip(shown + (f": {reason}" if reason else ""), MAX_MESSAGE_CHARS))
    if verdict == "pass":
        if reason or ev.get("mocked") is True:
            ET.SubElement(case, "system-out").text = message
    elif verdict == "skipped":
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=xml_text(reason or "skipped"))
    elif verdict == "fail":
        counts["failures"] += 1
        node = ET.SubElement(case, "failure", type="verdict", message=message)
        node.text = xml_text(_verdict_body(ev, reason))
    else:  # error, or an artifact without a known verdict: never green
        counts["errors"] += 1
        node = ET.SubElement(case, "error", type="verdict", message=message)
        node.text = xml_text(_verdict_body(ev, reason))


def _verdict_body(ev: Mapping[str, Any], reason: str) -> str:
    lines = [reason] if reason else []
    for label, key in (
        ("candidate pass rate", "execution_pass_rate"),
        ("baseline pass rate", "baseline_pass_rate"),
        ("delta", "delta"),
    ):
        if ev.get(key) is not None:
            lines.append(f"{label}: {rate_text(ev[key], signed=key == 'delta')}")
    return "\n".join(lines)


def render_junit(artifact: Mapping[str, Any]) -> str:
    """JUnit XML: `<testsuites>` holding one `<testsuite>` with a test case per task."""
    suite_name = str(
        artifact.get("task_suite_skill_id") or artifact.get("candidate_id") or "skill-eval"
    )
    classname = xml_text(suite_name)
    baseline = {r.get("task_id"): r for r in artifact.get("baseline_results") or ()}
    root = ET.Element("testsuites", name="skill-eval")
    suite = ET.SubElement(root, "testsuite", name=xml_text(suite_name))
    started = str((artifact.get("manifest") or {}).get("started_at") or "")
    if started:
        suite.set("timestamp", xml_text(started.removesuffix("Z").split(".")[0]))
    props = ET.SubElement(suite, "properties")
    for name, value in _properties(artifact):
        ET.SubElement(props, "property", name=name, value=xml_text(value))

    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_ms = 0
    for result in artifact.get("candidate_results") or ():
        counts["tests"] += 1
        duration = result.get("duration_ms") or 0
        total_ms += duration if isinstance(duration, int) else 0
        case = ET.SubElement(
            suite,
            "testcase",
            classname=classname,
            name=xml_text(result.get("task_id")),
            time=_seconds(duration),
        )
        status = _status(result)
        if status == "failed":
            counts["failures"] += 1
            # The attribute holds the line that explains it; the body keeps every detail.
            message = cause_line(_failure_message(result))
            node = ET.SubElement(
                case, "failure", type="failed", message=xml_text(_clip(message, MAX_MESSAGE_CHARS))
            )
            node.text = xml_text(_body(result, baseline.get(result.get("task_id"))))
        elif status == "error":
            counts["errors"] += 1
            message = cause_line(str(result.get("error") or result.get("details") or "error"))
            node = ET.SubElement(
                case, "error", type="error", message=xml_text(_clip(message, MAX_MESSAGE_CHARS))
            )
            node.text = xml_text(_body(result, None))
        elif any(a.get("status") != "passed" for a in result.get("attempts") or ()):
            out = ET.SubElement(case, "system-out")
            out.text = xml_text(_body(result, None))
    _verdict_case(suite, classname, artifact, counts)

    for element in (root, suite):
        for name, value in counts.items():
            element.set(name, str(value))
        element.set("time", _seconds(total_ms))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
