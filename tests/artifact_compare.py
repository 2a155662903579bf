"""Artifacts of the same attempts made different ways (threads or Ray, one run or merged
shards) compared on what they say: times, durations, run ids and this machine's paths of
run directories are blanked, and the keys that only say how the run was made are dropped."""

from __future__ import annotations

import re
from typing import Any

VOLATILE = {
    "run_id",
    "created_at",
    "started_at",
    "finished_at",
    "duration_ms",
    "truth_anchor",
    "run_dir",
    "state_root",
    "seconds",
}
HOW_MADE = {"merged", "shard"}  # top-level keys of a merged artifact or a shard's
_RUN_PATH = re.compile(r"[^\s'\"]*/runs/[^/\s'\"]+")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")  # a function's repr in a pytest judge's message


def comparable(value: Any, top: bool = True) -> Any:
    if isinstance(value, dict):
        return {
            k: "<volatile>" if k in VOLATILE else comparable(v, False)
            for k, v in value.items()
            if not (top and k in HOW_MADE)
        }
    if isinstance(value, list):
        return [comparable(v, False) for v in value]
    if isinstance(value, str):
        return _ADDRESS.sub(" at 0x", _RUN_PATH.sub("<run>", value))
    return value
