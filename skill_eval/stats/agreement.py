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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

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


__all__ = ["MAX_SCORE_SPREAD", "Agreement", "Verdict", "agreement", "combined", "disagrees"]
