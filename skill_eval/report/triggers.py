"""The artifact's `triggers` section as the reports show it: per arm TPR, FPR and accuracy with
their intervals, the paired differences with the policy's decision, and the queries an arm got
wrong (each named). Read defensively: artifacts without the section show nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..judges.triggers.figures import failures

FIGURES = (("tpr", "TPR"), ("fpr", "FPR"), ("accuracy", "accuracy"))


def section_of(artifact: Mapping[str, Any]) -> Mapping[str, Any] | None:
    data = artifact.get("triggers")
    return data if isinstance(data, Mapping) and isinstance(data.get("arms"), Mapping) else None


def task_ids(artifact: Mapping[str, Any]) -> set[str]:
    """The ids of the artifact's trigger tasks, from its triggers section."""
    section = section_of(artifact) or {}
    return {
        str(q.get("id"))
        for figures in (section.get("arms") or {}).values()
        if isinstance(figures, Mapping)
        for q in figures.get("queries") or ()
        if isinstance(q, Mapping)
    }


def rate_text(figure: Any) -> str:
    """`0.67 [0.21, 1]` (rate and interval), or `n/a` when no query could be judged."""
    if not isinstance(figure, Mapping) or not isinstance(figure.get("rate"), int | float):
        return "n/a"
    interval = figure.get("interval")
    shown = f"{figure['rate']:.2f}"
    if isinstance(interval, list) and len(interval) == 2:
        shown += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
    return shown


def arm_line(figures: Mapping[str, Any]) -> str:
    parts = [f"{label} {rate_text(figures.get(key))}" for key, label in FIGURES]
    errors = figures.get("errors") or 0
    return "  ".join(parts) + (f"  errors {errors}" if errors else "")


def comparison_line(data: Mapping[str, Any]) -> str | None:
    comparison = data.get("comparison")
    if not isinstance(comparison, Mapping):
        return None
    parts = []
    for key, label in FIGURES:
        delta = (comparison.get(key) or {}).get("delta")
        if isinstance(delta, int | float):
            parts.append(f"{label} {delta:+.2f}")
    policy = comparison.get("policy") or {}
    decided = f"policy {policy.get('name', '?')}: {'pass' if policy.get('passed') else 'fail'}"
    return "paired " + ", ".join(parts) + f"; {decided}"


def table_info(artifact: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, text) lines for the end-of-run table."""
    data = section_of(artifact)
    if data is None:
        return []
    head = f"{data.get('queries')} queries ({data.get('should_trigger')} should trigger)"
    lines = [("triggers", head)]
    lines += [
        ("", f"{arm} {arm_line(f)}") for arm, f in data["arms"].items() if isinstance(f, Mapping)
    ]
    if (line := comparison_line(data)) is not None:
        lines.append(("", line))
    alone = data.get("classes")
    if isinstance(alone, Mapping) and alone.get("reasoning"):
        passed = alone.get("passed")
        verdict = "not measured" if passed is None else "pass" if passed else "fail"
        lines.append(("", f"per class ({verdict}): {alone['reasoning']}"))
    lines += [("", line) for line in failures(data)[:10]]
    return lines


def markdown(artifact: Mapping[str, Any], escape: Any) -> list[str]:
    """A `### Triggers` section; `escape` is the Markdown escaper of the report."""
    data = section_of(artifact)
    if data is None:
        return []
    out = [
        "### Triggers",
        "",
        f"{data.get('queries')} queries ({data.get('should_trigger')} should trigger), "
        f"{data.get('samples')} sample(s) each; 95% intervals over queries.",
        "",
        "| Arm | TPR | FPR | Accuracy | Errors |",
        "|:--|--:|--:|--:|--:|",
    ]
    for arm, figures in data["arms"].items():
        if isinstance(figures, Mapping):
            cells = [rate_text(figures.get(k)) for k, _ in FIGURES]
            out.append(f"| {escape(arm)} | {' | '.join(cells)} | {figures.get('errors', 0)} |")
    out.append("")
    if (line := comparison_line(data)) is not None:
        out += [escape(line[0].upper() + line[1:]) + ".", ""]
    wrong = failures(data)
    if wrong:
        out += [f"- {escape(line)}" for line in wrong[:20]] + [""]
    return out


def junit_properties(artifact: Mapping[str, Any]) -> list[tuple[str, Any]]:
    data = section_of(artifact)
    if data is None:
        return []
    props: list[tuple[str, Any]] = []
    for arm, figures in data["arms"].items():
        if isinstance(figures, Mapping):
            props += [
                (f"triggers.{arm}.{key}", (figures.get(key) or {}).get("rate"))
                for key, _ in FIGURES
            ]
    comparison = data.get("comparison")
    if isinstance(comparison, Mapping):
        props.append(("triggers.accuracy_delta", (comparison.get("accuracy") or {}).get("delta")))
        props.append(("triggers.policy_passed", (comparison.get("policy") or {}).get("passed")))
    return props
