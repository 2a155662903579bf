"""The open step of a run: its fingerprint, its run directory (new, or reopened by --resume
and locked), the judges' context and cache, the journal with the attempts it already holds,
and the progress display. `OpenRun` closes them all again (a context manager)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from ..core.blobs import cut_ingredient
from ..core.model import Attempt
from ..core.paths import safe_component
from ..inputs.arms import Arms, arms_to_dict
from ..inputs.evalsets.record import write_record
from ..judges.base import JudgeContext
from ..judges.llm import judge_model
from ..skills.context import CONTEXT_TEMPLATE_VERSION
from ..stats.adaptive import arm_totals
from .fingerprint import ArmSkill, ingredients
from .fingerprint import Inputs as Ingredients
from .fingerprint import fingerprint as fingerprint_of
from .journal_key import journal_key
from .judging import evaluator_dirs, judge_backend_name, judge_context
from .prepare import Prepared
from .progress import Progress
from .rundir import RunDir, open_run_dir
from .runner import JOURNAL_NAME, Journal

Log = Callable[[str], None]


@dataclass
class OpenRun:
    """An opened run: its locked directory, the arms (with the run's id), the judges'
    context, the journal and the attempts it already holds (`done`, a resume's: reused
    baselines are added to it), and the progress display (None with --quiet)."""

    run: RunDir
    arms: Arms
    judge_context: JudgeContext
    journal: Journal
    done: list[Attempt]
    progress: Progress | None

    @property
    def path(self) -> Path:
        return self.run.path

    def close(self) -> None:
        """Stop the display, close the journal and let go of the directory's lock (another
        --resume may then continue the run)."""
        if self.progress is not None:
            self.progress.close()
        self.journal.close()
        self.run.release()

    def __enter__(self) -> OpenRun:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def run_ingredients(prepared: Prepared) -> dict[str, str]:
    """What the run's results depend on, by name (engine/fingerprint.py): a --resume
    continues only a run with the same."""
    plan, suite, arms = prepared.plan, prepared.suite, prepared.arms
    shard = prepared.shard
    return ingredients(
        suite,
        Ingredients(
            skills={
                arm.name: ArmSkill(arm.skill_sha256, arm.skill.directory if arm.skill else None)
                for arm in arms.every
            },
            executor=prepared.describe,
            skill_mode=plan.executor.skill_mode,
            decision=plan.decision,
            judge_backend=judge_backend_name(plan),
            judge_model=judge_model(
                JudgeContext(
                    suite_dir=suite.directory,
                    judge_model=plan.judging.model,
                    default_model=plan.judging.default_model,
                )
            ),
            evaluator_dirs=evaluator_dirs(plan),
            # a shard resumes only itself; a non-default cut changes what judges see
            extra={
                **({"shard": shard.label} if shard else {}),
                **cut_ingredient(plan.execution.max_output_bytes),
                # a budget run resumes only with the same budget (its samples say nothing)
                **({"budget": str(plan.decision.budget)} if plan.decision.budget else {}),
                **(
                    {"context_template": CONTEXT_TEMPLATE_VERSION}
                    if plan.executor.skill_mode == "context"
                    else {}
                ),
                # --arm: each arm's delivery and executor, and the context file's wording
                **(
                    {
                        "arms": {
                            "reference": arms.baseline.name if arms.baseline else None,
                            "setup": dict(prepared.arm_describe),
                            "context_template": CONTEXT_TEMPLATE_VERSION,
                        }
                    }
                    if arms.listed
                    else {}
                ),
            },
            folders=bool(arms.listed),
        ),
    )


def _label(prepared: Prepared) -> str:
    """The run directory's name: the run id (and candidate id, and shard)."""
    arms, shard = prepared.arms, prepared.shard
    label = (
        safe_component(arms.run_id)
        if prepared.plan.inputs.standalone
        else f"{safe_component(arms.run_id)}--{safe_component(arms.candidate_id)}"
    )
    return label + (f"--shard-{shard.index}-of-{shard.count}" if shard else "")


def _manifest(prepared: Prepared) -> dict[str, Any]:
    """What run.json says of the run besides its fingerprint (`rejudge` and `merge` read it)."""
    return {
        "candidate_id": prepared.arms.candidate_id,
        "task_suite": str(prepared.suite.path),
        "created_at": prepared.started_at.isoformat(),
        "plan": prepared.plan.to_dict(),
        "executor": prepared.describe,  # for `merge`
        "arms": arms_to_dict(prepared.arms),
        **({"arm_executors": dict(prepared.arm_describe)} if prepared.arm_describe else {}),
    }


def open_run(prepared: Prepared, log: Log) -> OpenRun:
    """Open the run's directory (a new one, or the one --resume names or finds), and what a
    run writes to: see OpenRun."""
    plan = prepared.plan
    parts = run_ingredients(prepared)
    # signs the journal, kept out of every jail; a bad key file stops the run here
    key = journal_key(plan.records.journal_key, prepared.state_root)
    run = open_run_dir(
        prepared.state_root,
        label=_label(prepared),
        run_id=prepared.arms.run_id,
        fingerprint=fingerprint_of(parts),
        resume=plan.records.resume,
        info=_manifest(prepared),
        warn=lambda m: log(f"warning: {m}"),
        ingredients=parts,
    )
    write_record(prepared.suite, run.path)  # a suite read from eval sets: what ran
    if plan.records.resume == "" and not run.resumed:
        log("resume: no earlier run has these inputs; starting a new run")
    arms = replace(prepared.arms, run_id=run.run_id)
    ctx = judge_context(plan, prepared.suite.directory, prepared.state_root, run_dir=run.path)
    journal = Journal(run.path / JOURNAL_NAME, plan.records.max_preview_chars, key)
    done = journal.read() if run.resumed else []
    if run.resumed:
        kept = sum(a.status != "error" for a in done)
        log(f"resume: {kept} finished attempts kept from {run.path}")
    return OpenRun(run, arms, ctx, journal, done, _progress(prepared))


def _progress(prepared: Prepared) -> Progress | None:
    if not prepared.plan.records.progress:
        return None
    arms, shard = prepared.arms, prepared.shard
    tasks, budget = len(prepared.suite.tasks), prepared.plan.decision.budget
    pairs = tasks * prepared.plan.sample_count
    per_arm = sum(shard.owns(p) for p in range(pairs)) if shard else pairs
    totals = {a.name: per_arm for a in arms.every}
    if budget is not None:  # how --budget splits between the arms (stats/adaptive.py)
        totals = dict(arm_totals(budget, tasks))
    executor = next(iter(prepared.arm_executors.values()), prepared.executor)
    return Progress(totals, level=lambda: executor.concurrency_level)


__all__ = ["OpenRun", "open_run", "run_ingredients"]
