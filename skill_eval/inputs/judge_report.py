"""The report of `validate --judges`, to keep beside the suite: `judge-check.json` (the figures)
and `judge-check.txt` (the same, to read), by default in the suite's folder.

    {"kind": "skill-eval judge check", "version": 1, "suite": ..., "suite_sha256": ...,
     "created_at": ..., "judge_executor": "anthropic", "judge_model": ..., "repeat": 3,
     "max_score_spread": 0.3, "deterministic_tasks": 4, "flagged_tasks": ["t2"],
     "tasks": [{"task_id": "t2", "judge": "llm-rubric",
                "reference": {"judgements": 3, "passed": 2, "errors": 0, "pass_rate": 0.6667,
                              "scores": [0.9, 0.1, 0.9], "agreement": {...}, ...},
                "empty": {...}, "flags": [{"severity": "warning", "message": "..."}]}]}
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.model import Suite
from ..core.paths import atomic_write_text
from ..executors.base import OFFLINE_EXECUTOR
from ..stats.agreement import MAX_SCORE_SPREAD

if TYPE_CHECKING:
    from .judge_trial import TaskTrial, TrialSettings

REPORT_NAME = "judge-check.json"
KIND = "skill-eval judge check"


def report_data(suite: Suite, trials: list[TaskTrial], settings: TrialSettings) -> dict[str, Any]:
    from ..judges.base import JudgeContext
    from ..judges.llm import judge_model

    model = judge_model(JudgeContext(suite_dir=suite.directory, judge_model=settings.judge_model))
    tasks = [
        {
            "task_id": t.task.id,
            "judge": str(t.task.judge.get("type")),
            "reference": t.samples["reference"].to_dict() if "reference" in t.samples else None,
            "empty": t.samples["empty"].to_dict() if "empty" in t.samples else None,
            "flags": [{"severity": s, "message": m} for s, m in t.flags()],
        }
        for t in trials
    ]
    return {
        "kind": KIND,
        "version": 1,
        "suite": str(suite.path),
        "suite_sha256": suite.sha256,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "judge_executor": settings.backend,
        "judge_model": OFFLINE_EXECUTOR if settings.mock else model,
        "repeat": settings.repeat,
        "max_score_spread": MAX_SCORE_SPREAD,
        "deterministic_tasks": sum(not t.is_trigger_task for t in suite.tasks) - len(trials),
        "flagged_tasks": [t["task_id"] for t in tasks if t["flags"]],
        "tasks": tasks,
    }


def _percent(value: Any) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def report_text(data: dict[str, Any]) -> str:
    """The report as a table and a list of flags, to read."""
    lines = [
        f"Judge check of {data['suite']}",
        f"{data['created_at']}: judge model {data['judge_model']} via {data['judge_executor']}, "
        f"{data['repeat']} judgement(s) of each output, no judge cache",
        "",
    ]
    rows = [("task", "judge", "output", "passed", "agreement", "scores")]
    for task in data["tasks"]:
        for sample in ("reference", "empty"):
            figures = task[sample]
            if figures is None:
                continue
            judged = figures["judgements"] - figures["errors"]
            errors = f", {figures['errors']} error(s)" if figures["errors"] else ""
            rows.append(
                (
                    task["task_id"],
                    task["judge"],
                    sample,
                    f"{figures['passed']} of {judged}{errors}",
                    _percent(figures["agreement"]["agreement"]),
                    " ".join(f"{s:.2f}" for s in figures["scores"]),
                )
            )
    if len(rows) == 1:
        lines.append("No model-graded judge in this suite: nothing to try.")
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
        ]
    flagged = [(t["task_id"], f) for t in data["tasks"] for f in t["flags"]]
    lines.append("")
    lines += [f"{f['severity']}: {task_id}: {f['message']}" for task_id, f in flagged] or [
        "No judge flagged."
    ]
    if data["deterministic_tasks"]:
        lines.append(
            f"{data['deterministic_tasks']} task(s) with deterministic judges: checked on their "
            "references and an empty output by `validate` itself, without a model."
        )
    return "\n".join(lines) + "\n"


def write_report(
    data: dict[str, Any], suite: Suite, path: str | os.PathLike[str] | None = None
) -> tuple[Path, Path]:
    """Write the JSON at `path` (default: judge-check.json beside the suite) and the text
    beside it with the suffix .txt; returns both paths."""
    target = Path(path) if path is not None else suite.directory / REPORT_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    text = target.with_suffix(".txt")
    if text == target:
        text = target.with_name(target.name + ".txt")
    atomic_write_text(text, report_text(data))
    return target, text


__all__ = ["KIND", "REPORT_NAME", "report_data", "report_text", "write_report"]
