"""The ranking artifact of an improve run: every version as a candidate with its SKILL.md inline,
in the existing ranking schema, so `skill-eval run --input` can evaluate any of them.

`score` is the version's holdout pass rate (0-1; its train pass rate when there was no holdout).
Note: pipeline mode skips candidates whose score is below `--eval-threshold` (default 1.0), so
evaluate these candidates with `--eval-threshold 0`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from functools import cache
from typing import Any

from ..core.paths import SCHEMAS_DIR
from ..core.validation import schema_problems
from .improver import SKILL_FILE
from .loop import ImproveResult
from .memory import CycleRecord
from .versions import VersionResult

RANKING_SCHEMA = SCHEMAS_DIR / "ranking.schema.json"


def candidate_id(v: VersionResult) -> str:
    return f"v{v.iteration}-{v.hash[:12]}"


def _candidate(v: VersionResult, result: ImproveResult) -> dict[str, Any]:
    score = v.train_score if v.holdout_score is None else v.holdout_score
    return {
        "id": candidate_id(v),
        "score": score,
        "skill_content": v.files.get(SKILL_FILE, ""),
        # Extra keys (the schema allows them): where the number comes from, and lineage.
        "score_source": "train" if v.holdout_score is None else "holdout",
        "holdout_pass_rate": v.holdout_score,
        "train_pass_rate": v.train_score,
        "iteration": v.iteration,
        "skill_sha256": v.hash,
        "parent_sha256": v.parent,
        "files": sorted(v.files),
        "rejected": v.rejected,
        "best": v.hash == result.best.hash,
        "proposed": result.proposed and v.hash == result.best.hash,
    }


def build_ranking_artifact(
    result: ImproveResult,
    *,
    run_id: str,
    target_path: str | None = None,
    skill_name: str | None = None,
    lane: str | None = "improve",
    cycles: Sequence[CycleRecord] = (),
) -> dict[str, Any]:
    """The artifact, best candidate first, validated against the shipped ranking schema.

    Only SKILL.md travels inline (`skill_content`); a version that changed other files of the
    folder lists them in `files` and needs its kept folder to be evaluated in full.
    """
    order = sorted(result.versions, key=lambda v: (v.hash != result.best.hash, v.iteration))
    artifact: dict[str, Any] = {"run_id": run_id, "lane": lane}
    if target_path is not None:
        artifact["target"] = {"path": target_path, "name": skill_name}
    artifact["scored_candidates"] = [_candidate(v, result) for v in order]
    artifact["improve"] = {
        "decision": result.decision,
        "reason": result.reason,
        "proposed": result.proposed,
        "gate": result.gate_reason,
        "train_tasks": list(result.split.train),
        "holdout_tasks": list(result.split.holdout),
        "confirm_tasks": list(result.split.confirm),
        # Train tasks feed the improver, holdout tasks pick the best version; the pick is then
        # confirmed on the tasks set apart (confirm_tasks; the holdout when it had one task),
        # over the family it was picked from.
        "confirmation": {
            "split": "confirm"
            if set(result.split.confirm) - set(result.split.holdout)
            else "holdout",
            "samples": "fresh",
            "versions_compared": result.family,
            "method": result.confirmation,
            "passed": result.proposed,
            "reason": result.gate_reason,
        },
        "tokens": result.tokens,
        "cost_usd": result.cost_usd,
        # every decision of the loop, for the HTML report's iteration table
        "iterations": [{k: v for k, v in asdict(c).items() if k != "run"} for c in cycles],
    }
    validate_ranking(artifact)
    return artifact


@cache
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(RANKING_SCHEMA.read_text(encoding="utf-8"))
    return schema


def validate_ranking(artifact: Any) -> None:
    """ValueError naming every schema problem (field: message) when `artifact` does not fit."""
    problems = schema_problems(artifact, _schema())
    if problems:
        raise ValueError("; ".join(f"{p.field or 'ranking'}: {p.message}" for p in problems))
