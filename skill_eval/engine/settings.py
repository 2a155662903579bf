"""`EvaluationSettings`: how one `evaluate` call runs its attempts and decides its comparisons
(engine/evaluation.py runs them, engine/summary.py decides, engine/rounds.py runs them in
rounds for --early-stop and --budget)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.attempt_policy import AttemptPolicy
from ..core.workspace import KeepPolicy
from ..stats import adaptive
from ..stats.policy import DEFAULT_POLICY, Policy
from .shards import Shard


@dataclass(frozen=True)
class EvaluationSettings:
    """How an evaluation runs and decides. `samples` (attempts per task and arm) defaults to
    `pass_k`; `policy`, `min_delta` and `margin` decide each comparison (see stats/policy.py)."""

    pass_k: int = 1
    samples: int | None = None
    policy: Policy = DEFAULT_POLICY
    min_delta: float = 0.0
    margin: float | None = None
    concurrency: int = 8
    # Retries of transient failures, their backoff, and the output cut: an executor output
    # longer than `max_output_bytes` is cut before judging, the cut marked (None: never).
    attempts: AttemptPolicy = field(default_factory=AttemptPolicy)
    # Which final workspaces are kept (none | failed | all), where (None: where they were made).
    keep_workspaces: KeepPolicy = "none"
    workspace_parent: Path | None = None
    keep_root: Path | None = None
    shard: Shard | None = None  # run only this slice of the (task, sample) pairs
    # Stop sampling once the paired interval decides (stats/sequential.py); off: every sample runs.
    early_stop: bool = False
    # Candidates each comparison is one of (e.g. one improve run's versions): decided at the
    # policy's level / family_size (stats/family.py). Several candidate arms: Holm over them.
    family_size: int = 1
    # Attempts in all, both arms, placed adaptively (stats/adaptive.py) instead of `samples`
    # per task and arm; None: fixed sampling.
    budget: int | None = None

    @property
    def sample_count(self) -> int:
        return self.samples if self.samples is not None else self.pass_k

    def floor_samples(self, tasks: int) -> int:
        """Attempts per task and arm the paired interval's pseudo-task floor assumes: the
        samples, or with a budget the attempts it buys per task and arm on average (as
        scripts/verdict_contract.py benches it)."""
        if self.budget is not None:
            return adaptive.floor(self.budget, tasks)
        return self.sample_count


__all__ = ["EvaluationSettings"]
