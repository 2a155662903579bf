"""What every human-readable report of an evaluation artifact shows, read once: per-task
rows (counts, difference, the judge's feedback), rates, the decision, errors, notes.

The artifact is read defensively: optional parts (comparison statistics, policy, per-task
stats, baseline cache, usage, errors) appear only when present, and text that came from a
model or a judge is cleaned of control characters before it is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..stats.results import cause_line
from .arm_view import ArmView, counts, paired, read_arms, status
from .cache_note import cache_note
from .junit import journal_path, rate_text
from .text import number_text, one_line
from .verdict_text import MOCK_MARK, decided_line, models_combined, verdict_text

Result = Mapping[str, Any]


# The power hint answers how large a suite would detect an improvement, not the verdict's
# question: said where it is shown.
POWER_QUESTION = "another question than the verdict's (how many tasks would detect an improvement)"
LISTED = 12  # task ids a summary line names before it counts the rest


def listing(ids: Iterable[Any], limit: int = LISTED) -> str:
    """ "a, b, c" or, past `limit`, the first `limit` and "and N more (every one in the
    artifact)"."""
    names = [one_line(t) for t in ids]
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit:,} more (all in the artifact)"


def tokens_text(usage: Mapping[str, Any]) -> str:
    """An arm's tokens in full: prompt-cache writes and reads are where a big skill's input
    is, so `input_tokens` alone (the uncached rest) would hide it."""

    def count(key: str) -> str:
        value = usage.get(key)
        return f"{int(value):,}" if isinstance(value, int | float) else "0"

    return (
        f"{count('input_tokens')} in + {count('cache_creation_input_tokens')} cache write"
        f" + {count('cache_read_input_tokens')} cache read / "
        f"{count('output_tokens')} out"
    )


def _signed_rate(value: Any) -> str:
    return "n/a" if value is None else rate_text(value, signed=True)


def _signed(value: Any) -> str:
    text = number_text(value)
    return text if text in ("0", "n/a") or text.startswith("-") else "+" + text


# --- reading the artifact -----------------------------------------------------------------


def _diff(candidate: Result | None, baseline: Result | None) -> str:
    fractions = []
    for result in (candidate, baseline):
        passes, judged, _ = counts(result) if result is not None else (0, 0, 0)
        if not judged:
            return "n/a"
        fractions.append(passes / judged)
    return _signed(round(fractions[0] - fractions[1], 4))


def _cause(text: Any) -> str:
    return one_line(cause_line(None if text is None else str(text)))


def feedback(result: Result | None) -> str:
    """What the judge said on one arm's first failing attempt, `error: ...` for a task in
    error, or "" when every attempt passed: the line that explains it (for pytest or a
    traceback, the last line naming the error), one line, not truncated."""
    if result is None:
        return ""
    if status(result) == "error":
        return "error: " + _cause(result.get("error") or result.get("details") or "?")
    attempts = result.get("attempts") or ()
    for attempt in attempts:
        if attempt.get("status") == "failed":
            return _cause((attempt.get("judge") or {}).get("details") or "failed")
    if not attempts and status(result) == "failed":
        return _cause(result.get("details") or "failed")
    errors = [a for a in attempts if a.get("status") == "error"]
    return "error: " + _cause(errors[0].get("error") or "?") if errors else ""


def _both_feedback(
    candidate: Result | None, baseline: Result | None, name: str = "baseline"
) -> str:
    """The candidate's feedback, and the baseline's (the arm `name`) when it failed too
    (said once if the same)."""
    cand, base = feedback(candidate), feedback(baseline)
    if not base:
        return cand
    if base == cand:
        return f"{cand} (both arms)"
    return f"{cand}; {name}: {base}" if cand else f"{name}: {base}"


def _errors(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if isinstance(artifact.get("errors"), list):
        return [e for e in artifact["errors"] if isinstance(e, Mapping)]
    return [
        {
            "arm": arm,
            "task_id": r.get("task_id"),
            "index": a.get("index"),
            "error": a.get("error"),
        }  # older artifacts: collect them from the attempts
        for arm in ("candidate", "baseline")
        for r in artifact.get(f"{arm}_results") or ()
        for a in r.get("attempts") or ()
        if a.get("status") == "error"
    ]


@dataclass(frozen=True)
class Row:
    """One task: each arm's pass count (in the view's order of arms), the difference and the
    feedback of the verdict's pair (candidate against baseline), a stats label."""

    task_id: str
    cells: tuple[str, ...]
    diff: str
    feedback: str
    label: str | None


@dataclass(frozen=True)
class View:
    """What every human-readable report shows, read once from the artifact."""

    verdict: str
    reason: str | None  # the verdict in plain words (report/verdict_text.py), or its reason
    paired: bool
    arms: list[ArmView]  # in order: the candidate first, or an --arm run's arms as listed
    rows: list[Row]
    delta: str  # the verdict pair's difference in pass rate
    interval: str | None
    decision: str | None
    regressed: list[str]
    improved: list[str]
    errors: list[Mapping[str, Any]]
    notes: list[tuple[str, str]]
    warnings: list[str]
    kind: str | None = None  # "not enough evidence" or "shown worse" for a fail the policy made
    mock: bool = False  # the verdict comes from the mock executor (evaluation.mocked)
    bound: str | None = None  # the one-sided bound that decided, against its threshold

    @property
    def headline(self) -> str:
        """PASS, FAIL (not enough evidence), ...: the verdict and which failure it is, and
        `[mock]` when no model made it."""
        return (
            self.verdict
            + (f" ({self.kind})" if self.kind else "")
            + (f" {MOCK_MARK}" if self.mock else "")
        )

    @property
    def rates(self) -> dict[str, str]:
        """Each arm's pass rate text by name, and the `delta`."""
        return {a.name: a.rate_text for a in self.arms} | {"delta": self.delta}

    @property
    def usage(self) -> dict[str, Mapping[str, Any]]:
        """Each arm's usage by name, of the arms that have one."""
        return {a.name: a.usage for a in self.arms if a.usage is not None}

    @property
    def listed(self) -> bool:
        """An --arm run: its arms have the side-by-side figures (report/arm_table.py)."""
        return any(a.figures for a in self.arms)

    def role(self, role: str) -> ArmView | None:
        """The arm playing `role` in the verdict (`candidate`, `baseline`), or None."""
        return next((a for a in self.arms if a.role == role), None)

    def result_tables(self) -> list[tuple[str, list[Result]]]:
        """(name, its results) of each arm: what report/cost.py prices a task from."""
        return [(a.name, list(a.results.values())) for a in self.arms]

    @property
    def pair_names(self) -> str:
        """`installed vs none`: the verdict's pair when its arms have names of their own, else
        "" (the candidate and the baseline need no saying)."""
        cand, base = self.role("candidate"), self.role("baseline")
        if cand is None or base is None or (cand.name, base.name) == ("candidate", "baseline"):
            return ""
        return f"{cand.name} vs {base.name}"


def _moves(
    artifact: Mapping[str, Any], pairs: Sequence[tuple[str, Result | None, Result | None]]
) -> tuple[list[str], list[str]]:
    """(regressed, improved) task ids: the comparison's lists, else derived from pass@k."""
    comparison = artifact.get("comparison")
    if isinstance(comparison, Mapping) and ("regressed" in comparison or "improved" in comparison):
        return (
            [one_line(t) for t in comparison.get("regressed") or ()],
            [one_line(t) for t in comparison.get("improved") or ()],
        )
    moved: tuple[list[str], list[str]] = ([], [])
    for task_id, cand, base in pairs:
        if (
            cand
            and base
            and "error" not in (status(cand), status(base))
            and bool(cand.get("passed")) != bool(base.get("passed"))
        ):
            moved[bool(cand.get("passed"))].append(task_id)
    return moved


def interval_text(comparison: Any, with_method: bool = True) -> str | None:
    if not isinstance(comparison, Mapping):
        return None
    parts, interval = [], comparison.get("interval")
    if comparison.get("delta") is not None:
        parts.append(f"paired delta {_signed(comparison['delta'])}")
    confidence = comparison.get("confidence")
    level = f"{number_text(confidence * 100)}% " if isinstance(confidence, int | float) else ""
    if isinstance(interval, Sequence) and len(interval) == 2:
        method = comparison.get("method")
        low, high = (_signed(round(float(x), 2)) for x in interval)
        parts.append(
            f"{level}interval [{low}, {high}]"
            + (f" ({one_line(method)})" if method and with_method else "")
        )
    elif "interval" in comparison:
        parts.append(f"{level}interval n/a")
    if comparison.get("mcnemar_p") is not None:
        parts.append(f"McNemar p = {number_text(comparison['mcnemar_p'])}")
    return ", ".join(parts) or None


def _decision(ev: Mapping[str, Any], shown: str | None) -> str | None:
    """The policy with its reasoning (the figures), unless the verdict line already says it.
    The artifact's `conclusion` (is the interval clear of 0?) is not repeated: the verdict
    line is the one wording a reader gets."""
    policy, text = ev.get("policy"), None
    if isinstance(policy, Mapping):
        reasoning = one_line(policy.get("reasoning"))
        text = one_line(policy.get("name") or "?") + (
            f": {reasoning}" if reasoning and reasoning != shown else ""
        )
    elif policy:
        text = one_line(policy)
    return f"policy {text}" if text else None


def _label(result: Result | None) -> str | None:
    """The stats label worth a mention (`flaky`); stable and error rows speak for themselves."""
    stats = (result or {}).get("stats")
    label = stats.get("label") if isinstance(stats, Mapping) else None
    return None if label in (None, "stable_pass", "stable_fail", "error") else one_line(label)


def read_view(artifact: Mapping[str, Any]) -> View:
    """What every report shows of `artifact`, read once and defensively."""
    ev = artifact.get("evaluation") or {}
    arms = read_arms(artifact)
    by_role = {a.role: a for a in arms}
    cand = by_role["candidate"].results if "candidate" in by_role else {}
    base = by_role["baseline"].results if "baseline" in by_role else {}
    reference = by_role["baseline"].name if "baseline" in by_role else "baseline"
    ids = list(dict.fromkeys(t for a in arms for t in a.results))
    pairs = [(t, cand.get(t), base.get(t)) for t in ids]
    is_paired = paired(artifact)
    rows = [
        Row(
            t,
            tuple(a.cell(t) for a in arms),
            _diff(c, b),
            _both_feedback(c, b, reference),
            _label(c),
        )
        for t, c, b in pairs
    ]
    regressed, improved = _moves(artifact, pairs) if is_paired and pairs else ([], [])
    said = verdict_text(ev, artifact.get("comparison"))
    statement = one_line(said.statement) if said.statement else None
    if statement and (combined := models_combined(artifact)):
        statement += f" ({one_line(combined)})"
    return View(
        verdict=str(ev.get("verdict", "?")).upper(),
        reason=statement,
        paired=is_paired,
        arms=arms,
        rows=rows,
        delta=_signed_rate(ev.get("delta")),
        interval=interval_text(artifact.get("comparison")),
        decision=_decision(ev, statement),
        kind=said.kind,
        mock=ev.get("mocked") is True,
        bound=decided_line(ev),
        regressed=regressed,
        improved=improved,
        errors=_errors(artifact),
        notes=_notes(artifact),
        warnings=[one_line(w) for w in artifact.get("warnings") or ()],
    )


def _notes(artifact: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of what else a reader should know: tasks that tell the arms apart or
    not, the power hint, tasks left out, the baseline cache, where the full record is."""
    ev = artifact.get("evaluation") or {}
    notes: list[tuple[str, str]] = []
    nd = artifact.get("non_discriminating")
    if isinstance(nd, list) and nd:
        notes.append(
            (
                "non-discriminating",
                f"{len(nd)} task{'s give' if len(nd) > 1 else ' gives'}"
                " the same result in both arms: " + listing(nd),
            )
        )
    if artifact.get("power_hint") and not ev.get("tasks_needed"):
        # A run that lacked evidence says in its verdict line what would settle it; the power
        # hint (detecting a lift, another question) would only muddle that.
        notes.append(("power", f"{POWER_QUESTION}: {one_line(artifact['power_hint'])}"))
    excluded = (
        (artifact.get("comparison") or {}).get("excluded")
        if isinstance(artifact.get("comparison"), Mapping)
        else None
    )
    if excluded:
        notes.append(
            (
                "excluded",
                "left out of the comparison (no judged attempt in an arm): " + listing(excluded),
            )
        )

    if cache := cache_note(artifact.get("baseline_cache"), artifact.get("baseline_pool")):
        notes.append(("cache", cache))
    if (journal := journal_path(artifact)) is not None:
        notes.append(
            (
                "record",
                f"every attempt, its output and the full judge messages: {one_line(journal)}",
            )
        )
    return notes
