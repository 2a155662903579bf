"""The QA stage's seam: skill-eval itself runs the draft suite, the skill against no skill.

`QAFn(suite_path, skill_path, samples) -> QAResult` is the one function the review calls; the
default (`default_qa_fn`) is `run_evaluation` in standalone mode, read back from its artifact.
With the mock executor it runs the draft's own mock_outputs.yaml, so CI scripts both arms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.spend import Meter, artifact_spend
from ..errors import BudgetExhausted
from ..executors.base import DEFAULT_EXECUTOR
from ..executors.catalog import has_option
from ..plan.executor_options import ExecutorTable
from .draft import MOCK_OUTPUTS_FILE


@dataclass(frozen=True)
class TaskQA:
    """One task's outcome in both arms (pass@1 over `samples` attempts each)."""

    task_id: str
    candidate_passed: bool
    baseline_passed: bool
    candidate_passes: int
    baseline_passes: int
    samples: int
    candidate_label: str = ""
    baseline_label: str = ""
    evidence: str = ""
    errors: int = 0

    @property
    def discriminating(self) -> bool:
        return self.candidate_passed != self.baseline_passed

    @property
    def flaky(self) -> bool:
        return "flaky" in (self.candidate_label, self.baseline_label)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "candidate_passed": self.candidate_passed,
            "baseline_passed": self.baseline_passed,
            "candidate_passes": self.candidate_passes,
            "baseline_passes": self.baseline_passes,
            "samples": self.samples,
            "candidate_label": self.candidate_label,
            "baseline_label": self.baseline_label,
            "discriminating": self.discriminating,
            "flaky": self.flaky,
            "evidence": self.evidence,
            "errors": self.errors,
        }


@dataclass(frozen=True)
class QAResult:
    tasks: tuple[TaskQA, ...]
    candidate_rate: float | None = None
    baseline_rate: float | None = None
    delta: float | None = None
    verdict: str = ""
    artifact: str | None = None

    @property
    def non_discriminating(self) -> list[str]:
        """Tasks both arms pass or both fail: they cannot show what the skill changes."""
        return [t.task_id for t in self.tasks if not t.discriminating]

    @property
    def flaky(self) -> list[str]:
        return [t.task_id for t in self.tasks if t.flaky]

    @property
    def regressed(self) -> list[str]:
        return [t.task_id for t in self.tasks if t.baseline_passed and not t.candidate_passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_rate": self.candidate_rate,
            "baseline_rate": self.baseline_rate,
            "delta": self.delta,
            "verdict": self.verdict,
            "artifact": self.artifact,
            "non_discriminating": self.non_discriminating,
            "flaky": self.flaky,
            "regressed": self.regressed,
            "tasks": [t.to_dict() for t in self.tasks],
        }


QAFn = Callable[[Path, Path, int], QAResult]


def _evidence(result: Mapping[str, Any]) -> str:
    """The judge's details of the first attempt that failed (else of the first attempt)."""
    attempts = result.get("attempts") or []
    failing = [a for a in attempts if a.get("status") != "passed"]
    chosen = (failing or attempts or [{}])[0]
    judge = chosen.get("judge") or {}
    text = judge.get("details") or chosen.get("error") or result.get("details") or ""
    return " ".join(str(text).split())[:300]


def qa_result_from_artifact(data: Mapping[str, Any], path: str | None = None) -> QAResult:
    """Per-task outcomes of both arms from an evaluation artifact."""
    base = {r["task_id"]: r for r in data.get("baseline_results") or []}
    tasks = []
    for cand in data.get("candidate_results") or []:
        other: Mapping[str, Any] = base.get(cand["task_id"], {})
        c_stats, b_stats = cand.get("stats") or {}, other.get("stats") or {}
        evidence = f"with skill: {_evidence(cand)}"
        if other:
            evidence += f" | without: {_evidence(other)}"
        tasks.append(
            TaskQA(
                task_id=str(cand["task_id"]),
                candidate_passed=bool(cand.get("passed")),
                baseline_passed=bool(other.get("passed")),
                candidate_passes=int(cand.get("passes") or 0),
                baseline_passes=int(other.get("passes") or 0),
                samples=int(c_stats.get("n") or 0),
                candidate_label=str(c_stats.get("label") or ""),
                baseline_label=str(b_stats.get("label") or ""),
                evidence=evidence,
                errors=int(cand.get("errors") or 0) + int(other.get("errors") or 0),
            )
        )
    ev = data.get("evaluation") or {}
    return QAResult(
        tuple(tasks),
        ev.get("execution_pass_rate"),
        ev.get("baseline_pass_rate"),
        ev.get("delta"),
        str(ev.get("verdict") or ""),
        path,
    )


def default_qa_fn(
    state_root: Path,
    *,
    executor: str = DEFAULT_EXECUTOR,
    model: str | None = None,
    claude_bin: str | None = None,
    skill_mode: str = "system",
    log: Callable[[str], None] | None = None,
    executor_options: Iterable[str] | Mapping[str, Any] = (),
    executor_tables: Sequence[ExecutorTable] = (),
    run_flags: Mapping[str, Any] | None = None,
    meter: Meter | None = None,
) -> QAFn:
    """QA through `run_evaluation(RunPlan.from_flags(standalone=True, ...))`: the draft suite
    with the skill and with no skill, artifacts under `<state_root>/evaluations/`. The
    executor is configured as for `run`: `executor_options` (`KEY=VALUE` strings or a mapping)
    over its config file table, and `run_flags` are more of run's flags by their Python names
    (execution, judging: `jail`, `concurrency`, `judge_model`, ...). The draft's scripted
    outputs go to an executor that takes scripted outputs, `claude_bin` to one that runs the
    claude CLI. With a `meter` (the review's --max-cost-usd, --max-tokens-total) each QA run
    may spend what the review has left, and what it spent is counted."""
    takes_outputs = has_option(executor, "mock_outputs")
    takes_claude = has_option(executor, "claude_bin")

    def qa(suite_path: Path, skill_path: Path, samples: int) -> QAResult:
        from ..engine.conductor import run_evaluation  # the runner loads only when QA runs
        from ..plan.run_plan import RunPlan

        scripted = suite_path.parent / MOCK_OUTPUTS_FILE
        plan = RunPlan.from_flags(
            **{**(run_flags or {}), **_left_for(meter)},
            task_suite=str(suite_path),
            state_root=str(state_root),
            standalone=True,
            skill_path=str(skill_path),
            samples=samples,
            executor=executor,
            mock_outputs=str(scripted) if takes_outputs and scripted.is_file() else None,
            model=model,
            claude_bin=claude_bin if takes_claude else None,
            skill_mode=skill_mode,
            progress=False,
            executor_options=executor_options,
            executor_tables=executor_tables,
        )
        outcome = run_evaluation(plan, log=log or (lambda message: None))
        if meter is not None:
            meter.charge(*artifact_spend(outcome.artifact))
        return qa_result_from_artifact(outcome.artifact, str(outcome.path))

    return qa


def _left_for(meter: Meter | None) -> dict[str, Any]:
    """The caps one QA run gets: what the review has left of its own (none: no cap); a
    review with nothing left stops before the run."""
    if meter is None:
        return {}
    if meter.reached is not None:
        raise BudgetExhausted(f"budget exhausted, review stopped: {meter.reached}")
    left: dict[str, Any] = {}
    if meter.max_cost_usd is not None:
        left["max_cost_usd"] = meter.max_cost_usd - meter.cost_usd
    if meter.max_tokens is not None:
        left["max_tokens_total"] = meter.max_tokens - meter.tokens
    return left
