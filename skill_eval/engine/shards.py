"""`--shard i/n`: one deterministic slice of a run, for CI matrices; `skill-eval merge` joins
the slices' journals into one artifact (engine/merge.py).

The slice is by (task, sample): every (sample index, task) pair of the plan is numbered in
plan order (sample 0 of every task, then sample 1, ...) and pair number p belongs to shard
p mod n + 1. Both arms of a pair always land in the same shard, so each shard's attempts pair
up, and the shards are balanced to within one pair. The numbering depends only on the suite's
task order and the sample count, which the merge checks are the same in every shard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..core.model import Task
from ..errors import UsageError
from ..stats.verdict import Verdict
from .jobs import AttemptJob

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based: `1/3`, `2/3`, `3/3`)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`i/n` with 1 <= i <= n; a UsageError naming the flag otherwise."""
        match = _SHARD.match(text or "")
        if match is None:
            raise UsageError(f"--shard must be i/n (e.g. 1/3), got {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if not 1 <= count <= MAX_SHARDS or not 1 <= index <= count:
            raise UsageError(f"--shard {text}: needs 1 <= i <= n <= {MAX_SHARDS}")
        return cls(index, count)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, position: int) -> bool:
        """Whether pair number `position` of the plan is in this shard."""
        return position % self.count == self.index - 1

    def owns_pair(self, tasks: Sequence[Task], task_id: str, sample: int) -> bool:
        """Whether (task, sample) is in this shard; False for a task not in `tasks`."""
        ids = [t.id for t in tasks]
        return task_id in ids and self.owns(sample * len(ids) + ids.index(task_id))

    def select(self, jobs: Iterable[AttemptJob], tasks: Sequence[Task]) -> list[AttemptJob]:
        """The jobs of this shard, in plan order."""
        order = {t.id: n for n, t in enumerate(tasks)}
        return [job for job in jobs if self.owns(job.index * len(order) + order[job.task.id])]

    def verdict(self, attempts: int) -> tuple[Verdict, dict[str, int]]:
        """A shard's verdict (one slice decides nothing: `skill-eval merge` joins them) and
        its block in the artifact."""
        return (
            Verdict(
                "skipped",
                f"shard {self.label}: {attempts} attempts of a sharded "
                "run; join the shards with `skill-eval merge`",
            ),
            {"index": self.index, "count": self.count, "attempts": attempts},
        )


def parse_shard(text: str | None) -> Shard | None:
    return None if text is None else Shard.parse(text)
