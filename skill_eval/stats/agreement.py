"""How far a model-graded judge agrees with itself: figures over groups of verdicts, each
group the judgements of one output (the same task, the same work) by the same judge.

    agreement([[(True, 0.8), (False, 0.4), (True, 0.9)], [(False, 0.1), (False, 0.2)]])
    # -> 2 outputs, 5 judgements, 4 pairs of which 2 agree (rate 0.5), score spread 0.5,
    #    1 output whose judgements disagree

Agreement is pairwise: of all pairs of judgements of one output, the share that give the same
verdict (pass or fail). A judge disagrees with itself when two judgements of one output give
different verdicts, or scores further apart than MAX_SCORE_SPREAD: a 0.2 and a 0.7 for the
same answer is noise even when both fall under the threshold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import Attempt, sha256_text

MAX_SCORE_SPREAD = 0.3
Verdict = tuple[bool, float]  # (passed, score)


@dataclass(frozen=True)
class Agreement:
    """Figures over the outputs judged at least twice; the others say nothing about it."""

    outputs: int = 0
    judgements: int = 0
    pairs: int = 0
    agreeing_pairs: int = 0
    score_spread: float = 0.0  # the largest (max - min) score among one output's judgements
    disagreeing_outputs: int = 0  # outputs whose judgements disagree (see the module doc)

    @property
    def rate(self) -> float | None:
        """Pairwise verdict agreement, None when no output was judged twice."""
        return self.agreeing_pairs / self.pairs if self.pairs else None

    @property
    def consistent(self) -> bool:
        return self.disagreeing_outputs == 0

    def to_dict(self) -> dict[str, Any]:
        rate = self.rate
        return {
            "outputs": self.outputs,
            "judgements": self.judgements,
            "pairs": self.pairs,
            "agreement": None if rate is None else round(rate, 4),
            "score_spread": round(self.score_spread, 4),
            "disagreeing_outputs": self.disagreeing_outputs,
        }


def disagrees(verdicts: Sequence[Verdict]) -> bool:
    """Whether one output's judgements disagree: different verdicts, or scores too far apart."""
    if len(verdicts) < 2:
        return False
    scores = [score for _, score in verdicts]
    return len({passed for passed, _ in verdicts}) > 1 or (
        max(scores) - min(scores) > MAX_SCORE_SPREAD
    )


def agreement(groups: Iterable[Sequence[Verdict]]) -> Agreement:
    """Agreement figures over `groups` (one per output); groups of fewer than two are left
    out."""
    outputs = judgements = pairs = agreeing = disagreeing = 0
    spread = 0.0
    for group in groups:
        k = len(group)
        if k < 2:
            continue
        passes = sum(1 for passed, _ in group if passed)
        outputs += 1
        judgements += k
        pairs += k * (k - 1) // 2
        agreeing += passes * (passes - 1) // 2 + (k - passes) * (k - passes - 1) // 2
        scores = [score for _, score in group]
        spread = max(spread, max(scores) - min(scores))
        disagreeing += disagrees(group)
    return Agreement(outputs, judgements, pairs, agreeing, spread, disagreeing)


def combined(parts: Iterable[Agreement]) -> Agreement:
    """The figures of several tasks (or samples) together."""
    total = Agreement()
    for part in parts:
        total = Agreement(
            total.outputs + part.outputs,
            total.judgements + part.judgements,
            total.pairs + part.pairs,
            total.agreeing_pairs + part.agreeing_pairs,
            max(total.score_spread, part.score_spread),
            total.disagreeing_outputs + part.disagreeing_outputs,
        )
    return total


# --- a run's judgements: identical outputs judged more than once ----------------------------


def work_key(attempt: Attempt) -> str:
    """What identifies an attempt's work without reading its blobs: the sha256 of its output,
    of its transcript and of each changed file."""
    output = attempt.output_ref.sha256 if attempt.output_ref else sha256_text(attempt.output)
    if attempt.transcript_ref is not None:
        transcript: Any = attempt.transcript_ref.sha256
    else:
        transcript = [call.to_dict() for call in attempt.transcript]
    files = [(f.path, f.sha256) for f in attempt.files.files] if attempt.files else None
    material = json.dumps([output, transcript, files], sort_keys=True, default=str)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def served_from_cache(value: Any, depth: int = 0) -> bool:
    """Whether a judgement (or a part of it, in a combination) came from the judge cache: a
    copy of an earlier judgement, not a judgement of its own."""
    if depth > 20:
        return False
    if isinstance(value, Mapping):
        if value.get("cached") is True:
            return True
        return any(served_from_cache(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(served_from_cache(v, depth + 1) for v in value)
    return False


def run_agreement(
    attempts: Iterable[Attempt], model_graded: Collection[str]
) -> dict[str, Any] | None:
    """The artifact's `judge_agreement`: per task of `model_graded` (task ids), how far its
    judge agreed with itself on outputs it judged more than once (identical outputs of one
    run, in either arm; a rejudged output with its first judgement). Judge errors and
    judgements served from the judge cache do not count; `cached` says how many were.
    None when no task is model-graded."""
    if not model_graded:
        return None
    groups: dict[str, dict[str, list[Verdict]]] = {t: {} for t in model_graded}
    cached = dict.fromkeys(model_graded, 0)
    for a in attempts:
        judged = a.judge
        if a.task_id not in groups or judged is None or judged.error is not None:
            continue
        if a.status not in ("passed", "failed") or judged.data.get("output_caused"):
            continue  # the judge never saw this output
        if served_from_cache(dict(judged.data)):
            cached[a.task_id] += 1
            continue
        groups[a.task_id].setdefault(work_key(a), []).append((judged.passed, judged.score))
    tasks = []
    figures = []
    for task_id, by_work in groups.items():
        figure = agreement(by_work.values())
        figures.append(figure)
        tasks.append({"task_id": task_id, **figure.to_dict(), "cached": cached[task_id]})
    total = combined(figures)
    return {
        **total.to_dict(),
        "max_score_spread": MAX_SCORE_SPREAD,
        "disagreeing_tasks": [t["task_id"] for t in tasks if t["disagreeing_outputs"]],
        "tasks": tasks,
    }


__all__ = [
    "MAX_SCORE_SPREAD",
    "Agreement",
    "Verdict",
    "agreement",
    "combined",
    "disagrees",
    "run_agreement",
    "served_from_cache",
    "work_key",
]
