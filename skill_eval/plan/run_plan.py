"""`RunPlan`: every setting of one evaluation, grouped by who owns it.

    inputs     what is evaluated: the suite, and the arms' skills (standalone) or a ranking's
               candidate (pipeline)
    execution  where and how attempts run: runner (threads | ray), concurrency, retries, shard
    executor   the model service that runs attempts: its name, model and skill mode, and its
               own options (checked against that executor's JSON Schema); with --arm, the
               options of the other executors arms run on
    judging    model-graded judges: their executor and model, the judge cache, evaluators
    decision   how attempts become a verdict: pass@k, samples or a budget, policy, margins,
               thresholds
    records    what is written and kept: state root, artifact path, resume, previews, caps,
               kept workspaces, the baseline cache, progress

Every section is a frozen dataclass of plain values, so a plan is stored in `run.json` as it
is (plan/stored.py) and read back for `rejudge` and `merge`. Build one with
`RunPlan.from_flags(...)` (the flags of `skill-eval run`, by their Python names; see
plan/flags.py), which checks every value and combination before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .flags import plan_from_flags
from .sections import (
    Decision,
    Execution,
    ExecutorChoice,
    Inputs,
    Judging,
    Records,
    frozen_mapping,
)

# Version of the stored plan (`RunPlan.to_dict`); plan/stored.py reads this one and the flat
# `options` of the runs written before plans had sections.
PLAN_VERSION = 1


@dataclass(frozen=True)
class RunPlan:
    """One evaluation's settings, by owner (see the module docstring)."""

    inputs: Inputs
    execution: Execution = field(default_factory=Execution)
    executor: ExecutorChoice = field(default_factory=ExecutorChoice)
    judging: Judging = field(default_factory=Judging)
    decision: Decision = field(default_factory=Decision)
    records: Records = field(default_factory=Records)

    @property
    def sample_count(self) -> int:
        return self.decision.sample_count

    @classmethod
    def from_flags(cls, **flags: Any) -> RunPlan:
        """The plan of `skill-eval run` with these flags, by their Python names
        (`task_suite="suite.yaml", standalone=True, skill_path="my-skill", mock=True`),
        checked: a bad value or combination is a UsageError. See plan/flags.py."""
        return plan_from_flags(cls, **flags)

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain JSON data, versioned: `{"version": 1, "inputs": {...}, ...}`
        (plan/stored.py reads it back)."""
        data: dict[str, Any] = {"version": PLAN_VERSION}
        for section in fields(self):
            values = getattr(self, section.name)
            data[section.name] = {
                f.name: _plain(getattr(values, f.name))
                for f in fields(values)
                if _stored(f, getattr(values, f.name))
            }
        return data


# Fields stored only when set (--arm's, --strict): a plan without them reads as it did before.
UNSET_UNSTORED = frozenset(
    {"arms", "reference_arm", "arm_options", "strict", "max_cost_usd", "max_tokens_total"}
)
# Fields stored only when they differ from their default (improve's family of versions).
DEFAULT_UNSTORED = frozenset({"family_size"})


def _stored(spec: Any, value: Any) -> bool:
    if spec.name in UNSET_UNSTORED:
        return bool(value)
    return spec.name not in DEFAULT_UNSTORED or value != spec.default


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


__all__ = [
    "Decision",
    "Execution",
    "ExecutorChoice",
    "Inputs",
    "Judging",
    "PLAN_VERSION",
    "Records",
    "RunPlan",
    "frozen_mapping",
]
