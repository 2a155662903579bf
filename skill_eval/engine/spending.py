"""A run's price and its spending, around its attempts: `announce` says the plan and what it
will cost before anything runs (a cap the estimate is over stops the run there), and `metered`
holds the run to its caps while it goes on (its executors charge each model reply to the meter
and are refused further requests once a cap is reached; engine/spend.py), ending a run the
cap stopped short as BudgetExhausted (never a pass). The caps are the plan's (--max-cost-usd,
--max-tokens-total); engine/estimate.py prices, engine/spend.py counts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import BudgetExhausted
from .estimate import Estimate, check_caps, estimate_run, prices_of
from .opening import OpenRun
from .prepare import Log, Prepared
from .spend import Meter, total


def announce(prepared: Prepared, log: Log, estimate: Estimate | None = None) -> Estimate:
    """The run's plan and price, first (not with --quiet, which asks for the summary alone);
    a cap the estimate is over stops it here (BudgetExhausted)."""
    estimate = estimate or estimate_run(prepared)
    if prepared.plan.records.progress:
        for line in estimate.lines():
            log(line)
    warning = check_caps(estimate, prepared.plan.records)
    if warning is not None:
        log(f"warning: {warning}")
    return estimate


@contextmanager
def metered(
    prepared: Prepared, opened: OpenRun, estimate: Estimate, log: Log
) -> Iterator[Meter | None]:
    """The run's meter (None: no cap), counting what earlier sessions of a resumed run spent
    (whose plan and price are said here, once its journal is read). A run the cap stopped
    before every planned attempt finished ends as BudgetExhausted when the block ends."""
    records = prepared.plan.records
    prices = prices_of(prepared.executor)
    spent = total(opened.done, prices)
    if records.resume is not None:
        announce(prepared, log, estimate.after(opened.done, spent))
    if records.max_cost_usd is None and records.max_tokens_total is None:
        yield None
        return
    meter = Meter(records.max_cost_usd, records.max_tokens_total, prices, already=spent)
    meter.count_finished(opened.done)
    yield meter
    planned = sum(estimate.attempts.values())
    if meter.reached is None or meter.finished >= planned:
        return  # no cap reached, or reached by the last attempts: the run is whole
    where = str(opened.path)
    flag = "--max-cost-usd" if meter.max_cost_usd is not None else "--max-tokens-total"
    stopped = (
        f", {meter.stopped} stopped mid-way by the cap (not failures: run again on resume)"
        if meter.stopped
        else ""
    )
    raise BudgetExhausted(
        f"budget exhausted, no verdict (not a pass): {meter.reached}; {meter.finished} of "
        f"{planned} attempts finished and are kept in {where}{stopped}; finish the run with "
        f"skill-eval run --resume {where} {flag} HIGHER",
        where,
    )


__all__ = ["announce", "metered"]
