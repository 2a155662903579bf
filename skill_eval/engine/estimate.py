"""What a run will cost before it costs it (`run --dry-run`, and the first lines of every run):
attempts per arm, model-graded judge calls, baseline attempts the cache may serve, and tokens
and dollars with their basis. No model is called.

The basis is, first, earlier runs of the same suite (its sha256) with the same model in the
state root: their artifacts' usage per attempt, judges included. Else a prior: the prompt and
the arm's skill at 4 characters a token in (plus AGENT_PRIOR_IN for an agent's own system
prompt, tools and turns), PRIOR_OUT tokens out an attempt, JUDGE_PRIOR a judgement, priced
with the executor's price table. A model with no known price leaves the dollars unknown.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.model import Attempt, Task
from ..errors import BudgetExhausted
from ..executors.base import OFFLINE_EXECUTOR, ExecutorBase
from ..executors.pricing import PriceTable, load_price_table
from ..judges.llm import DEFAULT_JUDGE_MODEL
from ..plan.run_plan import Records, RunPlan
from ..stats.drift import FRESH_SHARE, fresh_counts
from .artifact import model_graded
from .journal import JOURNAL_NAME, Journal
from .journal_key import journal_key
from .prepare import Prepared, prepare
from .runner import plan_jobs
from .spend import Spent, total

CHARS_PER_TOKEN = 4
PRIOR_OUT = {"text": 500, "agent": 2_000}  # output tokens an attempt, by executor kind
AGENT_PRIOR_IN = 25_000  # an agent's system prompt, tool definitions and turns, an attempt
JUDGE_PRIOR = (1_500, 300)  # tokens in and out of one model-graded judgement
HISTORY_RUNS = 20  # the newest artifacts read for a basis
MAX_ARTIFACT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Rate:
    """The cost of one attempt (or judgement): dollars (None: no known price) and tokens."""

    usd: float | None
    tokens: int


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
        attempts = {arm.name: budget // len(arms) for arm in arms}
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
        rates = {a.name: _prior(a.skill, suite.tasks, runs_on[a.name], notes) for a in arms}
        judgement = _judge_prior(prepared, notes)
        basis = (
            f"basis: prior, prompt and skill at {CHARS_PER_TOKEN} chars a token in, "
            f"{PRIOR_OUT['text']} tokens out a text attempt, {PRIOR_OUT['agent']} out and "
            f"{AGENT_PRIOR_IN:,} more in an agent attempt, {JUDGE_PRIOR[0]}+{JUDGE_PRIOR[1]} "
            "a judgement"
        )
    return Estimate(
        attempts, judge_calls, rates, judgement, basis, _reusable(prepared), tuple(notes)
    )


def _mean(rates: Sequence[Rate]) -> Rate:
    known = [r.usd for r in rates if r.usd is not None]
    usd = sum(known) / len(known) if known and len(known) == len(rates) else None
    return Rate(usd, round(sum(r.tokens for r in rates) / max(1, len(rates))))


def prices_of(executor: ExecutorBase) -> PriceTable:
    """The executor's price table (--price-file), else the built-in one."""
    table = getattr(executor, "prices", None)
    return table if isinstance(table, PriceTable) else load_price_table()


def _priced(
    executor: ExecutorBase, model: str | None, tokens_in: int, tokens_out: int, notes: list[str]
) -> Rate:
    tokens = tokens_in + tokens_out
    if executor.name == OFFLINE_EXECUTOR:
        note = "the mock executor calls no model: no tokens, no dollars"
        if note not in notes:
            notes.append(note)
        return Rate(0.0, 0)
    price = prices_of(executor).lookup(model) if model else None
    if price is None:
        note = f"no known price for model {model or '(the executor default)'!r}: dollars unknown"
        if note not in notes:
            notes.append(note + " (--price-file adds one; --max-tokens-total caps tokens)")
        return Rate(None, tokens)
    return Rate((tokens_in * price.input + tokens_out * price.output) / 1_000_000, tokens)


def _prior(skill: Any, tasks: Sequence[Task], executor: ExecutorBase, notes: list[str]) -> Rate:
    """An attempt's prior rate with this skill and executor, over the suite's tasks."""
    skill_chars = len(skill.content) if skill is not None else 0
    prompt_chars = sum(len(t.prompt or t.query or "") for t in tasks) / max(1, len(tasks))
    tokens_in = round((prompt_chars + skill_chars) / CHARS_PER_TOKEN)
    kind = "agent" if executor.can_act else "text"
    tokens_in += AGENT_PRIOR_IN if kind == "agent" else 0
    described = executor.describe()
    rate = _priced(executor, described.get("model"), tokens_in, PRIOR_OUT[kind], notes)
    # Attempts that watch for the skill (trigger tasks) run on the executor's trigger model
    watching = sum(t.execution_settings().stop_on_skill for t in tasks)
    if not watching or not described.get("trigger_model"):
        return rate
    trigger = _priced(executor, described["trigger_model"], tokens_in, PRIOR_OUT[kind], notes)
    return _mean([rate] * (len(tasks) - watching) + [trigger] * watching)


def _judge_prior(prepared: Prepared, notes: list[str]) -> Rate:
    judging = prepared.plan.judging
    if (judging.executor or prepared.executor.name) == OFFLINE_EXECUTOR:
        return Rate(0.0, 0)  # the mock grader: no model
    model = judging.model or os.environ.get("SKILL_EVAL_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL
    return _priced(prepared.executor, model, JUDGE_PRIOR[0], JUDGE_PRIOR[1], notes)


def _reusable(prepared: Prepared) -> int:
    """Baseline attempts a full cache could serve: all but the fresh ones a run beside it
    makes (stats/drift.py: fresh_counts; none at 1 sample)."""
    plan = prepared.plan
    if not plan.records.baseline_cache_dir or prepared.arms.baseline is None:
        return 0
    tasks = [t.id for t in prepared.suite.tasks]
    fresh = fresh_counts(tasks, plan.sample_count, least=plan.decision.pass_k)
    return plan.sample_count * len(tasks) - sum(fresh.values())


def earlier_rates(prepared: Prepared) -> tuple[dict[str, Rate], int] | None:
    """Per arm, the mean cost and tokens of an attempt (judges included) in the newest
    artifacts of this suite and model under the state root; None when there are none."""
    folder = prepared.state_root / "evaluations"
    model = prepared.describe.get("model")
    try:
        files = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    sums: dict[str, list[float]] = {}  # arm -> [usd, tokens, attempts]
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
            row = sums.setdefault(str(arm), [0.0, 0.0, 0.0])
            row[0] += float(figures.get("cost_usd") or 0)
            row[0] += float(figures.get("judge_cost_usd") or 0)
            row[1] += sum(int(figures.get(k) or 0) for k in TOKEN_KEYS)
            row[2] += max(0, made)
    rates = {arm: Rate(u / n, round(t / n)) for arm, (u, t, n) in sums.items() if n}
    return (rates, runs) if rates else None


TOKEN_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "judge_tokens",
)


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


def dry_run(plan: RunPlan, log: Callable[[str], None]) -> list[str]:
    """--dry-run: the plan's inputs prepared and checked, its plan and price; no model call
    and no run directory. A resumed run is priced from its journal."""
    prepared = prepare(plan, log)
    if prepared.skip is not None:
        return [f"plan: nothing runs: {prepared.skip.verdict} ({prepared.skip.reason})"]
    estimate = estimate_run(prepared)
    if plan.records.resume:
        done = read_journal(Path(plan.records.resume), plan)
        estimate = estimate.after(done, total(done, prices_of(prepared.executor)))
    lines = estimate.lines()
    warning = None
    try:
        warning = check_caps(estimate, plan.records)
    except BudgetExhausted as exc:
        lines.append(f"cap: a run would stop here, exit {exc.exit_code}: {exc}")
    if warning is not None:
        lines.append(f"warning: {warning}")
    return lines


def read_journal(run_dir: Path, plan: RunPlan) -> list[Attempt]:
    """The attempts a run directory's journal holds (none when it has none)."""
    path = run_dir / JOURNAL_NAME
    if not path.is_file():
        return []
    key = journal_key(plan.records.journal_key, Path(plan.records.state_root))
    return Journal(path, plan.records.max_preview_chars, key).read()


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
            "--max-cost-usd: a model here has no known price, so the estimate cannot be "
            "checked against it; the run counts the cost its executors report"
        )
    return None


def _above(cost: float) -> str:
    """A round cap a quarter above `cost`."""
    return f"{math.ceil(cost * 1.25 * 100) / 100:.2f}"


__all__ = ["Estimate", "Rate", "check_caps", "earlier_rates", "estimate_run", "prices_of"]
