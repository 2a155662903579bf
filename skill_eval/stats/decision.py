"""`Decision`: how a run's attempts become its verdict (the run plan's `decision` section):
pass@k and the samples or budget behind it, the policy with its margins, the thresholds, and
the family of candidates a comparison is one of. Plain values, stored in `run.json`, and read
by every layer that decides: the engine's summaries, the judges' roles and the plan."""

from __future__ import annotations

from dataclasses import dataclass

from .adaptive import floor
from .policy import DEFAULT_POLICY, Policy


@dataclass(frozen=True)
class Decision:
    """How attempts become a verdict; shards of one run must agree on all of it."""

    pass_k: int = 1
    samples: int | None = None  # attempts per task and arm (None: pass_k)
    policy: Policy = DEFAULT_POLICY
    margin: float | None = None  # None: the policy's own (stats/policy.py)
    min_delta: float = 0.0
    early_stop: bool = False  # stop sampling once the sequential test decides
    budget: int | None = None  # attempts in all, both arms, placed adaptively (not --samples)
    eval_threshold: float = 1.0  # pipeline: candidates scored below it are skipped
    min_pass_rate: float = 0.5  # without a baseline: the pass rate needed
    max_error_rate: float = 0.1  # above this share of attempts in error the verdict is error
    # Candidates each comparison is one of (one improve run's versions): decided at the
    # policy's level / family_size (stats/family.py). Not a flag: improve sets it.
    family_size: int = 1

    @property
    def sample_count(self) -> int:
        return self.samples if self.samples is not None else self.pass_k

    def floor_samples(self, tasks: int) -> int:
        """Attempts per task and arm the paired interval's pseudo-task floor assumes: the
        samples, or with a budget what it buys per task and arm on average (as
        scripts/verdict_contract.py benches it)."""
        return floor(self.budget, tasks) if self.budget is not None else self.sample_count


__all__ = ["Decision"]
