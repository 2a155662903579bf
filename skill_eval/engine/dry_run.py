"""`run --dry-run`: a run planned, not run. The inputs are prepared and checked as a real run
would (the suite, the judges, the arms, the executor and its model), and the plan and its
price printed; no model is called, no run directory opened, and nothing a real run would need
here is asked for: a key, the agent's binary, a jail or a server that is missing is a line to
fix, not an error. A resumed run is priced from its journal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..core.model import Attempt
from ..errors import BudgetExhausted
from ..plan.run_plan import RunPlan
from .estimate import check_caps, estimate_run
from .journal import JOURNAL_NAME, Journal
from .journal_key import journal_key
from .prepare import prepare
from .spend import total


def dry_run(plan: RunPlan, log: Callable[[str], None]) -> list[str]:
    """The lines --dry-run prints: the plan, the estimate, a cap it is over, and what a real
    run would need first."""
    prepared = prepare(plan, log, preflight=False)
    if prepared.skip is not None:
        return [f"plan: nothing runs: {prepared.skip.verdict} ({prepared.skip.reason})"]
    model = prepared.describe.get("model")
    lines = [f"plan: executor {prepared.executor.name}" + (f", model {model}" if model else "")]
    estimate = estimate_run(prepared)
    if plan.records.resume:
        done = read_journal(Path(plan.records.resume), plan)
        estimate = estimate.after(done, total(done, prepared.executor.prices))
    lines += estimate.lines()
    try:
        if (warning := check_caps(estimate, plan.records)) is not None:
            lines.append(f"warning: {warning}")
    except BudgetExhausted as exc:
        lines.append(f"cap: a run would stop here, exit {exc.exit_code}: {exc}")
    lines += [f"to fix before a real run: {line}" for line in prepared.missing]
    return lines


def read_journal(run_dir: Path, plan: RunPlan) -> list[Attempt]:
    """The attempts a run directory's journal holds (none when it has none)."""
    path = run_dir / JOURNAL_NAME
    if not path.is_file():
        return []
    key = journal_key(plan.records.journal_key, Path(plan.records.state_root))
    return Journal(path, plan.records.max_preview_chars, key).read()


__all__ = ["dry_run", "read_journal"]
