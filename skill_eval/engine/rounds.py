"""Running an evaluation's attempts in rounds and deciding between them. One driver,
`in_rounds`, runs a round's jobs (with the attempts a resume or the baseline cache already
holds), summarises everything so far, and asks what to run next. Two uses:

    --early-stop  rounds of sample indices with a look after each (stats/sequential.py); once
                  a look decides, the remaining rounds are never planned
    --budget      a first round at every task and arm, then one round with the rest of the
                  budget where it narrows the interval most (stats/adaptive.py)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..core.model import Arm, Attempt, Task
from ..stats import adaptive, sequential
from ..stats.adaptive import Allocation
from ..stats.decision import Decision
from ..stats.sequential import EarlyStop
from .runner import Job, Runner, plan_jobs
from .summary import EvaluationResult

Summarise = Callable[[list[Attempt]], EvaluationResult]
NextRound = Callable[[EvaluationResult], list[Job]]


def in_rounds(
    runner: Runner,
    first: Sequence[Job],
    done: Iterable[Attempt],
    summarise: Summarise,
    next_round: NextRound,
    carried: Sequence[Attempt] = (),
) -> EvaluationResult:
    """Run `first`, then what `next_round` asks for after each round, until it asks for
    nothing; each summary covers every round so far. `done`: attempts a resume holds, kept
    for the jobs they match (errors run again); `carried`: attempts no job matches (a
    baseline pooled from the cache beyond --samples), part of every summary."""
    held = list(done)
    attempts: list[Attempt] = []
    batch, extra = list(first), list(carried)
    while True:
        keys = {job.key for job in batch}
        matched = [a for a in held if (a.arm, a.task_id, a.index) in keys]
        attempts += runner.run(batch, [*extra, *matched])
        extra = []
        result = summarise(attempts)
        batch = next_round(result)
        if not batch:
            return result


class Looks:
    """--early-stop: jobs are planned sample-major, so look i runs the sample indices up to
    its round's end; after each look the policy's sequential test either decides (the rest is
    never planned: skipped, neither failed nor in error) or asks for the next round."""

    def __init__(self, jobs: Sequence[Job], decision: Decision) -> None:
        self.jobs, self.settings = list(jobs), decision
        self.rounds, _ = sequential.plan(decision.policy, decision.sample_count, decision.pass_k)
        self.look = 1
        self.stopped: int | None = None
        self.decision: sequential.Call | None = None

    def round_jobs(self) -> list[Job]:
        start = self.rounds[self.look - 2] if self.look > 1 else 0
        return [job for job in self.jobs if start <= job.index < self.rounds[self.look - 1]]

    def next_round(self, result: EvaluationResult) -> list[Job]:
        s, end = self.settings, self.rounds[self.look - 1]
        comparison = result.comparisons[0]
        self.decision = sequential.call(
            s.policy,
            comparison.analysis.comparison,
            comparison.passed,
            alpha=sequential.look_alpha(s.policy, s.sample_count, s.pass_k, end),
            per_task=max(1, end // s.pass_k),
            margin=s.margin,
            errors=sequential.has_errors(result.attempts),
        )
        if self.decision is not None and self.look < len(self.rounds):
            self.stopped = self.look
            return []
        if self.look == len(self.rounds):
            return []
        self.look += 1
        return self.round_jobs()

    def record(self) -> EarlyStop:
        ran_to = self.rounds[self.look - 1]
        s = self.settings
        return sequential.record(
            s.policy,
            s.sample_count,
            s.pass_k,
            self.stopped,
            self.decision if self.stopped else None,
            sum(1 for job in self.jobs if job.index >= ran_to),
            len(self.jobs),
        )


def with_looks(
    runner: Runner,
    jobs: Sequence[Job],
    done: Sequence[Attempt],
    decision: Decision,
    summarise: Summarise,
) -> EvaluationResult:
    """--early-stop's run: its looks in rounds (see Looks); attempts a run holds that no job
    plans (a baseline pooled from the cache) are part of every look."""
    looks = Looks(jobs, decision)
    planned = {job.key for job in jobs}
    carried = [a for a in done if (a.arm, a.task_id, a.index) not in planned]
    result = in_rounds(runner, looks.round_jobs(), done, summarise, looks.next_round, carried)
    return replace(result, early_stop=looks.record())


class Budget:
    """--budget: a first round of `adaptive.first_round` attempts at every task and arm, then
    the rest placed by `adaptive.allocate` from the first round's outcomes: an arm's extra
    attempts at a task follow the other arm's first round there (stats/adaptive.py)."""

    def __init__(
        self, arms: Sequence[Arm], tasks: Sequence[Task], budget: int, reference: str
    ) -> None:
        self.arms, self.tasks, self.budget = list(arms), list(tasks), budget
        # allocate speaks of the arms' roles: the reference is the baseline
        self.roles = {
            arm.name: "baseline" if arm.name == reference else "candidate" for arm in arms
        }
        self.first = adaptive.first_round(budget, len(tasks))
        self.extra: dict[str, dict[str, int]] | None = None

    def first_jobs(self) -> list[Job]:
        return plan_jobs(self.arms, self.tasks, self.first)

    def next_round(self, result: EvaluationResult) -> list[Job]:
        if self.extra is not None:
            return []
        first = {
            self.roles[arm.name]: {
                r.task_id: [a.status for a in r.attempts if a.index < self.first]
                for r in arm.results
            }
            for arm in result.arms
        }
        remaining = self.budget - 2 * len(self.tasks) * self.first
        by_role = adaptive.allocate(first, remaining)
        self.extra = {name: by_role[role] for name, role in self.roles.items()}
        extra = self.extra
        most = max((n for per_task in extra.values() for n in per_task.values()), default=0)
        # interleaved as plan_jobs does, so a slow hour favours neither arm
        return [
            Job(arm, task, self.first + i)
            for i in range(most)
            for task in self.tasks
            for arm in self.arms
            if i < extra[arm.name][task.id]
        ]

    def record(self) -> Allocation:
        return Allocation(self.budget, self.first, self.extra or {}, len(self.tasks))


def within_budget(
    runner: Runner,
    arms: Sequence[Arm],
    tasks: Sequence[Task],
    done: Sequence[Attempt],
    budget: int,
    reference: str,
    summarise: Summarise,
) -> EvaluationResult:
    """--budget's run: the first round, then the allocated one (see Budget)."""
    plan = Budget(arms, tasks, budget, reference)
    result = in_rounds(runner, plan.first_jobs(), done, summarise, plan.next_round)
    return replace(result, adaptive=plan.record())


__all__ = ["Budget", "Looks", "in_rounds", "with_looks", "within_budget"]
