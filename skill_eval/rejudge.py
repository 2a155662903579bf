"""`rejudge`: judge a finished run's outputs again with the suite's current judges, without
executing anything, and write a new artifact. The original journal is left as it was; the new
judgements go to `rejudged-<time>.jsonl` beside it."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import artifact as artifact_mod
from .arms import arms_from_dict
from .errors import UsageError
from .evaluate import EvaluationOutcome, close_judge_cache, finish_evaluation, judge_context
from .judges.base import build_judge, run_judge
from .model import Attempt, status_of
from .options import RunOptions
from .paths import safe_component
from .rundir import RUN_META
from .runner import JOURNAL_NAME, Journal, now_iso
from .suite import load_suite


def rejudge(run_dir: str | Path, *, output: str | None = None, **judge_options: Any) \
        -> EvaluationOutcome:
    """Re-judge every executed attempt of `run_dir`. `judge_options` override the run's own
    judge settings (judge_executor, judge_model, judge_cache_dir, no_judge_cache,
    evaluators_dirs)."""
    run_path = Path(run_dir).resolve()
    try:
        meta = json.loads((run_path / RUN_META).read_text(encoding="utf-8"))
        stored = meta["options"]
        arms = arms_from_dict(meta["arms"])
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(f"{run_path}: not a run directory made by this version of skill-eval "
                         f"(no usable {RUN_META})") from None
    stored["allowed_tools"] = tuple(stored.get("allowed_tools") or ())
    stored["evaluators_dirs"] = tuple(stored.get("evaluators_dirs") or ())
    opts = replace(RunOptions(**stored), resume=None,
                   **{k: v for k, v in judge_options.items() if v not in (None, ())})
    started_at = datetime.now(UTC)
    suite = load_suite(opts.task_suite)
    tasks = {t.id: t for t in suite.tasks}
    judges = {t.id: build_judge(t.judge) for t in suite.tasks}
    state_root = Path(opts.state_root).resolve()
    ctx = judge_context(opts, suite.directory, opts.executor_name, state_root)
    stamp = started_at.strftime("%Y%m%dT%H%M%SZ")
    journal = Journal(run_path / f"rejudged-{stamp}.jsonl")
    attempts: list[Attempt] = []
    for old in Journal(run_path / JOURNAL_NAME).read():
        task = tasks.get(old.task_id)
        if task is None:
            continue  # the task left the suite
        if old.status == "error" and old.judge is None:
            attempts.append(old)  # it never produced an output to judge
            continue
        judgement = run_judge(judges[task.id], task, old.output, ctx)
        error = f"judge error: {judgement.error}" if judgement.error else None
        new = replace(old, judge=judgement, error=error,
                      status="error" if error else status_of(judgement), finished_at=now_iso())
        journal.append(new)
        attempts.append(new)
    journal.close()
    target = Path(output) if output else artifact_mod.default_path(
        state_root, arms.run_id, f"{arms.candidate_id}-rejudged-{safe_component(stamp)}")
    extras: dict[str, Any] = {"rejudged": {"run_dir": str(run_path), "journal": str(journal.path),
                                           "at": started_at.isoformat()}}
    extras.update(close_judge_cache(ctx))
    return finish_evaluation(opts, suite, arms, state_root, run_path, attempts, None, started_at,
                             {"kind": opts.executor_name, "rejudged": True},
                             log=lambda m: None, extras=extras, output=target)
