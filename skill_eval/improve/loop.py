"""The improve loop: recall, split, evaluate, decide, refine with delta feedback, select the best
version on HOLDOUT, gate it against the original, learn. Evaluation and the final comparison are
injected callables (see evaluation.py), so this module runs no model and no suite itself.
"""

from __future__ import annotations

import difflib
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

from .decide import Decision, DecisionInput, IterationSettings, decide
from .evaluation import CompareFn, EvalSummary, EvaluateFn
from .feedback import build_feedback
from .improver import Improver, ProposalError, apply_proposal
from .learn import extract_learnings
from .memory import CycleRecord, ImproveMemory, Recall, version_hash
from .split import Split, split_tasks


class ImproveTask(Protocol):
    """What the loop reads of a task (skill_eval.core.model.Task fits)."""

    @property
    def id(self) -> str: ...

    @property
    def prompt(self) -> str: ...

    @property
    def category(self) -> str | None: ...


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


@dataclass(frozen=True)
class ImproveResult:
    run_id: int
    decision: Decision
    reason: str
    versions: tuple[VersionResult, ...]
    best: VersionResult
    proposed: bool
    gate_reason: str
    tokens: int
    cost_usd: float
    split: Split
    recall: Recall
    learnings_saved: int
    warnings: tuple[str, ...] = field(default=())
    # The confirmation: how the pick was checked against the original, and over how many
    # versions (the pick's family) its false-accept rate holds.
    confirmation: str = "none"
    family: int = 1

    @property
    def original(self) -> VersionResult:
        return self.versions[0]


# How the picked version is confirmed (the ranking artifact's improve.confirmation.method).
CONFIRMED_ON = (
    "fresh samples of the holdout tasks: the picked version against the original under the "
    "policy, at its level divided by the versions the pick was chosen from (Bonferroni), so "
    "the chance that a version past the margin is proposed stays at the policy's level"
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


def progress_line(
    iteration: int,
    settings: IterationSettings,
    previous: float | None,
    v: VersionResult,
    summary: EvalSummary,
    run_cost: float,
) -> str:
    train = f"{v.train_score:.2f}" if previous is None else f"{previous:.2f} -> {v.train_score:.2f}"
    hold = "-" if v.holdout_score is None else f"{v.holdout_score:.2f}"
    return (
        f"[iter {iteration}/{settings.iterate}] train {train}  holdout {hold}  "
        f"(eval: {summary.reused_judgements} of {summary.judgement_count} judgements "
        f"reused)  ${run_cost:.2f}"
    )


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_improve(
    skill_files: Mapping[str, str],
    tasks: Sequence[ImproveTask],
    evaluate_fn: EvaluateFn,
    improver: Improver,
    memory: ImproveMemory,
    settings: IterationSettings | None = None,
    *,
    skill_id: str,
    compare_fn: CompareFn | None = None,
    protected: Collection[str] = (),
    clock: Callable[[], float] = time.monotonic,
    log: Callable[[str], None] = _stderr,
) -> ImproveResult:
    """Improve `skill_files` (path in the skill folder -> text) on `tasks`; see the module doc.

    `protected` are skill-relative paths the improver may not write (the suite, when it sits in
    the skill folder). Every decision is recorded in `memory`'s iteration_cycles.
    """
    s = settings or IterationSettings()
    start = clock()
    recall = memory.recall(skill_id, s.recall_token_budget)
    log(
        f"[recall] {len(recall.learnings)} learning(s), {len(recall.anti_patterns)} "
        f"anti-pattern(s) (~{recall.tokens} tokens of {s.recall_token_budget}, chars/4)"
    )
    split = split_tasks(tasks, s.holdout, s.seed)
    for warning in split.warnings:
        log(f"[split] warning: {warning}")
    log(f"[split] {len(split.train)} train, {len(split.holdout)} holdout (seed {s.seed})")
    prompts = {t.id: t.prompt for t in tasks}
    categories = {t.id: t.category for t in tasks}
    run_id = memory.start_run(skill_id, asdict(s))

    current, parent, diff = dict(skill_files), None, ""
    versions: list[VersionResult] = []
    tokens = 0
    cost = 0.0
    decision: Decision = "Continue"
    reason = ""
    for iteration in range(1, s.iterate + 1):
        began = clock()
        digest = memory.record_version(run_id, iteration, current, parent, diff)
        summary = evaluate_fn(current, split.train + split.holdout)
        tokens += summary.tokens
        cost += summary.cost_usd
        previous = versions[-1].train_score if versions else None
        version = VersionResult(
            iteration,
            digest,
            parent,
            current,
            diff,
            summary.pass_rate(split.train) or 0.0,
            summary.pass_rate(split.holdout),
            summary.tokens,
            summary.cost_usd,
        )
        decided = decide(
            DecisionInput(iteration, version.train_score, previous, tokens, cost, clock() - start),
            s,
        )
        decision, reason = decided.decision, decided.reason
        if decision == "AbortRegression":
            version = replace(version, rejected=True)
        versions.append(version)
        log(progress_line(iteration, s, previous, version, summary, cost))
        log(f"  {decision}: {reason}")
        step_tokens, step_cost = summary.tokens, summary.cost_usd
        if decision == "Continue":
            feedback = build_feedback(
                iteration, split.train, summary.per_task, prompts, diff, categories
            )
            proposal = improver.propose(current, feedback, recall.texts)
            tokens += proposal.tokens
            cost += proposal.cost_usd
            step_tokens += proposal.tokens
            step_cost += proposal.cost_usd
            try:
                new = apply_proposal(current, proposal, protected)
            except ProposalError as exc:
                decision, reason = "AcceptBest", f"improver proposal rejected: {exc}"
                new = current
            if decision == "Continue" and version_hash(new) == digest:
                decision, reason = "AcceptBest", "the improver proposed no change"
            if decision == "Continue":
                # Hard stops hold between phases too: a costly or slow improver call must not
                # buy one more suite evaluation. Only budget/timeout can fire here.
                after = decide(
                    DecisionInput(
                        iteration, version.train_score, previous, tokens, cost, clock() - start
                    ),
                    s,
                )
                decision, reason = after.decision, after.reason
            if decision != "Continue":
                log(f"  {decision}: {reason}")
        phase = {"Continue": "refine", "Accept": "complete", "AcceptBest": "complete"}.get(
            decision, "abort"
        )
        memory.record_cycle(
            CycleRecord(
                run_id,
                iteration,
                phase,
                decision,
                reason,
                version.train_score,
                version.holdout_score,
                step_tokens,
                step_cost,
                clock() - began,
                digest,
            )
        )
        if decision != "Continue":
            break
        parent, diff, current = digest, unified_diff(current, new), new

    best = select_best(versions)
    original = versions[0]
    # The versions the pick was chosen from: the confirmation holds over all of them.
    family = max(1, sum(1 for v in versions[1:] if not v.rejected))
    confirmation = CONFIRMED_ON if compare_fn is not None else RATE_ONLY
    log(f"[select] best: iteration {best.iteration} ({best.hash[:12]}): {why_best(versions, best)}")
    if best.hash == original.hash:
        proposed, gate = False, "no version beat the original on holdout"
    elif compare_fn is not None:
        log(
            f"[confirm] iteration {best.iteration} against the original on fresh samples of "
            f"the {len(split.holdout)} holdout tasks, at the policy's level / {family} "
            f"({family} version{'s' if family > 1 else ''} compared)"
        )
        proposed, gate = compare_fn(best.files, original.files, split.holdout, family)
    else:
        proposed, gate = holdout_rate_gate(best, original)
    log(f"[select] {'proposed' if proposed else 'NOT proposed'}: {gate}")

    learned = extract_learnings(versions, best, proposed, gate)
    for kind, text in learned:
        memory.add_learning(skill_id, run_id, kind, text)
    memory.finish_run(
        run_id,
        decision=decision,
        reason=reason,
        original_hash=original.hash,
        best_hash=best.hash,
        proposed=proposed,
        tokens=tokens,
        cost_usd=cost,
    )
    log(
        f"[done] {len(versions)} iteration(s), {tokens} tokens, ${cost:.2f}; "
        f"{len(learned)} learning(s) saved"
    )
    return ImproveResult(
        run_id,
        decision,
        reason,
        tuple(versions),
        best,
        proposed,
        gate,
        tokens,
        cost,
        split,
        recall,
        len(learned),
        split.warnings,
        confirmation,
        family,
    )
