"""`skill-eval export-benchmark`: an evaluation artifact as skill-creator's benchmark.json, so
its viewer (eval-viewer/generate_review.py --benchmark) shows our results.

Every attempt is a run: the candidate arm is `with_skill`, the baseline arm `without_skill`
(the two configuration names the viewer groups by; a baseline that is another skill version
is said in `notes`). A run's `pass_rate` is the share of expectations that passed for an
`expectations` judge (its per-statement grading is the run's `expectations`), else 1 or 0 by
the judge. An attempt that ended in error (timeout, overload, crash) is listed with
`errors: 1`, but left out of `run_summary`: an error is not the skill's failure. run_summary
is computed as skill-creator's aggregate_benchmark.py does (mean, sample stddev, min, max;
delta = with_skill - without_skill as signed strings).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.paths import atomic_write_text
from ..errors import UsageError
from .files import writing

WITH, WITHOUT = "with_skill", "without_skill"
_EVAL_N = re.compile(r"^eval-(\d+)$")


@dataclass(frozen=True)
class BenchmarkResult:
    path: Path
    runs: int
    configurations: list[str] = field(default_factory=list)


def stats(values: Sequence[float]) -> dict[str, float]:
    """mean, sample standard deviation, min and max, rounded to 4 places (zeros when
    there are no values), as skill-creator's aggregate_benchmark.calculate_stats."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
    return {
        "mean": round(mean, 4),
        "stddev": round(math.sqrt(var), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def eval_numbers(
    task_ids: Sequence[str], imported: Mapping[str, int] | None = None
) -> dict[str, int]:
    """The numeric eval_id the viewer sorts by: the id an imported eval had
    (`source.eval_id`), else N of `eval-N`, else the next free number."""
    out: dict[str, int] = {}
    used: set[int] = set()
    for task_id in task_ids:
        number = (imported or {}).get(task_id)
        if number is not None and number not in used:
            out[task_id] = number
            used.add(number)
    for task_id in task_ids:
        if task_id in out:
            continue
        match = _EVAL_N.match(task_id)
        if match and int(match.group(1)) not in used:
            out[task_id] = int(match.group(1))
            used.add(out[task_id])
    number = max(used, default=0)
    for task_id in task_ids:
        if task_id not in out:
            number += 1
            out[task_id] = number
    return out


def _run(task_id: str, eval_id: int, config: str, attempt: Mapping[str, Any]) -> dict[str, Any]:
    judge = attempt.get("judge") or {}
    data = judge.get("data") or {}
    graded = data.get("expectations") if isinstance(data, Mapping) else None
    error = attempt.get("status") == "error"
    if isinstance(graded, list) and graded and not error:
        expectations = [
            {
                "text": str(g.get("text", "")),
                "passed": bool(g.get("passed")),
                "evidence": str(g.get("evidence") or ""),
            }
            for g in graded
        ]
    elif error:
        expectations = []
    else:
        expectations = [
            {
                "text": f"{task_id}: the task's judge passes",
                "passed": attempt.get("status") == "passed",
                "evidence": str(judge.get("details") or "")[:500],
            }
        ]
    passed = sum(bool(e["passed"]) for e in expectations)
    total = len(expectations)
    usage = attempt.get("usage") or {}
    notes = [f"error: {attempt.get('error')}"] if error else []
    return {
        "eval_id": eval_id,
        "eval_name": task_id,
        "configuration": config,
        "run_number": int(attempt.get("index", 0)) + 1,
        "result": {
            "pass_rate": round(passed / total, 4) if total else 0.0,
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "time_seconds": round(int(attempt.get("duration_ms") or 0) / 1000, 3),
            "tokens": int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0),
            "tool_calls": len(attempt.get("transcript") or ()),
            "errors": 1 if error else 0,
        },
        "expectations": expectations,
        "notes": notes,
    }


def _summary(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counted = [r["result"] for r in runs if not r["result"]["errors"]]
    return {
        "pass_rate": stats([r["pass_rate"] for r in counted]),
        "time_seconds": stats([r["time_seconds"] for r in counted]),
        "tokens": stats([r["tokens"] for r in counted]),
    }


def suite_tasks(artifact: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The artifact's suite tasks by id, read from the suite file when it is still there
    (prompts, trigger tasks); empty when it cannot be read."""
    from ..core.safeyaml import YamlError, load_yaml_file

    try:
        _, data, _ = load_yaml_file(str(artifact.get("task_suite") or ""))
        return {str(t["id"]): t for t in data["tasks"] if isinstance(t, Mapping)}
    except (OSError, YamlError, KeyError, TypeError):
        return {}


def trigger_ids(artifact: Mapping[str, Any]) -> set[str]:
    """The ids of trigger tasks: from the artifact's triggers section (always there when they
    ran), and from the suite file when it can still be read."""
    from ..report.triggers import task_ids

    return task_ids(artifact) | {
        i for i, t in suite_tasks(artifact).items() if "should_trigger" in t
    }


def imported_ids(artifact: Mapping[str, Any]) -> dict[str, int]:
    """Task id -> the skill-creator eval id it was imported from (`source.eval_id`)."""
    out = {}
    for task_id, task in suite_tasks(artifact).items():
        source = task.get("source")
        number = source.get("eval_id") if isinstance(source, Mapping) else None
        if isinstance(number, int) and not isinstance(number, bool):
            out[task_id] = number
    return out


def run_attempts(artifact: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(configuration, task id, attempt) of every run, in benchmark.json's order. Trigger
    tasks are left out: benchmark.json has no place for trigger runs."""
    arms = (artifact.get("manifest") or {}).get("arms") or {}
    results = {
        WITH: artifact.get("candidate_results") or [],
        WITHOUT: artifact.get("baseline_results") or [],
    }
    if not arms.get("baseline") or not results[WITHOUT]:
        del results[WITHOUT]
    triggers = trigger_ids(artifact)
    return [
        (config, str(r["task_id"]), attempt)
        for config, rs in results.items()
        for r in rs
        if r["task_id"] not in triggers
        for attempt in r.get("attempts") or ()
    ]


def benchmark_document(artifact: Mapping[str, Any]) -> dict[str, Any]:
    """benchmark.json (skill-creator references/schemas.md) from an artifact's data."""
    manifest = artifact.get("manifest") or {}
    arms = manifest.get("arms") or {}
    candidate = arms.get("candidate") or {}
    baseline: Mapping[str, Any] = arms.get("baseline") or {}
    attempts = run_attempts(artifact)
    configs = list(dict.fromkeys(config for config, _, _ in attempts)) or [WITH]
    numbers = eval_numbers(
        list(dict.fromkeys(task_id for _, task_id, _ in attempts)), imported_ids(artifact)
    )
    runs = [
        _run(task_id, numbers[task_id], config, attempt) for config, task_id, attempt in attempts
    ]
    summary: dict[str, Any] = {
        c: _summary([r for r in runs if r["configuration"] == c]) for c in configs
    }
    notes: list[str] = []
    if WITHOUT in summary:
        a, b = summary[WITH], summary[WITHOUT]
        summary["delta"] = {
            "pass_rate": f"{a['pass_rate']['mean'] - b['pass_rate']['mean']:+.2f}",
            "time_seconds": f"{a['time_seconds']['mean'] - b['time_seconds']['mean']:+.1f}",
            "tokens": f"{a['tokens']['mean'] - b['tokens']['mean']:+.0f}",
        }
        if baseline.get("skill_name"):  # another version of the skill, not no skill at all
            notes.append(
                f"without_skill is the baseline arm {baseline.get('label') or ''} "
                f"({baseline.get('kind') or 'skill'} {baseline['skill_name']}), "
                "not the absence of a skill"
            )
    elif not baseline:
        notes.append("the evaluation had no baseline arm: only with_skill runs")
    if trigger_ids(artifact):
        notes.append(
            "trigger tasks are left out: their figures are in the artifact's triggers section"
        )
    errors = sum(r["result"]["errors"] for r in runs)
    if errors:
        notes.append(
            f"{errors} run(s) ended in error (timeout, service or harness failure): "
            "listed with errors=1, left out of run_summary"
        )
    evaluation = artifact.get("evaluation") or {}
    rates = (evaluation.get("execution_pass_rate"), evaluation.get("baseline_pass_rate"))
    notes.append(
        f"skill-eval verdict: {evaluation.get('verdict')} (task pass rate "
        f"{rates[0]} vs {rates[1]}, delta {evaluation.get('delta')}; "
        f"pass@{artifact.get('pass_k')})"
    )
    return {
        "metadata": {
            "skill_name": candidate.get("skill_name") or artifact.get("task_suite_skill_id") or "",
            "skill_path": candidate.get("skill_directory") or "",
            "executor_model": str(
                manifest.get("model") or (manifest.get("executor") or {}).get("kind") or ""
            ),
            "analyzer_model": "none (skill-eval: statistics, no analyzer model)",
            "timestamp": str(manifest.get("finished_at") or artifact.get("created_at") or ""),
            "evals_run": sorted(numbers.values()),
            "runs_per_configuration": int(manifest.get("samples") or 1),
        },
        "runs": runs,
        "run_summary": summary,
        "notes": notes,
    }


def export_benchmark(
    artifact_path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    workspace: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> BenchmarkResult:
    """Read the artifact (checked against its schema) and write benchmark.json at `output`,
    and with `workspace` a viewer workspace of run folders (viewer_workspace.py). Existing
    outputs are refused unless `force`."""
    from ..engine.artifact import read  # jsonschema and the artifact schema only when used
    from .viewer_workspace import prepare, write_workspace

    out = Path(output)
    if os.path.lexists(out) and not force:
        raise UsageError(f"{out}: already exists (use --force to overwrite)", path=str(out))
    data = read(Path(artifact_path))
    document = benchmark_document(data)
    with writing():
        if workspace is not None:
            prepare(Path(workspace), force)  # refused before anything is written
        atomic_write_text(out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        if workspace is not None:
            prompts = {i: str(t.get("prompt") or "") for i, t in suite_tasks(data).items()}
            run_dir = (data.get("manifest") or {}).get("run_dir")
            write_workspace(
                Path(workspace),
                document["runs"],
                [attempt for _, _, attempt in run_attempts(data)],
                prompts,
                force=force,
                run_dir=Path(run_dir) if run_dir else None,
            )
    return BenchmarkResult(
        out, len(document["runs"]), [k for k in document["run_summary"] if k != "delta"]
    )
