"""The report's note on the baseline cache: a miss, a cache too small to save attempts, the
runs refused (another agent version or models), or the cached attempts drawn beside the run's
own, with the bound they would have given against the bound that decided (they decide
nothing: stats/drift.py) and the drift test's warning when they differ from today's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .text import number_text, one_line


def cache_note(cache: Any, pool: Any = None) -> str | None:
    """One line for the summary's `cache` note (`pool`: the artifact's `baseline_pool`)."""
    if not isinstance(cache, Mapping):
        return None
    if not cache.get("hit"):
        return "baseline run afresh (cache miss)"
    details = []
    if cache.get("key"):
        details.append(f"key {one_line(cache['key'])[:12]}")
    if isinstance(cache.get("age_seconds"), int | float):
        details.append(f"age {number_text(cache['age_seconds'] / 3600)} h")
    runs = cache.get("runs_from_cache")
    if runs == 0:
        return _not_drawn(cache)
    if isinstance(runs, int) and isinstance(cache.get("attempts_from_cache"), int):
        where = f"{runs} earlier run{'' if runs == 1 else 's'}"
        head = f"{cache['attempts_from_cache']} cached baseline attempts of {where}"
        head += f" ({', '.join(details)})" if details else ""
        return head + _bound_note(pool) + _drift_warning(cache)
    if cache.get("attempts_from_cache") is not None:
        details.append(f"{cache['attempts_from_cache']} attempts")
    return "baseline served from the cache" + (f" ({', '.join(details)})" if details else "")


def _not_drawn(cache: Mapping[str, Any]) -> str:
    """Why nothing was drawn: runs refused, or a cache too small to save attempts."""
    refused = [r for r in cache.get("runs_refused") or () if isinstance(r, Mapping)]
    if refused:
        runs = ", ".join(one_line(r.get("run_id")) for r in refused[:3]) + (
            f" and {len(refused) - 3} more" if len(refused) > 3 else ""
        )
        reasons = "; ".join(dict.fromkeys(one_line(r.get("reason")) for r in refused))
        return f"baseline run afresh: cached runs {runs} refused ({reasons})"
    held = cache.get("runs")
    count = len(held) if isinstance(held, list) else 0
    return (
        f"baseline run afresh: the cache holds {count} earlier run"
        f"{'' if count == 1 else 's'} of it, less than the full pool at which it saves "
        "attempts (4 x --samples a task)"
    )


def _bound_note(pool: Any) -> str:
    """ "; this run made 12 of its 30 baseline attempts and decides on them: lower bound -10.4
    points; with the cached ones pooled in ... it would read -4.3 ..." (from
    baseline_pool.verdict_bound), or ""."""
    bound = pool.get("verdict_bound") if isinstance(pool, Mapping) else None
    if not isinstance(bound, Mapping):
        return ""
    mine, pooled = bound.get("bound"), bound.get("pooled_bound")
    if not isinstance(mine, int | float) or not isinstance(pooled, int | float):
        return ""
    own, full = bound.get("own_attempts"), bound.get("full_attempts")
    made = f"{own} of its {full}" if isinstance(full, int) else f"{own}"
    return (
        f"; this run made {made} baseline attempts and decides on them: the verdict's lower "
        f"bound {mine * 100:+.1f} points; with the cached ones pooled in, as if the cache were "
        f"today's baseline, it would read {pooled * 100:+.1f} (a cache may have drifted, so it "
        "never decides)"
    )


def _drift_warning(cache: Mapping[str, Any]) -> str:
    guard = cache.get("drift_guard")
    if not isinstance(guard, Mapping) or guard.get("agree") is not False:
        return ""
    rates = [guard.get("fresh_rate"), guard.get("cached_rate")]
    p = guard.get("p")
    if not all(isinstance(r, int | float) for r in rates) or not isinstance(p, int | float):
        return "; the cached attempts differ from today's"
    return (
        f"; the cached attempts differ from today's: this run's {guard.get('fresh_attempts')} "
        f"fresh ones pass {_pct(rates[0])} a task, the cache's {_pct(rates[1])} (drift test "
        f"p = {p:.3f})"
    )


def _pct(value: Any) -> str:
    return f"{float(value) * 100:.0f}%"
