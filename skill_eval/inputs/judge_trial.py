"""`validate --judges`: the model-graded judges of a suite (llm-rubric, rubric, expectations,
and combinations holding one) judge their task's reference and an empty output `repeat` times
each through a judge model, with no judge cache (every judgement is a fresh call).

Per task: the pass rate on each output and the agreement between the repeats
(stats/agreement.py), and flags, as problems located at the task's judge:
- fails its reference in some repeat: an error (the judge, or the reference, is wrong);
- passes on an empty output in some repeat: a warning;
- disagrees with itself (verdicts differ, or scores further apart than MAX_SCORE_SPREAD):
  a warning;
- cannot judge in some repeat (a judge error): a warning.
The figures go into a report kept beside the suite (judge_report.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.model import JudgeResult, Suite, Task
from ..errors import Problem, UsageError
from ..executors.base import DEFAULT_EXECUTOR, OFFLINE_EXECUTOR
from ..judges.base import JudgeContext, build_judge, is_deterministic, run_judge
from ..stats.agreement import Agreement, agreement
from .judge_checks import locate, one_line
from .reference import Sample, sample_work

DEFAULT_REPEAT = 3
TRIAL_WORKERS = 4  # judge calls in flight at once
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class TrialSettings:
    """The flags of `validate --judges`."""

    repeat: int = DEFAULT_REPEAT
    judge_executor: str | None = None
    judge_model: str | None = None
    mock: bool = False

    @property
    def backend(self) -> str:
        return OFFLINE_EXECUTOR if self.mock else self.judge_executor or DEFAULT_EXECUTOR


@dataclass(frozen=True)
class SampleTrial:
    """One output's judgements, in repeat order."""

    results: tuple[JudgeResult, ...]

    @property
    def judged(self) -> list[JudgeResult]:
        return [r for r in self.results if r.error is None]

    @property
    def passes(self) -> int:
        return sum(r.passed for r in self.judged)

    @property
    def errors(self) -> list[str]:
        return [r.error for r in self.results if r.error is not None]

    @property
    def agreement(self) -> Agreement:
        return agreement([[(r.passed, r.score) for r in self.judged]])

    def to_dict(self) -> dict[str, Any]:
        judged = self.judged
        return {
            "judgements": len(self.results),
            "passed": self.passes,
            "errors": len(self.errors),
            "pass_rate": round(self.passes / len(judged), 4) if judged else None,
            "scores": [round(r.score, 4) for r in judged],
            "agreement": self.agreement.to_dict(),
            "error_messages": sorted(set(self.errors))[:3],
        }


@dataclass(frozen=True)
class TaskTrial:
    task: Task
    samples: dict[Sample, SampleTrial] = field(default_factory=dict)

    def flags(self) -> list[tuple[Severity, str]]:
        """What is wrong with this judge, most serious first."""
        found: list[tuple[Severity, str]] = []
        ref, empty = self.samples.get("reference"), self.samples.get("empty")
        if ref is not None and ref.passes < len(ref.judged):
            found.append(
                (
                    "error",
                    f"fails the task's reference in {len(ref.judged) - ref.passes} of "
                    f"{len(ref.judged)} judgements ({_scores(ref)})",
                )
            )
        if empty is not None and empty.passes:
            found.append(
                (
                    "warning",
                    f"passes on an empty output in {empty.passes} of "
                    f"{len(empty.judged)} judgements ({_scores(empty)})",
                )
            )
        for name, sample in (("the reference", ref), ("an empty output", empty)):
            if sample is not None and not sample.agreement.consistent:
                found.append(
                    (
                        "warning",
                        f"disagrees with itself on {name}: passed {sample.passes} "
                        f"of {len(sample.judged)} ({_scores(sample)})",
                    )
                )
            if sample is not None and sample.errors:
                found.append(
                    (
                        "warning",
                        f"cannot judge {name} in {len(sample.errors)} of "
                        f"{len(sample.results)} tries: {one_line(sample.errors[0], 160)}",
                    )
                )
        return found


def _scores(sample: SampleTrial) -> str:
    return "scores " + ", ".join(f"{r.score:.2f}" for r in sample.judged)


def trial_tasks(suite: Suite) -> list[Task]:
    """The tasks `--judges` tries: model-graded, not trigger tasks."""
    return [t for t in suite.tasks if not t.is_trigger_task and not is_deterministic(t.judge)]


def grading_context(suite_dir: Path, settings: TrialSettings) -> JudgeContext:
    """A judge context for the trial: the grader of the chosen backend and no judge cache,
    so that each repeat is a call of its own."""
    from ..executors.base import grader_names
    from ..judges.llm import build_grader

    backend = settings.backend
    if backend not in grader_names():
        raise UsageError(
            f"--judge-executor {backend!r}: not an executor that can grade; "
            f"valid: {', '.join(grader_names())}"
        )
    options: dict[str, Any] = {"evaluators_dirs": [], "project_dir": str(Path.cwd())}
    return JudgeContext(
        suite_dir=suite_dir,
        judge_model=settings.judge_model,
        backend_options=options,
        grader=build_grader(backend, options=options),
        cache=None,
    )


def try_suite(suite: Suite, settings: TrialSettings) -> list[TaskTrial]:
    """Every model-graded judge of `suite` on its reference and the empty output, `repeat`
    times each, TRIAL_WORKERS calls at once."""
    from concurrent.futures import ThreadPoolExecutor

    tasks = trial_tasks(suite)
    if not tasks:
        return []
    ctx = grading_context(suite.directory, settings)
    judges = {t.id: build_judge(t.judge) for t in tasks}
    jobs = [
        (task, sample)
        for task in tasks
        for sample in (("reference", "empty") if task.reference is not None else ("empty",))
        for _ in range(settings.repeat)
    ]

    def judge_one(job: tuple[Task, Sample]) -> JudgeResult:
        task, sample = job
        with sample_work(task, suite.directory, sample) as work:
            return run_judge(judges[task.id], task, work, ctx)

    with ThreadPoolExecutor(max_workers=TRIAL_WORKERS) as pool:
        results = list(pool.map(judge_one, jobs))
    trials = []
    for task in tasks:
        samples: dict[Sample, SampleTrial] = {}
        for sample in ("reference", "empty"):
            mine = tuple(
                r for (t, s), r in zip(jobs, results, strict=True) if t is task and s == sample
            )
            if mine:
                samples[sample] = SampleTrial(mine)
        trials.append(TaskTrial(task, samples))
    return trials


@dataclass
class TrialOutcome:
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    reports: list[tuple[Path, Path, str]] = field(default_factory=list)  # JSON, text, text


def try_judges(
    suites: Sequence[tuple[Suite, str]],
    settings: TrialSettings,
    report_path: str | os.PathLike[str] | None = None,
) -> TrialOutcome:
    """`validate --judges` over valid suites (each with the path as the user gave it): try
    their model-graded judges, write each suite's report (at `report_path`, one suite only;
    by default beside the suite) and return the flags as located problems."""
    from .judge_report import report_data, report_text, write_report

    if report_path is not None and len(suites) > 1:
        raise UsageError("--judges-report names one report: give one suite with it")
    outcome = TrialOutcome()
    for suite, shown in suites:
        trials = try_suite(suite, settings)
        flagged = [(t.task, severity, message) for t in trials for severity, message in t.flags()]
        problems = locate(suite.path, shown, [(task, "judge", m) for task, _, m in flagged])
        for (_, severity, _), problem in zip(flagged, problems, strict=True):
            (outcome.errors if severity == "error" else outcome.warnings).append(problem)
        data = report_data(suite, trials, settings)
        json_path, text_path = write_report(data, suite, report_path)
        outcome.reports.append((json_path, text_path, report_text(data)))
    return outcome


__all__ = [
    "SampleTrial",
    "TaskTrial",
    "TrialOutcome",
    "TrialSettings",
    "grading_context",
    "trial_tasks",
    "try_judges",
    "try_suite",
]
