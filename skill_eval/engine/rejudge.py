"""`rejudge`: judge a finished run's outputs again with the suite's current judges, without
executing anything, and write a new artifact. The original journal is left as it was; the new
judgements go to `rejudged-<time>.jsonl` beside it. Agent tasks are judged on their kept
workspaces (`<run>/workspaces/`, see --keep-workspaces) and recorded transcripts."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.attempt_policy import AttemptPolicy
from ..core.model import Attempt
from ..core.paths import safe_component
from ..core.workspace import WORKSPACES_DIR, rehomed
from ..errors import UsageError
from ..inputs.arms import arms_from_dict
from ..inputs.suite import load_suite
from ..judges.base import build_judge
from ..plan.run_plan import RunPlan
from ..stats.agreement import run_agreement
from . import artifact as artifact_mod
from .finish import EvaluationOutcome, Finished, finish_evaluation
from .journal_key import run_dir_key
from .judging import close_judge_cache, judge_context
from .rundir import RUN_META, load_manifest
from .runner import JOURNAL_NAME, Journal, Runner, RunSettings, kept_workspace_dir


def with_kept_workspace(attempt: Attempt, run_path: Path) -> Attempt:
    """The attempt reading its files from its kept workspace under `run_path` (found there,
    so a run directory that was moved or copied still rejudges); as it was when none was
    kept (file judges then say the workspace was not kept)."""
    if attempt.files is None:
        return attempt
    kept = kept_workspace_dir(
        run_path / WORKSPACES_DIR, attempt.arm, attempt.task_id, attempt.index
    )
    return replace(attempt, files=rehomed(attempt.files, kept if kept.is_dir() else None))


def rejudge(
    run_dir: str | Path,
    *,
    output: str | None = None,
    log: Callable[[str], None] | None = None,
    **judge_options: Any,
) -> EvaluationOutcome:
    """Re-judge every executed attempt of `run_dir`. `judge_options` override the run's own
    judge settings (see `with_judging`: judge_executor, judge_model, judge_cache_dir,
    no_judge_cache, evaluators_dirs, max_preview_chars); `journal_key` is the key file the
    run's journal is checked with (default: its state root's journal.key). Attempts are
    judged by the runner's `judge_attempt`, on its pool, with its retries, on their whole
    outputs (read from the run's blobs)."""
    log = log or (lambda message: print(message, file=sys.stderr))
    run_path = Path(run_dir).resolve()
    explicit_key = judge_options.pop("journal_key", None)
    manifest = load_manifest(run_path, warn=lambda m: log(f"warning: {m}"))
    # From the command line, never from run.json: the journal and run.json sit side by side.
    key = run_dir_key(explicit_key, run_path)
    try:
        arms = arms_from_dict(dict(manifest.arms))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise UsageError(
            f"{run_path / RUN_META}: arms: not in the shape this version of skill-eval writes"
        ) from None
    plan = with_judging(manifest.plan, **judge_options)
    started_at = datetime.now(UTC)
    suite = load_suite(plan.inputs.task_suite)
    judges = {t.id: build_judge(t.judge) for t in suite.tasks}
    state_root = Path(plan.records.state_root).resolve()
    ctx = judge_context(plan, suite.directory, state_root)
    stamp = started_at.strftime("%Y%m%dT%H%M%SZ")
    journal = Journal(run_path / f"rejudged-{stamp}.jsonl", plan.records.max_preview_chars, key)
    runner = Runner(
        None,
        judges,
        ctx,
        journal,
        RunSettings(plan.execution.concurrency, AttemptPolicy(plan.execution.max_retries)),
    )
    try:
        recorded = [
            with_kept_workspace(a, run_path)
            for a in Journal(run_path / JOURNAL_NAME, key=key).read()
        ]
        attempts = runner.rejudge(recorded, {t.id: t for t in suite.tasks})
    finally:
        journal.close()
    target = (
        Path(output)
        if output
        else artifact_mod.default_path(
            state_root, arms.run_id, f"{arms.candidate_id}-rejudged-{safe_component(stamp)}"
        )
    )
    extras: dict[str, Any] = {
        "rejudged": {
            "run_dir": str(run_path),
            "journal": str(journal.path),
            "at": started_at.isoformat(),
        }
    }
    extras.update(close_judge_cache(ctx))
    # each output's first judgement (in the run) beside its new one (here): agreement
    measured = run_agreement([*recorded, *attempts], artifact_mod.model_graded(suite.tasks))
    if measured is not None:
        extras["judge_agreement"] = measured
    finished = Finished(
        attempts,
        started_at,
        {"kind": plan.executor.name, "rejudged": True},
        state_root,
        run_dir=run_path,
        extras=extras,
        output=target,
        arm_executors=manifest.arm_executors,
    )
    return finish_evaluation(plan, suite, arms, finished, log=lambda m: None)


def with_judging(
    plan: RunPlan,
    *,
    judge_executor: str | None = None,
    judge_model: str | None = None,
    judge_cache_dir: str | None = None,
    no_judge_cache: bool | None = None,
    evaluators_dirs: tuple[str, ...] = (),
    max_preview_chars: int | None = None,
) -> RunPlan:
    """The run's plan with rejudge's overrides of its judging (each None or empty: as in the
    run), and no --resume."""
    judging = plan.judging
    judging = replace(
        judging,
        executor=judge_executor or judging.executor,
        model=judge_model or judging.model,
        cache_dir=judge_cache_dir or judging.cache_dir,
        cache=judging.cache if no_judge_cache is None else not no_judge_cache,
        evaluators_dirs=tuple(evaluators_dirs) or judging.evaluators_dirs,
    )
    records = replace(
        plan.records,
        resume=None,
        max_preview_chars=max_preview_chars or plan.records.max_preview_chars,
    )
    return replace(plan, judging=judging, records=records)
