"""Learn: after the loop, a few short lessons for the next run of the same skill (what raised
the scores, what regressed, what only fitted train). Pure; the loop stores them in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .memory import LearningKind

if TYPE_CHECKING:
    from .versions import VersionResult

MAX_LEARNINGS = 4
MAX_CHANGE_CHARS = 200


def summarize_diff(diff: str) -> str:
    """The lines a change added (or, when it only removed, what it removed), on one line."""
    added = [
        line[1:].strip()
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++") and line[1:].strip()
    ]
    removed = [
        line[1:].strip()
        for line in diff.splitlines()
        if line.startswith("-") and not line.startswith("---") and line[1:].strip()
    ]
    text = ("added: " + " | ".join(added)) if added else ("removed: " + " | ".join(removed))
    return text if len(text) <= MAX_CHANGE_CHARS else text[: MAX_CHANGE_CHARS - 3] + "..."


def _fmt(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.2f}"


def extract_learnings(
    versions: Sequence[VersionResult], best: VersionResult, proposed: bool, gate_reason: str
) -> list[tuple[LearningKind, str]]:
    """At most MAX_LEARNINGS (kind, text) pairs, most telling first."""
    out: list[tuple[LearningKind, str]] = []
    for before, after in zip(versions, versions[1:], strict=False):
        change = summarize_diff(after.diff)
        hold = f"holdout {_fmt(before.holdout_score)} -> {_fmt(after.holdout_score)}"
        train = f"train {before.train_score:.2f} -> {after.train_score:.2f}"
        if after.rejected or after.train_score < before.train_score:
            out.append(("anti_pattern", f"Regressed ({train}, {hold}): {change}"))
        elif (
            after.holdout_score is not None
            and before.holdout_score is not None
            and after.holdout_score > before.holdout_score
        ):
            out.append(("learning", f"Helped ({train}, {hold}): {change}"))
        elif after.train_score > before.train_score:
            out.append(
                (
                    "anti_pattern",
                    f"Raised train only, not holdout ({train}, {hold}); "
                    f"too specific to the train tasks: {change}",
                )
            )
    if not proposed and best.iteration > 1:
        out.append(
            (
                "anti_pattern",
                f"Best version (iteration {best.iteration}) failed the "
                f"final holdout gate: {gate_reason}",
            )
        )
    # Regressions and gate failures first: they are the lessons a next run most needs.
    out.sort(key=lambda kv: kv[0] != "anti_pattern")
    return out[:MAX_LEARNINGS]
