"""The QA report: per checklist item the task(s) that check it, the outcome and the evidence;
then the tasks that do not discriminate and the flaky ones. Objective: what happened, not
what it means (that is the visionary's job).

Tasks are tied to checklist items by the builder's `x-checks: [C1, ...]` task metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from .plan import PlanItem
from .qa import QAResult, TaskQA


def task_links(suite_path: Path) -> dict[str, dict[str, Any]]:
    """task id -> {checks, builder_task, description} from the suite's x- metadata."""
    data = yaml.safe_load(suite_path.read_text(encoding="utf-8")) or {}
    links: dict[str, dict[str, Any]] = {}
    for task in data.get("tasks") or []:
        if not isinstance(task, Mapping):
            continue
        checks = task.get("x-checks") or []
        checks = [checks] if isinstance(checks, str) else checks
        links[str(task.get("id"))] = {
            "checks": [str(c).strip().upper() for c in checks if isinstance(c, str | int)],
            "builder_task": str(task.get("x-builder-task") or ""),
            "description": str(task.get("description") or ""),
        }
    return links


def _arm(passes: int, samples: int, passed: bool) -> str:
    return f"{'passed' if passed else 'failed'} ({passes}/{samples})"


def _task_line(t: TaskQA, link: Mapping[str, Any]) -> str:
    tag = f" [{link['builder_task']}]" if link.get("builder_task") else ""
    verdict = "discriminates" if t.discriminating else "does not discriminate"
    if t.baseline_passed and not t.candidate_passed:
        verdict = "REGRESSION: only the baseline passes"
    flaky = "; flaky" if t.flaky else ""
    with_skill = _arm(t.candidate_passes, t.samples, t.candidate_passed)
    return (
        f"- `{t.task_id}`{tag}: with skill {with_skill}, "
        f"without {_arm(t.baseline_passes, t.samples, t.baseline_passed)}: {verdict}{flaky}. "
        f"Evidence: {t.evidence}"
    )


def build_qa_report(
    checklist: Sequence[PlanItem],
    links: Mapping[str, Mapping[str, Any]],
    result: QAResult,
    samples: int,
) -> tuple[str, dict[str, Any]]:
    """(Markdown, JSON) of the report. An item's outcome is PASS when every task tied to it
    passes with the skill, FAIL when one does not, NOT COVERED when no task is tied to it."""
    by_id = {t.task_id: t for t in result.tasks}

    def rate(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.0%}"

    lines = [
        "# QA report",
        "",
        f"Candidate (the skill) {rate(result.candidate_rate)} vs no-skill baseline "
        f"{rate(result.baseline_rate)} over {len(result.tasks)} task(s), {samples} "
        f"sample(s) each; delta {result.delta if result.delta is not None else 'n/a'}; "
        f"skill-eval verdict `{result.verdict}`.",
        f"Discriminating tasks: {len(result.tasks) - len(result.non_discriminating)} of "
        f"{len(result.tasks)}. Flaky: {len(result.flaky)}. "
        f"Regressions: {len(result.regressed)}.",
        "",
        "## Checklist",
    ]
    items: list[dict[str, Any]] = []
    tied: set[str] = set()
    for item in checklist:
        ids = [
            tid for tid, link in links.items() if item.id in link.get("checks", []) and tid in by_id
        ]
        tied.update(ids)
        outcome = (
            "NOT COVERED"
            if not ids
            else "PASS"
            if all(by_id[t].candidate_passed for t in ids)
            else "FAIL"
        )
        lines += ["", f"### [{item.id}] ({item.tag}) {item.text}", f"Outcome: **{outcome}**"]
        lines += [_task_line(by_id[t], links[t]) for t in ids] or ["- no task checks this item"]
        items.append(
            {
                "id": item.id,
                "criterion": item.tag,
                "text": item.text,
                "outcome": outcome,
                "tasks": ids,
            }
        )
    untied = [t for t in by_id if t not in tied]
    if untied:
        lines += ["", "## Tasks tied to no checklist item"]
        lines += [_task_line(by_id[t], links.get(t, {})) for t in untied]
    lines += ["", "## Non-discriminating tasks (both arms pass or both fail)"]
    lines += [f"- `{t}`" for t in result.non_discriminating] or ["- none"]
    lines += ["", "## Flaky tasks (passed in some samples only)"]
    lines += [f"- `{t}`" for t in result.flaky] or ["- none"]
    data = {"checklist": items, "untied_tasks": untied, "samples": samples, **result.to_dict()}
    return "\n".join(lines) + "\n", data
