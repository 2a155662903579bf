"""The improve loop: recall, split, evaluate, decide, refine with delta feedback, select the best
version on HOLDOUT, gate it against the original, learn. Evaluation and the final comparison are
injected callables (see evaluation.py), so this module runs no model and no suite itself.
"""

from __future__ import annotations

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
from .split import Split, set_apart_to_confirm, split_tasks
from .versions import VersionResult as VersionResult  # re-exported: it lived here
from .versions import select_and_confirm, unified_diff
from .versions import select_best as select_best
from .versions import why_best as why_best


class ImproveTask(Protocol):
    """What the loop reads of a task (skill_eval.core.model.Task fits)."""

    @property
    def id(self) -> str: ...

    @property
    def prompt(self) -> str: ...

    @property
    def category(self) -> str | None: ...


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


@dataclass
class _Run:
    """One improve run's context and running totals: what the loop's steps share."""

    settings: IterationSettings
    split: Split
    recall: Recall
    run_id: int
    evaluate_fn: EvaluateFn
    improver: Improver
    memory: ImproveMemory
    protected: Collection[str]
    clock: Callable[[], float]
    log: Callable[[str], None]
    prompts: dict[str, str]
    categories: dict[str, str | None]
    start: float
    budget: Callable[[], str | None]
    tokens: int = 0
    cost: float = 0.0

    def decide(self, iteration: int, score: float, previous: float | None) -> tuple[Decision, str]:
        elapsed = self.clock() - self.start
        inputs = DecisionInput(
            iteration, score, previous, self.tokens, self.cost, elapsed, self.budget()
        )
        decided = decide(inputs, self.settings)
        return decided.decision, decided.reason

    def evaluate(
        self,
        iteration: int,
        current: Mapping[str, str],
        parent: str | None,
        diff: str,
        previous: float | None,
    ) -> tuple[VersionResult, EvalSummary, Decision, str]:
        """Record and evaluate one version on train and holdout, and decide what follows."""
        split = self.split
        digest = self.memory.record_version(self.run_id, iteration, current, parent, diff)
        summary = self.evaluate_fn(current, split.train + split.holdout)
        self.tokens += summary.tokens
        self.cost += summary.cost_usd
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
        decision, reason = self.decide(iteration, version.train_score, previous)
        if decision == "AbortRegression":
            version = replace(version, rejected=True)
        return version, summary, decision, reason

    def refine(
        self,
        version: VersionResult,
        summary: EvalSummary,
        previous: float | None,
    ) -> tuple[Decision, str, Mapping[str, str], tuple[int, float]]:
        """Ask the improver for the next version: the decision after it, the new files, and
        what this step cost in all (evaluation and proposal)."""
        feedback = build_feedback(
            version.iteration,
            self.split.train,
            summary.per_task,
            self.prompts,
            version.diff,
            self.categories,
        )
        proposal = self.improver.propose(version.files, feedback, self.recall.texts)
        self.tokens += proposal.tokens
        self.cost += proposal.cost_usd
        step = (summary.tokens + proposal.tokens, summary.cost_usd + proposal.cost_usd)
        decision: Decision = "Continue"
        reason = ""
        new: Mapping[str, str]
        try:
            new = apply_proposal(version.files, proposal, self.protected)
        except ProposalError as exc:
            decision, reason = "AcceptBest", f"improver proposal rejected: {exc}"
            new = version.files
        if decision == "Continue" and version_hash(new) == version.hash:
            decision, reason = "AcceptBest", "the improver proposed no change"
        if decision == "Continue":
            # Hard stops hold between phases too: a costly or slow improver call must not buy
            # one more suite evaluation. Only budget/timeout can fire here.
            decision, reason = self.decide(version.iteration, version.train_score, previous)
        if decision != "Continue":
            self.log(f"  {decision}: {reason}")
        return decision, reason, new, step

    def record_cycle(
        self,
        version: VersionResult,
        decision: Decision,
        reason: str,
        step: tuple[int, float],
        began: float,
    ) -> None:
        phase = {"Continue": "refine", "Accept": "complete", "AcceptBest": "complete"}.get(
            decision, "abort"
        )
        self.memory.record_cycle(
            CycleRecord(
                self.run_id,
                version.iteration,
                phase,
                decision,
                reason,
                version.train_score,
                version.holdout_score,
                step[0],
                step[1],
                self.clock() - began,
                version.hash,
            )
        )


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
    budget: Callable[[], str | None] = lambda: None,
) -> ImproveResult:
    """Improve `skill_files` (path in the skill folder -> text) on `tasks`; see the module doc.

    `protected` are skill-relative paths the improver may not write (the suite, when it sits in
    the skill folder). `budget` says when the command's cap is reached (then the loop ends
    with AbortBudget). Every decision is recorded in `memory`'s iteration_cycles.
    """
    s = settings or IterationSettings()
    run = _begin(
        skill_files,
        tasks,
        evaluate_fn,
        improver,
        memory,
        s,
        skill_id,
        protected,
        clock,
        log,
        confirms=compare_fn is not None,
        budget=budget,
    )
    current, parent, diff = dict(skill_files), None, ""
    versions: list[VersionResult] = []
    decision: Decision = "Continue"
    reason = ""
    for iteration in range(1, s.iterate + 1):
        began = clock()
        previous = versions[-1].train_score if versions else None
        version, summary, decision, reason = run.evaluate(
            iteration, current, parent, diff, previous
        )
        versions.append(version)
        log(progress_line(iteration, s, previous, version, summary, run.cost))
        log(f"  {decision}: {reason}")
        step: tuple[int, float] = (summary.tokens, summary.cost_usd)
        new: Mapping[str, str] = current
        if decision == "Continue":
            decision, reason, new, step = run.refine(version, summary, previous)
        run.record_cycle(version, decision, reason, step, began)
        if decision != "Continue":
            break
        parent, diff, current = version.hash, unified_diff(current, new), dict(new)
    best, proposed, gate, family, confirmation = select_and_confirm(
        versions, run.split, compare_fn, log
    )
    learned = _learn(run, skill_id, versions, best, proposed, gate, decision, reason)
    return ImproveResult(
        run.run_id,
        decision,
        reason,
        tuple(versions),
        best,
        proposed,
        gate,
        run.tokens,
        run.cost,
        run.split,
        run.recall,
        len(learned),
        run.split.warnings,
        confirmation,
        family,
    )


def _begin(
    skill_files: Mapping[str, str],
    tasks: Sequence[ImproveTask],
    evaluate_fn: EvaluateFn,
    improver: Improver,
    memory: ImproveMemory,
    s: IterationSettings,
    skill_id: str,
    protected: Collection[str],
    clock: Callable[[], float],
    log: Callable[[str], None],
    confirms: bool = False,
    budget: Callable[[], str | None] = lambda: None,
) -> _Run:
    """Recall what earlier runs learned, split the tasks (setting some apart to confirm the
    pick on when it is confirmed), and open the run in memory."""
    start = clock()
    recall = memory.recall(skill_id, s.recall_token_budget)
    log(
        f"[recall] {len(recall.learnings)} learning(s), {len(recall.anti_patterns)} "
        f"anti-pattern(s) (~{recall.tokens} tokens of {s.recall_token_budget}, chars/4)"
    )
    split = split_tasks(tasks, s.holdout, s.seed)
    if confirms:
        split = set_apart_to_confirm(split, s.seed)
    for warning in split.warnings:
        log(f"[split] warning: {warning}")
    apart = f", {len(split.confirm)} set apart to confirm the pick" if split.confirm else ""
    log(f"[split] {len(split.train)} train, {len(split.holdout)} holdout{apart} (seed {s.seed})")
    return _Run(
        s,
        split,
        recall,
        memory.start_run(skill_id, asdict(s)),
        evaluate_fn,
        improver,
        memory,
        protected,
        clock,
        log,
        {t.id: t.prompt for t in tasks},
        {t.id: t.category for t in tasks},
        start,
        budget,
    )


def _learn(
    run: _Run,
    skill_id: str,
    versions: Sequence[VersionResult],
    best: VersionResult,
    proposed: bool,
    gate: str,
    decision: Decision,
    reason: str,
) -> Sequence[tuple[str, str]]:
    """Save what this run taught and close it in memory."""
    learned = extract_learnings(versions, best, proposed, gate)
    for kind, text in learned:
        run.memory.add_learning(skill_id, run.run_id, kind, text)
    run.memory.finish_run(
        run.run_id,
        decision=decision,
        reason=reason,
        original_hash=versions[0].hash,
        best_hash=best.hash,
        proposed=proposed,
        tokens=run.tokens,
        cost_usd=run.cost,
    )
    run.log(
        f"[done] {len(versions)} iteration(s), {run.tokens} tokens, ${run.cost:.2f}; "
        f"{len(learned)} learning(s) saved"
    )
    return learned
