"""Human and machine reports of an evaluation artifact: the end-of-run table for the terminal,
markdown for a pull request or `$GITHUB_STEP_SUMMARY`, JUnit XML, and the artifact re-checked.

The artifact is read defensively: optional parts (comparison statistics, policy, per-task
stats, baseline cache, usage, errors) appear only when present, and text that came from a
model or a judge is cleaned of control characters before it is shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import artifact as artifact_mod
from .report_junit import journal_path, rate_text, render_junit
from .results import cause_line

FEEDBACK_CHARS = 100
MD_FEEDBACK_CHARS = 120
MD_MAX_ERRORS = 20
MD_COLLAPSE_TASKS = 25

# C0/C1 controls except tab, newline and carriage return (whitespace, handled apart)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SPACE = re.compile(r"\s+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")

Result = Mapping[str, Any]


def _one_line(text: Any, limit: int | None = None) -> str:
    """Text safe for one terminal or table line: no control characters, no newlines."""
    clean = _SPACE.sub(" ", _CONTROL.sub(" ", "" if text is None else str(text))).strip()
    return clean if limit is None or len(clean) <= limit else clean[: limit - 3] + "..."


def _rate(value: Any) -> str:
    return rate_text(value) if value is not None else "n/a"


def _signed_rate(value: Any) -> str:
    return "n/a" if value is None else rate_text(value, signed=True)


def _number(value: Any) -> str:
    if value is None:
        return "n/a"
    text = f"{float(value):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _signed(value: Any) -> str:
    text = _number(value)
    return text if text in ("0", "n/a") or text.startswith("-") else "+" + text


# --- reading the artifact -----------------------------------------------------------------

def _status(result: Result) -> str:
    if result.get("status") in ("passed", "failed", "error"):
        return str(result["status"])
    return "passed" if result.get("passed") else "error" if result.get("error") else "failed"


def _counts(result: Result) -> tuple[int, int, int]:
    """(passes, judged attempts, attempts in error) of one arm on one task."""
    if result.get("attempts"):
        statuses = [a.get("status") for a in result["attempts"]]
        errors = statuses.count("error")
        return statuses.count("passed"), len(statuses) - errors, errors
    if _status(result) == "error":  # an older artifact without attempts
        return 0, 0, 1
    return int(bool(result.get("passed"))), 1, 0


def _count_cell(result: Result | None) -> str:
    if result is None:
        return "-"
    passes, judged, errors = _counts(result)
    if judged == 0:
        return f"{errors} err"
    return f"{passes}/{judged}" + (f" +{errors} err" if errors else "")


def _diff(candidate: Result | None, baseline: Result | None) -> str:
    fractions = []
    for result in (candidate, baseline):
        passes, judged, _ = _counts(result) if result is not None else (0, 0, 0)
        if not judged:
            return "n/a"
        fractions.append(passes / judged)
    return _signed(round(fractions[0] - fractions[1], 4))


def _cause(text: Any) -> str:
    return _one_line(cause_line(None if text is None else str(text)))


def feedback(result: Result | None) -> str:
    """What the judge said on one arm's first failing attempt, `error: ...` for a task in
    error, or "" when every attempt passed: the line that explains it (for pytest or a
    traceback, the last line naming the error), one line, not truncated."""
    if result is None:
        return ""
    if _status(result) == "error":
        return "error: " + _cause(result.get("error") or result.get("details") or "?")
    attempts = result.get("attempts") or ()
    for attempt in attempts:
        if attempt.get("status") == "failed":
            return _cause((attempt.get("judge") or {}).get("details") or "failed")
    if not attempts and _status(result) == "failed":
        return _cause(result.get("details") or "failed")
    errors = [a for a in attempts if a.get("status") == "error"]
    return "error: " + _cause(errors[0].get("error") or "?") if errors else ""


def _both_feedback(candidate: Result | None, baseline: Result | None) -> str:
    """The candidate's feedback, and the baseline's when it failed too (said once if the
    same)."""
    cand, base = feedback(candidate), feedback(baseline)
    if not base:
        return cand
    if base == cand:
        return f"{cand} (both arms)"
    return f"{cand}; baseline: {base}" if cand else f"baseline: {base}"


def _tasks_passed(results: Iterable[Result]) -> str:
    judged = [r for r in results if _status(r) != "error"]
    return f"{sum(bool(r.get('passed')) for r in judged)}/{len(judged)}"


def _errors(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if isinstance(artifact.get("errors"), list):
        return [e for e in artifact["errors"] if isinstance(e, Mapping)]
    return [{"arm": arm, "task_id": r.get("task_id"), "index": a.get("index"),
             "error": a.get("error")}  # older artifacts: collect them from the attempts
            for arm in ("candidate", "baseline") for r in artifact.get(f"{arm}_results") or ()
            for a in r.get("attempts") or () if a.get("status") == "error"]


@dataclass(frozen=True)
class _Row:
    task_id: str
    candidate: str
    baseline: str
    diff: str
    feedback: str
    label: str | None


@dataclass(frozen=True)
class _View:
    """What every human-readable report shows, read once from the artifact."""

    verdict: str
    reason: str | None
    paired: bool
    rows: list[_Row]
    rates: dict[str, str]  # candidate, baseline, delta
    interval: str | None
    decision: str | None
    regressed: list[str]
    improved: list[str]
    errors: list[Mapping[str, Any]]
    usage: dict[str, Mapping[str, Any]]
    notes: list[tuple[str, str]]
    warnings: list[str]


def _moves(artifact: Mapping[str, Any], pairs: Sequence[tuple[str, Result | None,
                                                               Result | None]]) \
        -> tuple[list[str], list[str]]:
    """(regressed, improved) task ids: the comparison's lists, else derived from pass@k."""
    comparison = artifact.get("comparison")
    if isinstance(comparison, Mapping) and ("regressed" in comparison
                                            or "improved" in comparison):
        return ([_one_line(t) for t in comparison.get("regressed") or ()],
                [_one_line(t) for t in comparison.get("improved") or ()])
    moved: tuple[list[str], list[str]] = ([], [])
    for task_id, cand, base in pairs:
        if cand and base and "error" not in (_status(cand), _status(base)) \
                and bool(cand.get("passed")) != bool(base.get("passed")):
            moved[bool(cand.get("passed"))].append(task_id)
    return moved


def _interval(comparison: Any, with_method: bool = True) -> str | None:
    if not isinstance(comparison, Mapping):
        return None
    parts, interval = [], comparison.get("interval")
    if comparison.get("delta") is not None:
        parts.append(f"paired delta {_signed(comparison['delta'])}")
    confidence = comparison.get("confidence")
    level = f"{_number(confidence * 100)}% " if isinstance(confidence, int | float) else ""
    if isinstance(interval, Sequence) and len(interval) == 2:
        method = comparison.get("method")
        low, high = (_signed(round(float(x), 2)) for x in interval)
        parts.append(f"{level}interval [{low}, {high}]"
                     + (f" ({_one_line(method)})" if method and with_method else ""))
    elif "interval" in comparison:
        parts.append(f"{level}interval n/a")
    if comparison.get("mcnemar_p") is not None:
        parts.append(f"McNemar p = {_number(comparison['mcnemar_p'])}")
    return ", ".join(parts) or None


def _decision(ev: Mapping[str, Any]) -> str | None:
    """Conclusion and policy; the policy's reasoning only when the reason does not say it."""
    policy, text = ev.get("policy"), None
    if isinstance(policy, Mapping):
        reasoning = _one_line(policy.get("reasoning"))
        text = _one_line(policy.get("name") or "?") + (
            f": {reasoning}" if reasoning and reasoning != _one_line(ev.get("reason")) else "")
    elif policy:
        text = _one_line(policy)
    if ev.get("conclusion"):
        return f"conclusion {_one_line(ev['conclusion'])}" + (f"; policy {text}" if text else "")
    return f"policy {text}" if text else None


def _cache_note(cache: Any) -> str | None:
    if not isinstance(cache, Mapping):
        return None
    if not cache.get("hit"):
        return "baseline run afresh (cache miss)"
    details = []
    if cache.get("key"):
        details.append(f"key {_one_line(cache['key'])[:12]}")
    if isinstance(cache.get("age_seconds"), int | float):
        details.append(f"age {_number(cache['age_seconds'] / 3600)} h")
    if cache.get("attempts_from_cache") is not None:
        details.append(f"{cache['attempts_from_cache']} attempts")
    return "baseline served from the cache" + (f" ({', '.join(details)})" if details else "")


def _label(result: Result | None) -> str | None:
    """The stats label worth a mention (`flaky`); stable and error rows speak for themselves."""
    stats = (result or {}).get("stats")
    label = stats.get("label") if isinstance(stats, Mapping) else None
    return None if label in (None, "stable_pass", "stable_fail", "error") else _one_line(label)


def _view(artifact: Mapping[str, Any]) -> _View:
    ev = artifact.get("evaluation") or {}
    arms = (artifact.get("manifest") or {}).get("arms") or {}
    cand = {_one_line(r.get("task_id")): r for r in artifact.get("candidate_results") or ()}
    base = {_one_line(r.get("task_id")): r for r in artifact.get("baseline_results") or ()}
    pairs = [(t, cand.get(t), base.get(t)) for t in [*cand, *(t for t in base if t not in cand)]]
    paired = bool(base) or arms.get("baseline") is not None \
        or ev.get("baseline_pass_rate") is not None
    rows = [_Row(t, _count_cell(c), _count_cell(b), _diff(c, b), _both_feedback(c, b),
                 _label(c)) for t, c, b in pairs]
    rates = {"candidate": _rate(ev.get("execution_pass_rate")),
             "baseline": _rate(ev.get("baseline_pass_rate")),
             "delta": _signed_rate(ev.get("delta"))}
    # With a baseline, the rates cover only tasks judged in both arms.
    both = set(cand) & set(base) if base else set(cand)
    judged = {t for t in both if _status(cand[t]) != "error"
              and (not base or _status(base[t]) != "error")}
    for arm, results in (("candidate", cand), ("baseline", base)):
        if results:
            rates[arm] += f" ({_tasks_passed(r for t, r in results.items() if t in judged)})"
    regressed, improved = _moves(artifact, pairs) if paired and pairs else ([], [])
    raw_usage = artifact.get("usage")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    notes: list[tuple[str, str]] = []
    nd = artifact.get("non_discriminating")
    if isinstance(nd, list) and nd:
        notes.append(("non-discriminating", f"{len(nd)} task{'s give' if len(nd) > 1 else ' gives'}"
                      " the same result in both arms: " + ", ".join(_one_line(t) for t in nd)))
    if artifact.get("power_hint"):
        notes.append(("power", _one_line(artifact["power_hint"])))
    excluded = (artifact.get("comparison") or {}).get("excluded") \
        if isinstance(artifact.get("comparison"), Mapping) else None
    if excluded:
        notes.append(("excluded", "left out of the comparison (no judged attempt in an arm): "
                      + ", ".join(_one_line(t) for t in excluded)))
    if (cache := _cache_note(artifact.get("baseline_cache"))) is not None:
        notes.append(("cache", cache))
    if (journal := journal_path(artifact)) is not None:
        notes.append(("record", f"every attempt, its output and the full judge messages: "
                                f"{_one_line(journal)}"))
    return _View(
        verdict=str(ev.get("verdict", "?")).upper(),
        reason=_one_line(ev["reason"]) if ev.get("reason") else None,
        paired=paired, rows=rows, rates=rates, interval=_interval(artifact.get("comparison")),
        decision=_decision(ev), regressed=regressed, improved=improved,
        errors=_errors(artifact),
        usage={arm: usage[arm] for arm in ("candidate", "baseline")[: 2 if paired else 1]
               if isinstance(usage.get(arm), Mapping)},
        notes=notes, warnings=[_one_line(w) for w in artifact.get("warnings") or ()])


# --- the terminal table -------------------------------------------------------------------

def _align(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def render_table(artifact: Mapping[str, Any]) -> str:
    """Plain aligned text for stderr at the end of a run: per task both arms' pass counts,
    their difference and the judge's feedback on failures; then rates, delta, verdict."""
    v = _view(artifact)
    lines = ["no tasks were run"]
    if v.rows:
        header = ["task", "candidate"] + (["baseline", "diff"] if v.paired else []) \
            + ["feedback"]
        lines = _align([header] + [
            [r.task_id, r.candidate] + ([r.baseline, r.diff] if v.paired else [])
            + [_one_line(r.feedback, FEEDBACK_CHARS)] for r in v.rows])
    rates = f"candidate {v.rates['candidate']}"
    if v.paired:
        rates += f"  baseline {v.rates['baseline']}  delta {v.rates['delta']}"
    interval = _interval(artifact.get("comparison"), with_method=False)  # methods are long
    info = [("pass rate", rates), ("", interval),
            ("verdict", v.verdict + (f" ({v.reason})" if v.reason else "")), ("", v.decision),
            ("regressed", ", ".join(v.regressed)), ("improved", ", ".join(v.improved))]
    if v.errors:
        split = ", ".join(f"{arm} {n}" for arm in ("candidate", "baseline")
                          if (n := sum(e.get("arm") == arm for e in v.errors)))
        info.append(("errors", f"{len(v.errors)} attempts ended in error ({split}); "
                               "not counted as failures"))
    info += v.notes
    info.append(("cost", "; ".join(
        f"{arm} ${float(u.get('cost_usd') or 0):.4f} ({u.get('input_tokens', 0)} in / "
        f"{u.get('output_tokens', 0)} out tokens)" for arm, u in v.usage.items())))
    info += [("warning", w) for w in v.warnings]
    shown = [(label, text) for label, text in info if text]
    width = max(len(label) for label, _ in shown)
    lines += [""] + [f"{label.ljust(width)}  {text}" for label, text in shown]
    return "\n".join(lines) + "\n"


# --- markdown -----------------------------------------------------------------------------

def md_escape(text: Any, limit: int | None = None) -> str:
    """Text for one markdown table cell: no control characters, HTML and markdown specials
    escaped (`|` included), newlines as `<br>`."""
    raw = _CONTROL.sub(" ", "" if text is None else str(text))
    raw = raw.replace("\r\n", "\n").replace("\r", "\n").strip()
    if limit is not None and len(raw) > limit:
        raw = raw[: limit - 3] + "..."
    raw = raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", raw).replace("\n", "<br>")


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str) -> list[str]:
    marks = [":---" if a == "l" else "---:" for a in align[: len(header)]]
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |",
            *("| " + " | ".join(row) + " |" for row in rows)]


def _md_rates(v: _View) -> list[str]:
    arms = list(("candidate", "baseline")[: 2 if v.paired else 1])
    pad = [""] if v.paired else []
    rows = [["Pass rate", *(v.rates[a] for a in arms)] + ([v.rates["delta"]] if v.paired
                                                          else [])]
    if v.usage:
        rows.append(["Cost (USD)", *(f"{float(v.usage.get(a, {}).get('cost_usd') or 0):.4f}"
                                     for a in arms), *pad])
        rows.append(["Tokens in / out", *(f"{v.usage.get(a, {}).get('input_tokens', 0)} / "
                                          f"{v.usage.get(a, {}).get('output_tokens', 0)}"
                                          for a in arms), *pad])
    if v.errors:
        rows.append(["Attempts in error",
                     *(str(sum(e.get("arm") == a for e in v.errors)) for a in arms), *pad])
    header = ["", "Candidate"] + (["Baseline", "Delta"] if v.paired else [])
    return _md_table(header, rows, "lrrr")


def _md_errors(errors: Sequence[Mapping[str, Any]]) -> list[str]:
    groups: dict[tuple[str, str, str], list[str]] = {}
    for e in errors:  # the same error on every attempt of a task is one row
        key = (str(e.get("arm")), str(e.get("task_id")), str(e.get("error")))
        groups.setdefault(key, []).append(str(e.get("index")))
    out = [f"### Errors ({len(errors)} attempts, not counted as failures)", ""]
    out += _md_table(["Arm", "Task", "Attempts", "Error"], (
        [md_escape(arm), md_escape(task), ", ".join(indexes), md_escape(msg, MD_FEEDBACK_CHARS)]
        for (arm, task, msg), indexes in list(groups.items())[:MD_MAX_ERRORS]), "llll")
    if len(groups) > MD_MAX_ERRORS:
        out += ["", f"... and {len(groups) - MD_MAX_ERRORS} more."]
    return out + [""]


def render_markdown(artifact: Mapping[str, Any], *, artifact_path: str | None = None) -> str:
    """Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`. `artifact_path`
    replaces the artifact's own `truth_anchor` in the footer (e.g. after a download)."""
    v = _view(artifact)
    manifest = artifact.get("manifest") or {}
    arms = manifest.get("arms") or {}
    against = f"vs {md_escape((arms.get('baseline') or {}).get('label') or 'baseline')}" \
        if v.paired else "(no baseline)"
    out = [f"## skill-eval: {v.verdict}", "",
           f"Suite **{md_escape(artifact.get('task_suite_skill_id') or '?')}**: candidate "
           f"**{md_escape(artifact.get('candidate_id'))}** "
           f"({md_escape((arms.get('candidate') or {}).get('label') or 'candidate')}) {against}.",
           ""]
    if v.reason:
        out += [f"**Reason:** {md_escape(v.reason)}", ""]
    if v.decision:
        out += [f"**Decision:** {md_escape(v.decision)}", ""]
    out += _md_rates(v) + [""]
    if v.interval:
        out += [f"{md_escape(v.interval[0].upper() + v.interval[1:])}.", ""]

    if v.rows:
        header = ["Task", "Candidate"] + (["Baseline", "Diff"] if v.paired else []) \
            + ["Feedback"]
        per_task = _md_table(header, (
            [md_escape(r.task_id), r.candidate] + ([r.baseline, r.diff] if v.paired else [])
            + [md_escape(f"[{r.label}] {r.feedback}" if r.label else r.feedback,
                         MD_FEEDBACK_CHARS)] for r in v.rows), "lrrrl" if v.paired else "lrl")
        if len(v.rows) > MD_COLLAPSE_TASKS:
            out += [f"<details><summary>Per task ({len(v.rows)} tasks)</summary>", "",
                    *per_task, "", "</details>", ""]
        else:
            out += ["### Per task", "", *per_task, ""]
    else:
        out += ["No task was run.", ""]
    notes = {r.task_id: r.feedback for r in v.rows}
    for title, ids, show in (("Regressions", v.regressed, True),
                             ("Improvements", v.improved, False)):
        if ids:
            out += [f"### {title} ({len(ids)})", "", *(
                f"- {md_escape(t)}" + (f": {md_escape(notes[t], MD_FEEDBACK_CHARS)}"
                                       if show and notes.get(t) else "") for t in ids), ""]
    if v.errors:
        out += _md_errors(v.errors)
    if v.notes:
        out += ["### Notes", "", *(f"- **{label}:** {md_escape(text)}"
                                   for label, text in v.notes), ""]
    if v.warnings:
        out += ["### Warnings", "", *(f"- {md_escape(w)}" for w in v.warnings), ""]

    executor = manifest.get("executor") or {}
    footer = [f"suite sha256 {str((manifest.get('task_suite') or {}).get('sha256'))[:12]}",
              f"executor {executor.get('kind', '?')}",
              f"model {manifest.get('model') or executor.get('model') or 'n/a'}",
              f"pass_k {artifact.get('pass_k', '?')}",
              f"samples {manifest.get('samples', artifact.get('pass_k', '?'))}",
              f"skill-eval {manifest.get('harness_version', '?')}"]
    where = _one_line(artifact_path or artifact.get("truth_anchor") or "?")
    fence = "``" if "`" in where else "`"  # a path reads best as code, unescaped
    footer_line = " · ".join(map(md_escape, footer)) + f" · artifact {fence}{where}{fence}"
    return "\n".join(out + ["---", "", footer_line, ""])


# --- json and dispatch --------------------------------------------------------------------

def render_json(artifact: Mapping[str, Any]) -> str:
    """The artifact itself, re-checked against its JSON Schema (raises ArtifactError)."""
    artifact_mod.validate(artifact)
    return json.dumps(artifact, indent=2, ensure_ascii=False) + "\n"


RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "table": render_table,
    "markdown": render_markdown,
    "junit": render_junit,
    "json": render_json,
}

__all__ = ["RENDERERS", "feedback", "md_escape", "render_json", "render_junit",
           "render_markdown", "render_table"]
