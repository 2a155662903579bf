"""What a jailed agent CLI spends, as the jail's API forward sees it (every agent executor:
Claude Code, OpenCode, Codex). The forward asks `admit` of each request the agent sends (a
spent budget: the request goes nowhere and the agent gets a 400 it does not retry) and tells
`heard` each reply's usage as it is relayed, priced at the reply's model and charged to the
run's budget at once. The attempt's own usage and cost are its replies' (`spent_in`), not what
the CLI prints at its end: an attempt that timed out, crashed or was killed costs what its
replies cost.

    spending = AgentSpending(prices, default_model)
    proxy = ApiProxy(url, headers, dialect, admit=spending.admit, on_usage=spending.heard)
    ...                                                   # the attempt runs, log = its ApiLog
    why = spending.stopped(log)                           # the budget refused a request?
    result = spending.settle(result, log)                 # the replies' usage, cost, models
"""

from __future__ import annotations

from dataclasses import replace

from ..core.budget import Budget, stopped_for_budget
from ..core.model import ExecutionResult, Usage
from ..jail.api_log import ApiLog
from ..jail.wire import ApiRequest, Refusal, ReplyUsage
from .pricing import PriceTable


def usage_of(reply: ReplyUsage) -> Usage:
    return Usage(
        reply.input_tokens,
        reply.output_tokens,
        reply.cache_creation_input_tokens,
        reply.cache_read_input_tokens,
    )


class AgentSpending:
    """One agent executor's spending through its jail's forward: the budget it was given
    (`budget`, None: no cap), its price table and the model a reply that names none ran on."""

    def __init__(self, prices: PriceTable, model: str | None) -> None:
        self.prices, self.model = prices, model
        self.budget: Budget | None = None

    def cost(self, reply: ReplyUsage) -> float:
        model = reply.model or self.model
        return self.prices.cost(model, usage_of(reply))[0] if model else 0.0

    def admit(self, request: ApiRequest) -> Refusal | None:
        """The forward's admission hook: no request once the budget is spent."""
        budget = self.budget
        why = budget.refusal() if budget is not None else None
        if why is None:
            return None
        return Refusal(f"is not sent: the run's budget is spent ({why})", tampering=False)

    def heard(self, reply: ReplyUsage) -> None:
        """The forward's usage hook: one reply, charged to the budget as it ends."""
        budget = self.budget
        if budget is not None:
            budget.charge(self.cost(reply), usage_of(reply).total)

    def stopped(self, log: ApiLog) -> str | None:
        """Why the budget stopped the attempt `log` is of (it refused one of its requests), or
        None."""
        why = self.budget.refusal() if self.budget is not None else None
        return why if why is not None and log.refusals else None

    def settle(self, result: ExecutionResult, log: ApiLog) -> ExecutionResult:
        """`result` with the usage, cost and models of the replies `log` saw (each charged to
        the budget as it came, when there is one)."""
        usages = list(log.usages)
        usage = sum((usage_of(u) for u in usages), Usage())
        cost = sum(self.cost(u) for u in usages)
        models = sorted({u.model for u in usages if u.model})
        meta = {**result.meta, **({"models": models} if models else {})}
        charged = self.budget is not None
        return replace(result, usage=usage, cost_usd=cost, meta=meta, charged=charged)


def stopped_attempt(why: str, result: ExecutionResult) -> ExecutionResult:
    """The attempt the budget stopped (core/budget.py), keeping what `result` says it did."""
    stopped = stopped_for_budget(why, result.usage, result.cost_usd)
    return replace(stopped, transcript=result.transcript, meta={**result.meta, **stopped.meta})


__all__ = ["AgentSpending", "stopped_attempt", "usage_of"]
