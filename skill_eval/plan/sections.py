"""The sections of a run plan, each a frozen dataclass of plain values, by owner (see
plan/run_plan.py): `Inputs`, `Execution`, `ExecutorChoice`, `Judging`, `Records`, and the
`Decision` (stats/decision.py, read below the plan too). plan/flags.py builds them from the
flags; plan/run_plan.py composes them into a RunPlan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..core.attempt_policy import AttemptPolicy
from ..core.blobs import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PREVIEW_CHARS
from ..core.paths import DEFAULT_STATE_ROOT
from ..executors.base import DEFAULT_EXECUTOR, SkillMode
from ..jail import JailKind
from ..stats.decision import Decision
from .kinds import KeepPolicy, Mode, RunnerName


def frozen_mapping(values: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A read-only copy of `values`, so a frozen section cannot be changed through it."""
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class Inputs:
    """What is evaluated. Standalone: `skill_path` against no skill, `baseline_skill`, or
    nothing (`no_baseline`). Pipeline: candidate `candidate_id` of the ranking artifact
    `ranking` (--input) against the original skill it names."""

    task_suite: str
    mode: Mode = "pipeline"
    skill_path: str | None = None
    baseline_skill: str | None = None
    no_baseline: bool = False
    ranking: str | None = None  # --input
    candidate_id: str | None = None
    skills_root: str | None = None  # a fence a ranking's target.path must lie inside
    # Standalone: arms that differ by agent, delivery and model (`NAME=EXECUTOR:DELIVERY[@MODEL]`,
    # each canonical: plan/arms.py) in place of the candidate/baseline pair, and the one the others
    # are compared with (set when the plan is made: --reference-arm, or the default).
    arms: tuple[str, ...] = ()
    reference_arm: str | None = None
    # What the inputs leave out is an error, not a warning (today: --mock-outputs that do
    # not script every arm and task of the run).
    strict: bool = False

    @property
    def standalone(self) -> bool:
        return self.mode == "standalone"


@dataclass(frozen=True)
class Execution:
    """Where and how attempts run."""

    runner: RunnerName = "threads"
    ray_address: str | None = None  # runner ray: the cluster (None: start a local one)
    concurrency: int = 8  # attempts at once, both arms sharing one pool
    max_retries: int = 5  # retries of transient failures (rate limits, 5xx, timeouts)
    shard: str | None = None  # "i/n": only this slice of (task, sample) pairs (engine/shards.py)
    # What the candidate controls (the agent, code a judge runs) runs unconfined: only where
    # no jail can be built, and said in the summary's first lines and the artifact.
    no_jail: bool = False
    jail_provider: str = "auto"  # --jail: a provider's name (jail/providers.py), or auto
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES  # longer outputs are cut before judging

    @property
    def jail(self) -> JailKind:
        return "none" if self.no_jail else self.jail_provider

    @property
    def attempts(self) -> AttemptPolicy:
        """How each attempt is treated: its retries and its output cut."""
        return AttemptPolicy(max_retries=self.max_retries, max_output_bytes=self.max_output_bytes)


@dataclass(frozen=True)
class ExecutorChoice:
    """The executor that runs attempts. `model` and `skill_mode` are common to every
    executor; `options` are its own (--executor-option, the shorthand flags, the config
    file's executor table), plain JSON values already checked against its schema."""

    name: str = DEFAULT_EXECUTOR
    model: str | None = None
    skill_mode: SkillMode = "system"
    options: Mapping[str, Any] = field(default_factory=frozen_mapping)
    # The options of each other executor an arm runs on (--arm), by executor name: its config
    # file table's, checked against its schema.
    arm_options: Mapping[str, Any] = field(default_factory=frozen_mapping)


@dataclass(frozen=True)
class Judging:
    """Model-graded judges. `executor` None: the executor's own grader when it has one,
    else the mock grader. `grader_options` go to that grader's config (today: claude_bin).
    `model` (--judge-model) beats a judge's own `judge_model`; `default_model` is the model
    of a judge that names none: SKILL_EVAL_JUDGE_MODEL, else the cheap model, resolved once
    when the plan is built (what the judges, the fingerprint and the estimate read)."""

    executor: str | None = None
    model: str | None = None
    default_model: str | None = None
    cache: bool = True  # --no-judge-cache turns it off
    cache_dir: str | None = None  # default <state-root>/judge-cache
    evaluators_dirs: tuple[str, ...] = ()
    grader_options: Mapping[str, Any] = field(default_factory=frozen_mapping)


@dataclass(frozen=True)
class Records:
    """What the run writes and keeps."""

    state_root: str = DEFAULT_STATE_ROOT
    output: str | None = None  # the artifact's path (None: under <state-root>/evaluations/)
    resume: str | None = None  # a run directory, or "" for the latest run with these inputs
    keep_workspaces: KeepPolicy = "failed"
    baseline_cache_dir: str | None = None
    baseline_ttl: str = "7d"
    max_preview_chars: int = DEFAULT_MAX_PREVIEW_CHARS  # longer outputs: preview + blob
    progress: bool = True
    config_file: str | None = None  # the project config file the defaults came from
    journal_key: str | None = None  # the key file journals are signed with (default: state root's)
    # Caps on what the whole run spends (judges included): refused up front when the estimate
    # is over, stopped when reached (engine/estimate.py, engine/spend.py).
    max_cost_usd: float | None = None
    max_tokens_total: int | None = None


__all__ = [
    "Decision",
    "Execution",
    "ExecutorChoice",
    "Inputs",
    "Judging",
    "Records",
    "frozen_mapping",
]
