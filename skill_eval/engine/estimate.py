"""What a run will cost before it costs it (`run --dry-run`, and the first lines of every run):
attempts per arm, model-graded judge calls, baseline attempts the cache may serve, and tokens
and dollars with their basis, for the model each executor names. No model is called.

The basis is, first, earlier runs of the same suite (its sha256) with the same model in the
state root: their artifacts' usage per attempt, judges included. Else the prior
(engine/prior.py): the size of a good answer as the suite gives it (a task's reference, an
eval's expected output), the prompt and the skill, the executor's request frame and its prompt
cache, priced with the executor's table. A model with no known price leaves the dollars
unknown (--max-tokens-total caps what it spends).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.model import Arm, Attempt, Task
from ..errors import BudgetExhausted
from ..executors.base import ExecutorBase, ExecutorConfig
from ..executors.catalog import is_offline
from ..executors.pricing import PriceTable
from ..judges.base import JudgeContext
from ..judges.llm import judge_model
from ..plan.run_plan import Records
from ..stats.drift import FRESH_SHARE, fresh_counts
from .artifact import model_graded
from .prepare import Prepared
from .prior import CHARS_PER_TOKEN, Rate, attempt_spend, judgement_spend, mean, price_of
from .runner import plan_jobs
from .spend import ARTIFACT_TOKENS, Spent

HISTORY_RUNS = 20  # the newest artifacts read for a basis
MAX_ARTIFACT_BYTES = 32 * 1024 * 1024
NO_MODEL = "the mock executor calls no model: no tokens, no dollars"


@dataclass(frozen=True)
class Estimate:
    """A run's plan and its price. `per_attempt` by arm; `spent`: earlier sessions of a
    resumed run, counted in the totals."""

    attempts: Mapping[str, int]
    judge_calls: int
    per_attempt: Mapping[str, Rate]
    per_judgement: Rate
    basis: str
    reusable: int = 0  # baseline attempts the cache may serve (still counted as run)
    notes: tuple[str, ...] = ()
    spent: Spent = field(default_factory=Spent)

    @property
    def tokens(self) -> int:
        own = sum(n * self.per_attempt[arm].tokens for arm, n in self.attempts.items())
        return own + self.judge_calls * self.per_judgement.tokens + self.spent.total_tokens

    @property
    def cost_usd(self) -> float | None:
        rates = [self.per_attempt[a].usd for a in self.attempts if self.attempts[a]]
        rates += [self.per_judgement.usd] if self.judge_calls else []
        if any(r is None for r in rates):
            return None
        own = sum(n * (self.per_attempt[a].usd or 0.0) for a, n in self.attempts.items())
        return own + self.judge_calls * (self.per_judgement.usd or 0.0) + self.spent.total_usd

    def after(self, done: Sequence[Attempt], spent: Spent) -> Estimate:
        """The estimate of a resumed run: what is left to run, plus what was spent."""
        left = dict(self.attempts)
        for attempt in done:
            if attempt.status != "error" and left.get(attempt.arm, 0) > 0:
                left[attempt.arm] -= 1
        share = sum(left.values()) / max(1, sum(self.attempts.values()))
        judge_calls = math.ceil(self.judge_calls * share)
        return replace(self, attempts=left, judge_calls=judge_calls, spent=spent)

    def lines(self) -> list[str]:
        """What --dry-run prints, and every run first."""
        arms = ", ".join(f"{arm} {n}" for arm, n in self.attempts.items())
        out = [f"plan: attempts to run: {arms} ({sum(self.attempts.values())} in all)"]
        out.append(f"plan: model-graded judge calls: {self.judge_calls}")
        if self.reusable:
            out.append(
                f"plan: the baseline cache may serve up to {self.reusable} baseline attempts "
                f"(a run beside a full cache still makes {FRESH_SHARE:.0%} itself, at least "
                "one a task); counted as run here"
            )
        if self.spent.total_tokens or self.spent.total_usd:
            out.append(
                f"plan: spent by earlier sessions of this run: ${self.spent.total_usd:.4f}, "
                f"{self.spent.total_tokens:,} tokens"
            )
        cost = self.cost_usd
        dollars = f"${cost:.4f}" if cost is not None else "dollars unknown"
        out.append(f"estimate: ~{self.tokens:,} tokens, {dollars} ({self.basis})")
        out += [f"estimate: {note}" for note in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempts": dict(self.attempts),
            "judge_calls": self.judge_calls,
            "baseline_reusable": self.reusable,
            "tokens": self.tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "basis": self.basis,
        }


def estimate_run(prepared: Prepared) -> Estimate:
    """The plan and price of a prepared run (see the module docstring)."""
    plan, suite = prepared.plan, prepared.suite
    arms = list(prepared.arms.every)
    jobs = plan_jobs(arms, suite.tasks, plan.sample_count)
    if prepared.shard is not None:
        jobs = prepared.shard.select(jobs, suite.tasks)
    attempts = {arm.name: 0 for arm in arms}
    for job in jobs:
        attempts[job.arm.name] += 1
    graded = set(model_graded(suite.tasks))
    judge_calls = sum(job.task.id in graded for job in jobs)
    budget = plan.decision.budget
    if budget is not None:  # placed adaptively: the budget, shared evenly by the arms
        share = budget / max(1, len(jobs))
        each, extra = divmod(budget, len(arms))
        attempts = {a.name: each + (i < extra) for i, a in enumerate(arms)}
        judge_calls = math.ceil(judge_calls * share)
    notes: list[str] = []
    runs_on = {a.name: prepared.arm_executors.get(a.name, prepared.executor) for a in arms}
    history = earlier_rates(prepared)
    if history is not None:
        per_attempt, count = history
        overall = _mean(list(per_attempt.values()))
        rates = {a.name: per_attempt.get(a.name, overall) for a in arms}
        basis = f"basis: {count} earlier run(s) of this suite and model in the state root"
        judgement = Rate(0.0, 0)  # their figures include their judges'
    else:
        rates = {
            a.name: _arm_rate(a, suite.tasks, runs_on[a.name], attempts[a.name], notes)
            for a in arms
        }
        judgement = _judge_rate(prepared, [t for t in suite.tasks if t.id in graded], notes)
        basis = (
            "basis: prior, the suite's reference answers (else a fixed size), the prompt and "
            f"skill at {CHARS_PER_TOKEN} chars a token, the executor's own prompt and cache"
        )
    return Estimate(
        attempts, judge_calls, rates, judgement, basis, _reusable(prepared), tuple(notes)
    )


def _mean(rates: Sequence[Rate]) -> Rate:
    known = [r.usd for r in rates if r.usd is not None]
    usd = sum(known) / len(known) if known and len(known) == len(rates) else None
    return Rate(usd, round(sum(r.tokens for r in rates) / max(1, len(rates))))


def prices_of(executor: ExecutorBase) -> PriceTable:
    """The executor's price table (--price-file over the built-in one)."""
    return executor.prices


def _note(notes: list[str], note: str) -> None:
    if note not in notes:
        notes.append(note)


def _priced(model: str | None, rate: Rate, notes: list[str]) -> Rate:
    """`rate` as it is, or with no dollars and a note when `model` has no known price."""
    if rate.usd is None:
        _note(
            notes,
            f"no known price for model {model or '(none named)'!r}: dollars unknown "
            "(--price-file adds one; --max-tokens-total caps tokens)",
        )
    return rate


def _arm_rate(
    arm: Arm, tasks: Sequence[Task], executor: ExecutorBase, attempts: int, notes: list[str]
) -> Rate:
    """An attempt's mean prior rate with this arm's skill on its executor, over the tasks."""
    if is_offline(executor.name):
        _note(notes, NO_MODEL)
        return Rate(0.0, 0)
    described = executor.describe()
    config = executor.config
    mode = config.skill_mode if isinstance(config, ExecutorConfig) else "system"
    share = 1 / max(1, attempts)  # of the arm's one write of its cached prefix
    kind = "agent" if executor.can_act else "text"
    by_model: dict[str | None, list[Any]] = {}
    for task in tasks:
        watching = task.execution_settings().stop_on_skill and described.get("trigger_model")
        model = described.get("trigger_model") if watching else described.get("model")
        frame = executor.request_frame(task, arm.skill is not None)
        by_model.setdefault(model, []).append(
            attempt_spend(task, arm.skill, frame, mode, share, kind)
        )
    rates = []
    for model, spends in by_model.items():
        rate = mean(spends).rate(price_of(executor.prices, model))
        rates += [_priced(model, rate, notes)] * len(spends)
    return _mean(rates)


def _judge_rate(prepared: Prepared, graded: Sequence[Task], notes: list[str]) -> Rate:
    """A model-graded judgement's mean prior rate, at each judge's own model (the plan's
    judging section resolves it: --judge-model, the judge's `judge_model`, the default)."""
    judging = prepared.plan.judging
    if not graded or is_offline(judging.executor or prepared.executor.name):
        return Rate(0.0, 0)  # the mock grader: no model
    ctx = JudgeContext(
        suite_dir=prepared.suite.directory,
        judge_model=judging.model,
        default_model=judging.default_model,
    )
    prices = prepared.executor.prices
    rates = []
    for task in graded:
        model = judge_model(ctx, task.judge)
        rate = judgement_spend(task).rate(price_of(prices, model))
        rates.append(_priced(model, rate, notes))
    return _mean(rates)


def _reusable(prepared: Prepared) -> int:
    """Baseline attempts a full cache could serve: all but the fresh ones a run beside it
    makes (stats/drift.py: fresh_counts; none at 1 sample)."""
    plan = prepared.plan
    if not plan.records.baseline_cache_dir or prepared.arms.baseline is None:
        return 0
    tasks = [t.id for t in prepared.suite.tasks]
    fresh = fresh_counts(tasks, plan.sample_count, least=plan.decision.pass_k)
    return plan.sample_count * len(tasks) - sum(fresh.values())


@dataclass
class _Sums:
    """One arm's spending summed over earlier runs: dollars, tokens, attempts made."""

    usd: float = 0.0
    tokens: int = 0
    made: int = 0

    def rate(self) -> Rate:
        return Rate(self.usd / self.made, round(self.tokens / self.made))


def earlier_rates(prepared: Prepared) -> tuple[dict[str, Rate], int] | None:
    """Per arm, the mean cost and tokens of an attempt (judges included) in the newest
    artifacts of this suite and model under the state root; None when there are none."""
    folder = prepared.state_root / "evaluations"
    model = prepared.describe.get("model")
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    sums: dict[str, _Sums] = {}
    runs = 0
    for path in files[:HISTORY_RUNS]:
        usage = _matching_usage(path, prepared.suite.sha256, model)
        if usage is None:
            continue
        runs += 1
        for arm, figures in usage.items():
            if not isinstance(figures, Mapping):
                continue
            made = int(figures.get("attempts") or 0) - int(figures.get("from_cache") or 0)
            row = sums.setdefault(str(arm), _Sums())
            row.usd += float(figures.get("cost_usd") or 0)
            row.usd += float(figures.get("judge_cost_usd") or 0)
            row.tokens += sum(int(figures.get(k) or 0) for k in ARTIFACT_TOKENS)
            row.made += max(0, made)
    rates = {arm: row.rate() for arm, row in sums.items() if row.made}
    return (rates, runs) if rates else None


def _matching_usage(path: Path, sha256: str, model: Any) -> Mapping[str, Any] | None:
    """An artifact's `usage` when it ran this suite with this model (else None)."""
    try:
        if path.stat().st_size > MAX_ARTIFACT_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, Mapping):
        return None
    manifest = data.get("manifest") or {}
    suite = manifest.get("task_suite") if isinstance(manifest, Mapping) else None
    executor = manifest.get("executor") if isinstance(manifest, Mapping) else None
    if not isinstance(suite, Mapping) or suite.get("sha256") != sha256:
        return None
    if isinstance(executor, Mapping) and executor.get("model") != model:
        return None
    usage = data.get("usage")
    return usage if isinstance(usage, Mapping) else None


def check_caps(estimate: Estimate, records: Records) -> str | None:
    """Refuse a run whose estimate is over a cap (BudgetExhausted, nothing ran); a warning
    when the dollars cannot be checked before the run."""
    cost, cap = estimate.cost_usd, records.max_cost_usd
    if cap is not None and cost is not None and cost > cap:
        raise BudgetExhausted(
            f"budget: the estimate ${cost:.4f} is over --max-cost-usd {cap:g}; nothing ran."
            f" Raise the cap (--max-cost-usd {_above(cost)}) or run fewer tasks "
            "or samples; --dry-run shows the plan"
        )
    tokens, most = estimate.tokens, records.max_tokens_total
    if most is not None and tokens > most:
        raise BudgetExhausted(
            f"budget: the estimate of {tokens:,} tokens is over --max-tokens-total {most}; "
            "nothing ran. Raise the cap (--max-tokens-total "
            f"{math.ceil(tokens * 1.25)}) or run fewer tasks or samples"
        )
    if cap is not None and cost is None:
        return (
            "--max-cost-usd: a model here has no known price, so its dollars cannot be "
            "counted (they count as $0); --max-tokens-total caps what it spends"
        )
    return None


def _above(cost: float) -> str:
    """A round cap a quarter above `cost`."""
    return f"{math.ceil(cost * 1.25 * 100) / 100:.2f}"


__all__ = ["Estimate", "Rate", "check_caps", "earlier_rates", "estimate_run", "prices_of"]
