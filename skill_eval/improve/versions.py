"""The versions of an improve run, and how the best is picked and confirmed: the highest
holdout pass rate (select_best, why_best), then a paired comparison with the original on
fresh samples at the family's level (select_and_confirm), or the holdout rate alone."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..stats.estimates import paired_comparison
from ..stats.policy import POLICY_ALPHA, Policy, decide_policy
from .detect import NOT_SHOWN
from .evaluation import CompareFn
from .split import Split


@dataclass(frozen=True)
class VersionResult:
    """One evaluated version of the skill folder. `rejected` marks a version the loop refused
    (a regression), which can never be selected as best."""

    iteration: int
    hash: str
    parent: str | None
    files: Mapping[str, str]
    diff: str
    train_score: float
    holdout_score: float | None
    tokens: int
    cost_usd: float
    rejected: bool = False


CONFIRMED_ON = (
    "held-out tasks set apart from the ones that picked it (neither the improver nor the "
    "selection saw them): the picked version against the original under the policy (default "
    "superior: shown better), at its level divided by the versions the pick was chosen from "
    "(Bonferroni), so the chance that a version no better than the original is proposed "
    "stays at the policy's level"
)
RATE_ONLY = "holdout pass rate only (no paired confirmation): strictly higher than the original"


def unified_diff(old: Mapping[str, str], new: Mapping[str, str]) -> str:
    """A unified diff over every file of the skill folder (added, changed, removed)."""
    chunks: list[str] = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path, ""), new.get(path, "")
        if a != b:
            chunks.extend(
                difflib.unified_diff(
                    a.splitlines(keepends=True),
                    b.splitlines(keepends=True),
                    f"a/{path}",
                    f"b/{path}",
                )
            )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def select_best(versions: Sequence[VersionResult]) -> VersionResult:
    """Highest holdout pass rate (train when there is no holdout), ties to fewer eval tokens,
    then to the earlier version. Rejected versions are never chosen."""
    pool = [v for v in versions if not v.rejected] or [versions[0]]

    def key(v: VersionResult) -> tuple[float, int, int]:
        rate = v.train_score if v.holdout_score is None else v.holdout_score
        return (-rate, v.tokens, v.iteration)

    return min(pool, key=key)


def why_best(versions: Sequence[VersionResult], best: VersionResult) -> str:
    """Why select_best chose `best`, for the log: every version's rate and, on a tie, what
    broke it."""

    def rate(v: VersionResult) -> float:
        return v.train_score if v.holdout_score is None else v.holdout_score

    measure = "train" if best.holdout_score is None else "holdout"
    rates = ", ".join(
        f"{v.iteration} {rate(v):.2f}{' (rejected)' if v.rejected else ''}" for v in versions
    )
    if (
        best.iteration == versions[0].iteration
        and all(v.rejected for v in versions[1:])
        and len(versions) > 1
    ):
        return f"every later version was rejected for a regression ({measure}: {rates})"
    tied = [v for v in versions if v is not best and not v.rejected and rate(v) == rate(best)]
    reason = f"highest {measure} pass rate, {rate(best):.2f} (iterations: {rates})"
    if tied:
        others = ", ".join(str(v.iteration) for v in tied)
        fewer = all(v.tokens > best.tokens for v in tied)
        reason += (
            f"; tied with iteration {others}, chosen for fewer evaluation tokens ({best.tokens})"
            if fewer
            else f"; tied with iteration {others}, chosen as the earlier version"
        )
    return reason


def holdout_rate_gate(best: VersionResult, original: VersionResult) -> tuple[bool, str]:
    """The fallback gate when no compare_fn is given: strictly higher holdout pass rate."""
    if best.holdout_score is None or original.holdout_score is None:
        # --holdout 0 was asked for (with a warning): fall back to train, and say so.
        won = best.train_score > original.train_score
        return won, (
            f"train {original.train_score:.2f} -> {best.train_score:.2f} (no holdout: "
            "not checked on unseen tasks)"
        )
    if best.holdout_score > original.holdout_score:
        return True, (f"holdout {original.holdout_score:.2f} -> {best.holdout_score:.2f}")
    return False, (
        f"holdout {best.holdout_score:.2f} does not beat the original's "
        f"{original.holdout_score:.2f}"
    )


def confirmable(tasks: int, policy: Policy, family: int, samples: int = 1) -> bool:
    """Whether a confirmation on `tasks` tasks can pass at all: the best outcome it could see
    (each task passed by the pick in every sample and failed by the original) decided under
    `policy` at its level / `family`, as the run's comparison decides it."""
    if tasks < 1:
        return False
    best = {f"t{i}": 1.0 for i in range(tasks)}
    comparison = paired_comparison(best, dict.fromkeys(best, 0.0), samples=samples)
    alpha = POLICY_ALPHA.get(policy)
    level = alpha / max(1, family) if alpha is not None else None
    return decide_policy(policy, comparison, samples=samples, alpha=level).passed


def select_and_confirm(
    versions: Sequence[VersionResult],
    split: Split,
    compare_fn: CompareFn | None,
    log: Callable[[str], None],
) -> tuple[VersionResult, bool, str, int, str]:
    """The best version, whether it is proposed and why, the family it was chosen from, and
    how it was confirmed against the original."""
    best = select_best(versions)
    original = versions[0]
    # The versions the pick was chosen from: the confirmation holds over all of them.
    family = max(1, sum(1 for v in versions[1:] if not v.rejected))
    confirmation = CONFIRMED_ON if compare_fn is not None else RATE_ONLY
    log(f"[select] best: iteration {best.iteration} ({best.hash[:12]}): {why_best(versions, best)}")
    if best.hash == original.hash:
        proposed, gate = False, "no version beat the original on holdout"
    elif compare_fn is not None:
        on = split.confirm or split.holdout
        log(
            f"[confirm] iteration {best.iteration} against the original on the {len(on)} "
            f"task(s) set apart to confirm, at the policy's level / {family} "
            f"({family} version{'s' if family > 1 else ''} compared)"
        )
        proposed, gate = compare_fn(best.files, original.files, on, family)
    else:
        proposed, gate = holdout_rate_gate(best, original)
    said = "proposed" if proposed else f"not proposed ({NOT_SHOWN})"
    log(f"[select] {said}: {gate}")
    return best, proposed, gate, family, confirmation


__all__ = [
    "CONFIRMED_ON",
    "RATE_ONLY",
    "VersionResult",
    "confirmable",
    "holdout_rate_gate",
    "select_and_confirm",
    "select_best",
    "unified_diff",
    "why_best",
]
