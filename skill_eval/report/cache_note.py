"""The report's note on the baseline cache: a miss, a pool and its size, or why a cached
baseline was not pooled (the drift guard of engine/baseline_reuse.py refused it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .view import _number, one_line


def cache_note(cache: Any) -> str | None:
    if not isinstance(cache, Mapping):
        return None
    if not cache.get("hit"):
        return "baseline run afresh (cache miss)"
    if (refused := _drift_note(cache)) is not None:
        return refused
    details = []
    if cache.get("key"):
        details.append(f"key {one_line(cache['key'])[:12]}")
    if isinstance(cache.get("age_seconds"), int | float):
        details.append(f"age {_number(cache['age_seconds'] / 3600)} h")
    runs = cache.get("runs_from_cache")
    if runs == 0:
        return "baseline run afresh (nothing in the cache to pool with)"
    if isinstance(runs, int) and isinstance(cache.get("attempts_from_cache"), int):
        # since baselines accumulate: the cached attempts join the run's own
        where = f"{runs} earlier run{'' if runs == 1 else 's'}"
        head = f"baseline pooled with {cache['attempts_from_cache']} cached attempts of {where}"
        return head + (f" ({', '.join(details)})" if details else "")
    if cache.get("attempts_from_cache") is not None:
        details.append(f"{cache['attempts_from_cache']} attempts")
    return "baseline served from the cache" + (f" ({', '.join(details)})" if details else "")


def _drift_note(cache: Mapping[str, Any]) -> str | None:
    """Why a cached baseline was not pooled (engine/baseline_reuse.py), or None when it was
    or nothing was tested."""
    guard = cache.get("drift_guard")
    if cache.get("pooled") is not False or not isinstance(guard, Mapping):
        return None
    refused = [r for r in cache.get("runs_refused") or () if isinstance(r, Mapping)]
    runs = ", ".join(one_line(r.get("run_id")) for r in refused[:3]) + (
        f" and {len(refused) - 3} more" if len(refused) > 3 else ""
    )
    if guard.get("agree"):
        reasons = "; ".join(dict.fromkeys(one_line(r.get("reason")) for r in refused))
        return f"baseline not pooled: cached runs {runs} refused ({reasons}); own baseline used"
    rates = [guard.get("fresh_rate"), guard.get("cached_rate")]
    if not all(isinstance(r, int | float) for r in rates) or not isinstance(
        guard.get("p"), int | float
    ):
        return (
            f"baseline not pooled: cached runs {runs} disagree with this run's; own baseline used"
        )
    return (
        f"baseline not pooled: this run's {guard.get('fresh_attempts')} fresh baseline attempts "
        f"pass {_pct(rates[0])} a task, the cached runs {runs} {_pct(rates[1])} (drift test "
        f"p = {guard['p']:.3f} < {guard.get('level')}); decided on this run's own baseline"
    )


def _pct(value: Any) -> str:
    return f"{float(value) * 100:.0f}%"
