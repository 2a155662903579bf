"""`skill-eval merge`: join the run directories of every shard of a sharded run (`--shard
i/n`, engine/shards.py) into the one artifact the unsharded run would have written.

Shards are joined only when they are provably slices of one run: every shard once, all of
the same count, the same ingredients (engine/fingerprint.py: suite, fixtures, judges, skills,
executor, model, samples, ...) and the same deciding settings (policy, margins, thresholds),
each complete and holding only its own (task, sample) pairs, every journal record signed
with the journal key (engine/journal.py). Anything else is a one-line UsageError naming the
run directory (or the journal's file and line) and what differs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.model import Attempt
from ..errors import UsageError
from ..inputs.arms import arms_from_dict
from ..inputs.suite import load_suite
from ..plan.run_plan import RunPlan
from .fingerprint import canonical_sha256, changed
from .finish import EvaluationOutcome, Finished, finish_evaluation
from .journal import JOURNAL_NAME, Journal
from .journal_key import JournalKey, run_dir_key
from .rundir import RUN_META, RunManifest, load_manifest
from .shards import Shard

# What decides the verdict from the same attempts: shards must agree on it too (the plan's
# whole decision section, and the inputs that shape the comparison).
DECIDING_INPUTS = ("mode", "no_baseline", "candidate_id")


def deciding_settings(plan: RunPlan) -> dict[str, Any]:
    """The settings shards of one run must share, by name."""
    inputs = {name: getattr(plan.inputs, name) for name in DECIDING_INPUTS}
    return {**inputs, **asdict(plan.decision)}


@dataclass(frozen=True)
class ShardRun:
    path: Path
    manifest: RunManifest
    meta: Mapping[str, Any]
    shard: Shard

    @property
    def ingredients(self) -> dict[str, str]:
        found = self.meta.get("ingredients")
        return (
            {k: v for k, v in found.items() if k != "shard"} if isinstance(found, Mapping) else {}
        )


def read_shard(path: Path, warn: Callable[[str], None]) -> ShardRun:
    """One shard's run directory, or a UsageError saying why it is not one."""
    manifest = load_manifest(path, warn=warn)
    meta = json.loads((path / RUN_META).read_text(encoding="utf-8"))
    if manifest.plan.execution.shard is None:
        raise UsageError(f"{path}: not a shard (that run was not started with --shard)")
    try:
        shard = Shard.parse(manifest.plan.execution.shard)
    except UsageError as exc:
        raise UsageError(f"{path / RUN_META}: shard: {exc}") from None
    return ShardRun(path, manifest, meta, shard)


def check_shards(runs: Sequence[ShardRun]) -> None:
    """Every shard of one run, once each, all made with the same inputs and settings."""
    first = runs[0]
    seen: dict[int, ShardRun] = {}
    for run in runs:
        if run.shard.count != first.shard.count:
            raise UsageError(
                f"{run.path}: shard {run.shard.label}, but {first.path} is "
                f"shard {first.shard.label}: shards of different splits"
            )
        differ = changed(first.ingredients, run.ingredients)
        if differ or not run.ingredients:
            raise UsageError(
                f"{run.path}: not a shard of the same run as {first.path}: "
                f"{', '.join(differ) or 'no ingredients recorded'} differ"
            )
        mine, theirs = deciding_settings(run.manifest.plan), deciding_settings(first.manifest.plan)
        settings = [name for name in mine if mine[name] != theirs[name]]
        if settings:
            raise UsageError(
                f"{run.path}: run with other settings than {first.path}: "
                f"{', '.join(settings)} differ"
            )
        if run.shard.index in seen:
            raise UsageError(
                f"shard {run.shard.label} given twice: {seen[run.shard.index].path} and {run.path}"
            )
        seen[run.shard.index] = run
    missing = [f"{i}/{first.shard.count}" for i in range(1, first.shard.count + 1) if i not in seen]
    if missing:
        raise UsageError(
            f"missing shard(s) {', '.join(missing)}: give the run directory of every shard"
        )


def shard_attempts(
    run: ShardRun,
    tasks: Sequence[Any],
    arms: Sequence[str],
    samples: int,
    key: JournalKey | None = None,
) -> list[Attempt]:
    """The shard's journal, every record checked against `key` (a JournalError naming the
    file and line otherwise), holding exactly its own pairs, every one finished."""
    attempts = Journal(run.path / JOURNAL_NAME, key=key).read()
    for attempt in attempts:
        if (
            attempt.arm not in arms
            or attempt.index >= samples
            or not run.shard.owns_pair(tasks, attempt.task_id, attempt.index)
        ):
            raise UsageError(
                f"{run.path / JOURNAL_NAME}: attempt {attempt.arm}/"
                f"{attempt.task_id}/{attempt.index} is not part of shard "
                f"{run.shard.label} of this suite"
            )
    wanted = sum(run.shard.owns(p) for p in range(len(tasks) * samples)) * len(arms)
    if len(attempts) < wanted:
        raise UsageError(
            f"{run.path}: shard {run.shard.label} is unfinished ({len(attempts)} "
            f"of {wanted} attempts); finish it with `skill-eval run ... --resume "
            f"{run.path}` first"
        )
    return attempts


def merge(
    run_dirs: Sequence[str | Path],
    output: str | Path,
    log: Callable[[str], None] | None = None,
    journal_key: str | Path | None = None,
) -> EvaluationOutcome:
    """Join the shards' journals and write the artifact at `output`. Each shard's records are
    checked with the key file `journal_key` (shards made on other machines: the key they all
    ran with), else with the key of the state root each shard's directory lies in."""
    log = log or (lambda message: print(message, file=sys.stderr))
    if not run_dirs:
        raise UsageError("merge: give the run directory of every shard")
    runs = sorted(
        (read_shard(Path(d).resolve(), lambda m: log(f"warning: {m}")) for d in run_dirs),
        key=lambda r: r.shard.index,
    )
    check_shards(runs)
    first = runs[0]
    plan = first.manifest.plan
    plan = replace(
        plan,
        execution=replace(plan.execution, shard=None),
        records=replace(plan.records, resume=None, output=str(output)),
    )
    suite = load_suite(plan.inputs.task_suite)
    if canonical_sha256(suite.sha256) != first.ingredients.get("suite"):
        raise UsageError(
            f"{suite.path}: the suite changed since the shards ran; merge with the suite they ran"
        )
    try:
        arms = arms_from_dict(dict(first.manifest.arms))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise UsageError(
            f"{first.path / RUN_META}: arms: not in the shape this version of skill-eval writes"
        ) from None
    names = [a.name for a in arms.every]
    keys = [run_dir_key(journal_key, run.path) for run in runs]
    attempts = [
        a
        for run, key in zip(runs, keys, strict=True)
        for a in shard_attempts(run, suite.tasks, names, plan.sample_count, key)
    ]
    attempts = join_journals(attempts, Path(output), plan.records.max_preview_chars, keys[0])
    describe = first.meta.get("executor")
    if not isinstance(describe, dict):
        describe = {"kind": plan.executor.name}
    extras = {"merged": {"shards": [str(r.path) for r in runs], "count": first.shard.count}}
    finished = Finished(
        attempts,
        datetime.now(UTC),
        describe,
        first.path.parent.parent,
        run_dir=joined_dir(Path(output)),
        extras=extras,
        output=Path(output),
        arm_executors=first.manifest.arm_executors,
    )
    return finish_evaluation(plan, suite, arms, finished, log=log)


def joined_dir(output: Path) -> Path:
    """Where the merged run's journal and blobs live: beside the artifact, named after it."""
    return output.resolve().parent / f"{output.stem}.run"


def join_journals(
    attempts: Sequence[Attempt],
    output: Path,
    max_preview_chars: int,
    key: JournalKey | None = None,
) -> list[Attempt]:
    """The shards' attempts written into one journal beside the artifact, their stored
    outputs and transcripts copied into its blob store, so the merged artifact's blob paths
    resolve (show --full, reports) without the shards' run directories."""
    path = joined_dir(output) / JOURNAL_NAME
    path.unlink(missing_ok=True)  # a merge done again starts afresh
    journal = Journal(path, max_preview_chars, key)  # the shards' own setting and key
    try:
        return [journal.append(attempt) for attempt in attempts]
    finally:
        journal.close()
