"""Several candidates against one baseline: keeping the false-accept rate over the family.

When K candidates (the versions of one improve run, the candidates of one ranking) are each
compared with the same baseline and any of them may be kept, the chance that some candidate
which is in truth past the margin passes must stay at the policy's alpha, not at alpha per
candidate. Two ways, both pure:
- `bonferroni`: each comparison at alpha / K. What improve uses: only the version it picked is
  confirmed, and holding that one to alpha / K bounds the chance that whichever version is
  picked is confirmed falsely (a union bound over the K it could have been).
- `holm_levels`: Holm's step-down when all K are tested together; as strong a guarantee,
  never less powerful. Each comparison gets the level its own p-value is held to, so the
  policies decide (and word) it as usual with that level.
"""

from __future__ import annotations

from collections.abc import Sequence


def bonferroni(alpha: float, family: int) -> float:
    """The level of each of `family` comparisons."""
    if family < 1:
        raise ValueError(f"family must be >= 1, got {family}")
    return alpha / family


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values (in the input's order): with the p-values sorted ascending,
    p~(j) = max over i <= j of min(1, (K - i + 1) p(i)). Reject where p~ <= alpha."""
    k = len(p_values)
    order = sorted(range(k), key=lambda i: p_values[i])
    adjusted = [1.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def holm_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """Per comparison, the level its own p-value is held to under Holm at `alpha`: p <= level
    exactly when Holm rejects it (level = alpha · p / p~, so at most alpha / (K - rank))."""
    levels = []
    for p, adjusted in zip(p_values, holm_adjusted(p_values), strict=True):
        if p <= 0 or adjusted <= 0:
            levels.append(alpha / len(p_values))
        else:
            levels.append(min(alpha, alpha * p / adjusted))
    return levels
